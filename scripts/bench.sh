#!/usr/bin/env bash
# Benchmarks (figures, not pass/fail): builds the release site, then measures it in headless
# Chromium. See README.md, "Performance".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
node bench/latency.mjs
node bench/gpt2.mjs
cargo run --profile native --quiet --example gpt2_bench
