#!/usr/bin/env bash
# What is in the page's wasm, and how big (raw and gzip -9 KiB): its sections, its code per crate
# and per module of this crate, its largest data segments, the text the build embeds in it, and
# what the page fetches instead (search.json; the prose rides in each route's static page). This
# is the page's code whole, before scripts/build_page.sh splits it; the split build in dist/, if
# there is one, follows (bench/page_split.py: what a first visit to each chapter fetches).
# Built as Trunk builds it (release profile, `wasm-bindgen --target=web`, `wasm-opt -Oz`), but
# with the name section kept (`wasm-opt -g`), so that code can be told apart by function name;
# the name section itself is left out of the "shipped" size. Then twiggy's own views (top,
# dominators, garbage) when twiggy is installed (`cargo install twiggy`).
#
#   bench/wasm_size.sh            (CARGO_TARGET_DIR, JOBS and ROWS are honoured)
#
# Writes under $CARGO_TARGET_DIR/wasm-size/ only; rerunning rebuilds what changed and prints anew.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
target=${CARGO_TARGET_DIR:-target}
out="$target/wasm-size"
rows=${ROWS:-20}
mkdir -p "$out"
cargo build --quiet --release --target wasm32-unknown-unknown --bin attention-live ${JOBS:+-j "$JOBS"}
wasm-bindgen --target=web --no-typescript --out-dir="$out/bindgen" --out-name=attention-live \
  "$target/wasm32-unknown-unknown/release/attention-live.wasm"
# wasm-opt as Trunk runs it (index.html: data-wasm-opt="z"); -g keeps the names for grouping.
wasm-opt -Oz "$out/bindgen/attention-live_bg.wasm" -o "$out/shipped.wasm"
wasm-opt -Oz -g "$out/bindgen/attention-live_bg.wasm" -o "$out/named.wasm"
# One line of the table: a label and a file's size, raw and gzip -9, in KiB.
line() {
  python3 -c 'import gzip, sys; b = open(sys.argv[2], "rb").read()
print(f"{sys.argv[1][:60]:60} {len(b) / 1024:9.1f} {len(gzip.compress(b, 9)) / 1024:9.1f}")' "$1" "$2"
}
line "the page's wasm as shipped ($(wasm-opt --version | head -1))" "$out/shipped.wasm"
line "its JS glue" "$out/bindgen/attention-live.js"
gen=$(ls -t "$target"/wasm32-unknown-unknown/release/build/attention-live-*/out/chapters_gen.rs 2>/dev/null \
  | head -1 || true)
python3 bench/wasm_size.py "$out/named.wasm" "$gen" "$rows"
search=$(dirname "$gen")/search.json
if [ -f "$search" ]; then line "fetched instead: search.json (on the search box's focus)" "$search"; fi
if command -v twiggy >/dev/null; then
  echo; echo "# twiggy top -n 15"; twiggy top -n 15 "$out/named.wasm" | cut -c1-150
  echo; echo "# twiggy dominators -d 2 -r 20"; twiggy dominators -d 2 -r 20 "$out/named.wasm" | cut -c1-150
  echo; echo "# twiggy garbage (code and data nothing reaches)"; twiggy garbage -n 5 "$out/named.wasm" | cut -c1-150
else
  echo "(twiggy is not installed: cargo install twiggy, for its top, dominators and garbage views)"
fi
if ls -d dist/page-* >/dev/null 2>&1; then echo; echo "# the split build in dist/"; python3 bench/page_split.py dist; fi
