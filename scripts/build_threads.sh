#!/usr/bin/env bash
# Builds the compute worker a second time, with threads: wasm atomics and a shared memory, so
# that its kernels split their work across a pool of Web Workers (src/numerics/par.rs,
# src/worker/pool.rs). The page loads it wherever the browser has relaxed SIMD and makes a
# shared memory (src/kit/worker.rs): with the pool's threads where the page is cross-origin
# isolated (the service worker adds the headers that make it so), on one thread elsewhere (a first
# visit). Other browsers, and a threaded build that fails to start, get the single-threaded worker.
#
# Shared memory needs the standard library rebuilt with atomics, which only a nightly compiler
# does (-Z build-std); scripts/setup.sh installs the one pinned here. Usage: build_threads.sh DIST
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${1:-dist}
toolchain=$(cat scripts/nightly-toolchain)
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
target_dir=${CARGO_TARGET_DIR:-target}/threads
# +atomics: atomic instructions (and a standard library built with them). The memory must be
# asked for at the final link: shared, imported (each pool thread instantiates the module on the
# same memory), at most 4 GiB (GPT-2 medium needs more than 1), with the thread-local storage
# symbols wasm-bindgen uses to give each thread its own.
# +relaxed-simd: fused multiply-adds in the matrix products (`numerics::f4`); the page loads this
# build only where the browser validates relaxed SIMD (Chromium does; elsewhere one thread runs).
RUSTFLAGS="-C target-feature=+atomics,+bulk-memory,+mutable-globals,+simd128,+relaxed-simd" \
  cargo "+$toolchain" rustc --quiet --locked --release --target wasm32-unknown-unknown \
  --bin gpt2-worker --features threads -Z build-std=std,panic_abort --target-dir "$target_dir" -- \
  -C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=4294967296 \
  -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size \
  -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base
wasm-bindgen --target no-modules --no-typescript --out-dir "$dist" --out-name gpt2-worker-mt \
  "$target_dir/wasm32-unknown-unknown/release/gpt2-worker.wasm"
# NAMES=1 keeps the functions' names, for a profiler (bench/train-threads.mjs): a larger file.
wasm-opt -Oz ${NAMES:+-g} --enable-threads --enable-bulk-memory --enable-simd --enable-relaxed-simd --enable-mutable-globals \
  --enable-nontrapping-float-to-int --enable-sign-ext \
  "$dist/gpt2-worker-mt_bg.wasm" -o "$dist/gpt2-worker-mt_bg.wasm"
