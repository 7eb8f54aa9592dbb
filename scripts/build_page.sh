#!/usr/bin/env bash
# Builds the book's page (the app's wasm) into DIST/page-<hash>/, split so that a first visit
# fetches only what every page needs: each demo's view is a split point (feature `split`,
# src/demos/mod.rs), and `wasm-split-cli` (wasm_split_cli_support, the splitter Leptos's own
# build tool uses) moves the code only one chapter's demos reach into `split_<chapter>.wasm`, and
# code that several chapters share, but the main module does not use, into `chunk_<n>.wasm`
# (scripts/merge_chunks.py then merges the widely shared and small ones). The page fetches
# a chapter's files the first time one of its demos is shown (`__wasm_split.js` loads them).
# examples/site_pages.rs then adds the start-up script to every page and the chunks' integrity
# to the loader (`chapters::security`). Usage: build_page.sh DIST
#
# The folder's name is a hash of everything in it, so a new build is new URLs and an old page
# never mixes its files with a new one's. scripts/setup.sh installs wasm-split-cli.
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${1:-dist}
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
target=${CARGO_TARGET_DIR:-target}
work="$target/page-split"
rm -rf "$work"
mkdir -p "$work/split" "$work/out"
# --emit-relocs: the splitter follows the linker's relocations to see what each function uses.
cargo rustc --quiet --locked --release --target wasm32-unknown-unknown --bin attention-live --features split -- \
  -C link-arg=--emit-relocs
wasm-split-cli --out-name attention-live "$target/wasm32-unknown-unknown/release/attention-live.wasm" "$work/split"
# wasm-bindgen on the main module only, keeping the exports the chunks link against.
wasm-bindgen --target web --keep-lld-exports --no-demangle --no-typescript --out-dir "$work/out" \
  --out-name attention-live "$work/split/attention-live.wasm"
rm "$work/split/attention-live.wasm"
cp "$work/split/__wasm_split.js" "$work/out/"
# Each module optimised for size, as Trunk optimised the single one (two at a time), without the
# custom sections the browser does not read.
opt="--enable-bulk-memory --enable-nontrapping-float-to-int --strip-producers --strip-target-features"
(cd "$work" && ls split/*.wasm) | sed 's|^split/||' \
  | xargs -P 2 -I{} wasm-opt -Oz $opt "$work/split/{}" -o "$work/out/{}" 2>&1 \
  | { grep -v "unknown name subsection" || true; }
wasm-opt -Oz $opt "$work/out/attention-live_bg.wasm" \
  -o "$work/out/attention-live_bg.wasm"
# The chunks most chapters share, and the small ones, merged into one (a few files a chapter, not dozens).
python3 scripts/merge_chunks.py "$work/out" 2>&1 | { grep -v "unknown name subsection" || true; }
hash=$(cd "$work/out" && ls | sort | xargs cat | sha256sum | cut -c1-16)
rm -rf "$dist"/page-*
mkdir -p "$dist/page-$hash"
cp "$work/out"/* "$dist/page-$hash/"
printf '[build] the page: %s files in %s/page-%s; main wasm %s KiB gzipped, chunks %s KiB (gzipped together)\n' \
  "$(ls "$dist/page-$hash" | wc -l)" "$dist" "$hash" \
  "$(( $(gzip -9c "$dist/page-$hash/attention-live_bg.wasm" | wc -c) / 1024 ))" \
  "$(( $(cat "$dist/page-$hash"/split_*.wasm "$dist/page-$hash"/chunk_*.wasm | gzip -9c | wc -c) / 1024 ))"
