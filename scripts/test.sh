#!/usr/bin/env bash
# Runs every test: native (cargo test), then the real page in headless Chromium (Playwright)
# against dist/ served by a plain static server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
# The Vulkan loader (lavapipe, for the GPU tests) complains without a runtime directory.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg-runtime-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
echo "== format and lints (both targets, warnings are errors)"
cargo fmt --check
cargo clippy --locked --all-targets --quiet -- -D warnings
# The page as scripts/build_page.sh builds it: each demo's view a split point.
cargo clippy --locked --all-targets --quiet --target wasm32-unknown-unknown --features split -- -D warnings
# The compute worker's threaded build (scripts/build_threads.sh) adds its thread pool.
cargo clippy --locked --lib --quiet --target wasm32-unknown-unknown --features threads -- -D warnings
echo "== native tests"
# The GPU tests run on lavapipe (mesa-vulkan-drivers, which setup.sh installs): here a missing
# adapter, or one without shader-f16, fails them instead of letting them pass by skipping.
REQUIRE_GPU=f16 cargo test --locked
cargo run --locked --quiet --example gpu_info
echo "== build"
scripts/build.sh
echo "== browser tests"
# The quick tier, then the long one (tests/browser/README.md); one run each, as node --test sorts its files.
for tier in tests/browser tests/browser/long; do node --test --test-concurrency=1 "$tier"/*.test.mjs; done
