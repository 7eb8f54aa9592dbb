#!/usr/bin/env bash
# Builds the size probe for wasm32 (release, opt-level z, LTO, as the site) once per feature and
# prints each wasm's bytes and gzip -9 bytes, and what it adds to the baseline; then the same after
# `wasm-opt -Oz`, as Trunk runs it (the repository's node_modules/.bin/wasm-opt).
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
out="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/tokenizer_size.wasm"
base=0
opt_base=0
wasm_opt=../../node_modules/.bin/wasm-opt
for feature in baseline tiktoken own hf; do
  if [ "$feature" = baseline ]; then flags=(); else flags=(--features "$feature"); fi
  cargo build --quiet --release --target wasm32-unknown-unknown "${flags[@]}"
  raw=$(stat -c %s "$out")
  gz=$(gzip -9 -c "$out" | wc -c)
  [ "$feature" = baseline ] && base=$gz
  printf '%-9s wasm %8d B   gzip %8d B   gzip added %+8d B' "$feature" "$raw" "$gz" $((gz - base))
  if [ -x "$wasm_opt" ]; then
    "$wasm_opt" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-mutable-globals "$out" -o "$out.opt"
    opt=$(gzip -9 -c "$out.opt" | wc -c)
    [ "$feature" = baseline ] && opt_base=$opt
    printf '   after wasm-opt: gzip %8d B, added %+8d B' "$opt" $((opt - opt_base))
  fi
  echo
done
