"""Exports a ViT checkpoint to ONNX for ONNX Runtime Web (bench/onnx_vit.mjs): the peer of the
book's Vision Transformer engine in bench/vs-onnx.mjs (BENCH_FAMILY=vit).

Run:  python bench/export_onnx_vit.py CHECKPOINT_FOLDER OUT_FOLDER
e.g.  python bench/export_onnx_vit.py static/models/shapes-vit /tmp/attention-live-test-models/onnx/shapes-vit
      python bench/export_onnx_vit.py /tmp/attention-live-test-vit/random-deit-tiny \
          /tmp/attention-live-test-models/onnx/deit-tiny
(the second folder is written by tests/browser/long/vision.test.mjs). Made with torch 2.15.0,
transformers 5.24.0, onnx 1.23.2, onnxscript 0.7.2. Never committed.

One graph, model.onnx: pixel_values [1, 3, S, S] (float32) -> logits [1, classes] and
attentions [L, 1, H, N, N], every layer's attention weights, as the book's engine returns them for
the page's maps (the same work on both sides). Checked against ViTForImageClassification's own
outputs before export.
"""
import os
import sys

import torch
from transformers import ViTForImageClassification

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
m = ViTForImageClassification.from_pretrained(src, dtype=torch.float32, attn_implementation="eager").eval()


class WithAttentions(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, pixel_values):
        o = self.m(pixel_values=pixel_values, output_attentions=True)
        return o.logits, torch.stack(o.attentions)


w = WithAttentions(m).eval()
s = m.config.image_size
x = torch.randn(1, 3, s, s, generator=torch.Generator().manual_seed(0))
with torch.no_grad():
    logits, att = w(x)
    ref = m(pixel_values=x, output_attentions=True)
    assert torch.allclose(logits, ref.logits) and torch.allclose(att[-1], ref.attentions[-1])
torch.onnx.export(w, (x,), f"{out}/model.onnx", input_names=["pixel_values"], output_names=["logits", "attentions"],
                  opset_version=18, dynamo=True, external_data=False)
print("wrote", out, "logits", tuple(logits.shape), "attentions", tuple(att.shape))
