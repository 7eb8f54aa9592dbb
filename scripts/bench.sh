#!/usr/bin/env bash
# Benchmarks (figures, not pass/fail): builds the release site, then measures it in headless
# Chromium. See README.md, "Performance".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
node bench/latency.mjs
node bench/gpt2.mjs
# ONNX Runtime Web on the same model, back to back with ours (needs the ONNX export: python bench/export_onnx.py)
if [ -f /tmp/attention-live-test-models/onnx/gpt2.onnx ]; then
  [ -d node_modules/onnxruntime-web ] || npm install --no-save onnxruntime-web@1.30.0
  node bench/vs-onnx.mjs
fi
# The Llama family against ONNX Runtime Web (needs its exports: python bench/export_onnx_llama.py)
onnx=/tmp/attention-live-test-models/onnx
if [ -f $onnx/smollm2.onnx ] && [ -f $onnx/stories-llama.onnx ]; then
  [ -d node_modules/onnxruntime-web ] || npm install --no-save onnxruntime-web@1.30.0
  BENCH_FAMILY=llama ROUNDS=3 node bench/vs-onnx.mjs
  BENCH_FAMILY=llama THREADS=2 node bench/vs-onnx.mjs
fi
cargo run --profile native --quiet --example gpt2_bench
cargo run --profile native --quiet --example llama_bench
cargo run --profile native --quiet --example marian_bench
# The GPU backend: natively through wgpu (lavapipe here), and the chapter on WebGPU in Chromium
# (SwiftShader here: about 9 minutes on 2 cores).
mkdir -p -m 700 "${XDG_RUNTIME_DIR:=/tmp/xdg-runtime-$(id -u)}"; export XDG_RUNTIME_DIR
cargo run --profile native --quiet --example gpu_bench
BENCH_BACKEND=webgpu node bench/gpt2.mjs
