#!/usr/bin/env bash
# Builds the size probe for wasm32 (release, opt-level z, LTO, as the site) once per feature and
# prints each wasm's bytes and gzip -9 bytes, and what it adds to the baseline.
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
out="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/tokenizer_size.wasm"
base=0
for feature in baseline tiktoken own hf; do
  if [ "$feature" = baseline ]; then flags=(); else flags=(--features "$feature"); fi
  cargo build --quiet --release --target wasm32-unknown-unknown "${flags[@]}"
  raw=$(stat -c %s "$out")
  gz=$(gzip -9 -c "$out" | wc -c)
  [ "$feature" = baseline ] && base=$gz
  printf '%-9s wasm %8d B   gzip %8d B   gzip added %+8d B\n' "$feature" "$raw" "$gz" $((gz - base))
done
