"""PyTorch reference timings for the same shapes as examples/gpt2_bench.rs, on this CPU, or
on a CUDA GPU beside the native wgpu benchmark (examples/gpu_bench.rs).

Run:  python bench/pytorch_gpt2.py                          (CPU, one thread)
      python bench/pytorch_gpt2.py --device cuda [--half]   (a CUDA GPU; --half: float16)
(needs torch + transformers; not part of CI)
Made with torch 2.15.0, transformers 5.23.0. Random-init GPT-2 small (GPT2Config(), seed 0),
eager attention, float32, one thread on the CPU (as the browser's worker), no autograd.
Prints: prompt latency at 16 and 128 tokens (median of 5) and greedy decoding tokens/s with
the KV cache over 32 steps after a 16-token prompt. On CUDA each timing waits for the GPU
(torch.cuda.synchronize), after a warm-up run of each shape.
"""
import argparse
import statistics
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

args = argparse.ArgumentParser()
args.add_argument("--device", default="cpu", help="cpu or cuda")
args.add_argument("--half", action="store_true", help="float16 weights and activations")
args = args.parse_args()
dev = torch.device(args.device)
dtype = torch.float16 if args.half else torch.float32

torch.set_num_threads(1)
torch.manual_seed(0)
cfg = GPT2Config()
cfg._attn_implementation = "eager"
model = GPT2LMHeadModel(cfg).eval().to(device=dev, dtype=dtype)


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize()


with torch.inference_mode():
    where = "1 thread" if dev.type == "cpu" else torch.cuda.get_device_name(dev)
    row = f"| PyTorch eager, {where}, random GPT-2 124M ({'F16' if args.half else 'F32'}) |"
    for t in (16, 128):
        ids = torch.tensor([[(i * 7919) % 50000 for i in range(t)]], device=dev)
        model(ids, use_cache=False)  # warm-up (CUDA kernels, allocator)
        runs = []
        for _ in range(5):
            sync()
            t0 = time.perf_counter()
            model(ids, use_cache=False)
            sync()
            runs.append((time.perf_counter() - t0) * 1e3)
        row += f" {statistics.median(runs):.1f} ms |"
    out = model(torch.full((1, 16), 464, device=dev), use_cache=True)
    past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
    sync()
    t0 = time.perf_counter()
    for _ in range(32):
        out = model(nxt, past_key_values=past, use_cache=True)
        # The token is read on the host each step, as ours is (the sampler runs there).
        past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1).cpu().to(dev)
    sync()
    row += f" {32 / (time.perf_counter() - t0):.1f} |"
    print("| model | prompt 16 tok | prompt 128 tok | generate tok/s (KV cache) |")
    print("|---|---|---|---|")
    print(row)
