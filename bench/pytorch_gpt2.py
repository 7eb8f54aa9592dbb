"""PyTorch reference timings for the same shapes as examples/gpt2_bench.rs, on this CPU.

Run:  python bench/pytorch_gpt2.py        (needs torch + transformers; not part of CI)
Made with torch 2.15.0, transformers 5.23.0. Random-init GPT-2 small (GPT2Config(), seed 0),
eager attention, float32, one thread (as the browser's worker), no autograd.
Prints: prompt latency at 16 and 128 tokens (median of 5) and greedy decoding tokens/s with
the KV cache over 32 steps after a 16-token prompt.
"""
import statistics
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.set_num_threads(1)
torch.manual_seed(0)
cfg = GPT2Config()
cfg._attn_implementation = "eager"
model = GPT2LMHeadModel(cfg).eval()

with torch.inference_mode():
    row = "| PyTorch eager, 1 thread, random GPT-2 124M (F32) |"
    for t in (16, 128):
        ids = torch.tensor([[(i * 7919) % 50000 for i in range(t)]])
        runs = []
        for _ in range(5):
            t0 = time.perf_counter()
            model(ids, use_cache=False)
            runs.append((time.perf_counter() - t0) * 1e3)
        row += f" {statistics.median(runs):.1f} ms |"
    out = model(torch.full((1, 16), 464), use_cache=True)
    past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
    t0 = time.perf_counter()
    for _ in range(32):
        out = model(nxt, past_key_values=past, use_cache=True)
        past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
    row += f" {32 / (time.perf_counter() - t0):.1f} |"
    print("| model | prompt 16 tok | prompt 128 tok | generate tok/s (KV cache) |")
    print("|---|---|---|---|")
    print(row)
