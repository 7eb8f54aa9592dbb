#!/usr/bin/env bash
# Builds the static site into dist/ (release, offline; the threaded worker's build fetches the
# standard library's dependencies once): Trunk the stylesheet, static files and compute worker,
# scripts/build_page.sh the app's wasm, split by chapter. Then it writes each route's own
# index.html (/, /<chapter>/, the reference pages, /embed/) and 404.html, so that deep links
# work on a plain static file server with no single-page-app fallback, and each page has its
# own title, description, Open Graph tags and summary for link previews
# (examples/site_pages.rs; set SITE_URL=https://… to give previews absolute URLs and a picture).
# Then pictures of every demo for the demo index (scripts/thumbs.mjs;
# skipped with THUMBS=0, and the index shows live previews where a picture is missing).
# Last, the service worker's list of every file to keep for offline reading, with a version
# (written into dist/sw.js and dist/offline.json by examples/site_pages.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
trunk build --release --offline
# The page's app, split into a main wasm and a chunk per chapter (Trunk builds the rest).
scripts/build_page.sh dist
# The compute worker again, with threads and relaxed SIMD (loaded where the browser has both).
scripts/build_threads.sh dist
cargo run --quiet --locked --example site_pages -- dist
if [ "${THUMBS:-1}" != 0 ] && [ -f scripts/thumbs.mjs ]; then
  node scripts/thumbs.mjs dist || echo "[build] demo thumbnails not made (the demo index shows live previews instead)"
  # The service worker's list again, with the pictures (static/sw.js, src/chapters/offline.rs).
  cargo run --quiet --locked --example site_pages -- dist precache
fi
# A wasm the browser would refuse (a build racing another over the same target folder can leave
# one) stops the build here rather than as a blank page.
# (Node's V8 validates the threaded build's relaxed SIMD only when asked to, where it is not yet the default.)
relaxed=$(node --experimental-wasm-relaxed-simd -e 0 2>/dev/null && echo --experimental-wasm-relaxed-simd || true)
node $relaxed -e 'const fs = require("fs");
  for (const f of process.argv.slice(1)) if (!WebAssembly.validate(fs.readFileSync(f))) { console.error(`[build] ${f} is not valid WebAssembly: build again`); process.exit(1); }' dist/*.wasm dist/page-*/*.wasm
for wasm in dist/*.wasm dist/page-*/attention-live_bg.wasm; do
  printf '[build] %s: %s bytes, %s bytes gzipped\n' "$wasm" "$(stat -c %s "$wasm")" "$(gzip -9c "$wasm" | wc -c)"
done
