"""Checks that Hugging Face `transformers` loads the training lab's exported checkpoint unchanged
and computes what the lab's engine computed: the attention of every head on the probe and the loss.

Run (torch and transformers installed; not part of CI):
    for v in "learned" "sinusoidal mlp" "none mlp"; do
      cargo run --quiet --example write_trained_gpt2 -- /tmp/lab-export $v
      python scripts/train/check_export.py /tmp/lab-export
    done
Made with Python 3.11.7, torch 2.15.0, transformers 5.23.0.
"""
import json
import sys

import torch
from transformers import GPT2LMHeadModel

folder = sys.argv[1] if len(sys.argv) > 1 else "/tmp/trained-gpt2"
model = GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager").eval()
expected = json.load(open(f"{folder}/expected.json"))
ids = torch.tensor([expected["ids"]])
with torch.no_grad():
    out = model(ids, labels=ids, output_attentions=True)
# (L, 1, H, T, T) -> flat, layer by layer, as the engine's (L, B, H, T, T)
ours = torch.tensor(expected["attention"])
theirs = torch.cat([a.flatten() for a in out.attentions])
att_err = (ours - theirs).abs().max().item()
loss_err = abs(out.loss.item() - expected["loss"])
print(f"{folder}: {len(out.attentions)} layers; attention max |diff| {att_err:.2e}; "
      f"loss {out.loss.item():.6f} vs {expected['loss']:.6f} (|diff| {loss_err:.2e})")
assert att_err < 1e-5 and loss_err < 1e-5 * max(1.0, abs(expected["loss"])), "the export does not match"
