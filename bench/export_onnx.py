"""Exports the benchmark's random-init GPT-2 small to ONNX, for ONNX Runtime Web (bench/onnx.mjs).

Run:  python bench/export_onnx.py /tmp/attention-live-test-models/onnx
Made with torch 2.15.0, transformers 5.23.0, onnx 1.23.2. GPT2Config() with seed 0, F32,
logits for a whole prompt (no KV cache), dynamic sequence length. Never committed (~500 MB).
"""
import os
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/attention-live-test-models/onnx"
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
cfg = GPT2Config()
cfg._attn_implementation = "eager"
cfg.use_cache = False
model = GPT2LMHeadModel(cfg).eval()


class Logits(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids):
        return self.m(input_ids, use_cache=False).logits


ids = torch.zeros((1, 16), dtype=torch.long)
torch.onnx.export(Logits(model), (ids,), f"{out}/gpt2.onnx", input_names=["input_ids"], output_names=["logits"],
                  dynamic_shapes={"input_ids": {1: torch.export.Dim("T", min=2, max=1024)}}, opset_version=18, dynamo=True, external_data=False)
print("wrote", out)
