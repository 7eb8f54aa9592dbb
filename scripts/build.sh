#!/usr/bin/env bash
# Builds the static site into dist/ (release, offline), then writes a copy of index.html at
# every route (/<chapter>/, /embed/) so that deep links work on a plain static file server
# with no single-page-app fallback.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
trunk build --release --offline
for slug in $(grep -v '^#' chapters/ORDER | cut -d'|' -f1 | tr -d ' '); do
  mkdir -p "dist/$slug"
  cp dist/index.html "dist/$slug/index.html"
done
mkdir -p dist/embed
cp dist/index.html dist/embed/index.html
for wasm in dist/*.wasm; do
  printf '[build] %s: %s bytes, %s bytes gzipped\n' "$wasm" "$(stat -c %s "$wasm")" "$(gzip -9c "$wasm" | wc -c)"
done
