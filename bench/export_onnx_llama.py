"""Exports a Llama-family checkpoint to ONNX with a KV cache, for ONNX Runtime Web (bench/onnx.mjs).

Run:  python bench/export_onnx_llama.py CHECKPOINT_FOLDER OUT.onnx
e.g.  python bench/export_onnx_llama.py static/models/stories-llama \
          /tmp/attention-live-test-models/onnx/stories-llama.onnx
      python bench/export_onnx_llama.py /tmp/attention-live-test-models/random-smollm2 \
          /tmp/attention-live-test-models/onnx/smollm2.onnx
Made with torch 2.15.0, transformers 5.24.0, onnx 1.23.2. The folder's config.json and model.safetensors
(any float dtype, widened to F32, as the book's engine holds them). Never committed (~540 MB for SmolLM2's shape).

One graph serves the prompt and every decoding step:
  inputs   input_ids [1, T] (int64), past_key_values.{i}.key / .value [1, KV, P, D] (F32; P = 0 for a prompt)
  outputs  logits [1, V] of the last position only (what generation and the book's analysis use),
           present.{i}.key / .value [1, KV, P + T, D]
T and P are dynamic. The model is written out here (RMSNorm, rotary embedding as Hugging Face's
rotate_half, grouped-query attention, SwiGLU) rather than traced through transformers' cache
classes, and checked against transformers' LlamaForCausalLM on the same weights before export.
"""
import json
import os
import sys

import torch
from safetensors.torch import load_file

src, out = sys.argv[1], sys.argv[2]
cfg = json.load(open(os.path.join(src, "config.json")))
theta = cfg.get("rope_theta") or cfg.get("rope_parameters", {}).get("rope_theta", 10000.0)
H, KV, L = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["num_hidden_layers"]
E = cfg["hidden_size"]
D = cfg.get("head_dim") or E // H
eps = cfg["rms_norm_eps"]
weights = {k: v.float() for k, v in load_file(os.path.join(src, "model.safetensors")).items()}


class Llama(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # Dotted names are not allowed for parameters: the file's names with "." → "_".
        self.w = torch.nn.ParameterDict({k.replace(".", "_"): torch.nn.Parameter(v, requires_grad=False)
                                         for k, v in weights.items()})
        inv = 1.0 / theta ** (torch.arange(0, D, 2, dtype=torch.float32) / D)  # [D/2]
        self.register_buffer("inv_freq", inv, persistent=False)

    def p(self, name):
        return self.w[name.replace(".", "_")]

    def norm(self, x, name):  # x: [1, T, E]
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * self.p(name)

    def forward(self, input_ids, *past):
        T, P = input_ids.shape[1], past[0].shape[2]
        x = torch.nn.functional.embedding(input_ids, self.p("model.embed_tokens.weight"))  # [1, T, E]
        pos = torch.arange(T, dtype=torch.float32) + P  # [T]: positions continue after the cache
        ang = pos[:, None] * self.inv_freq[None, :]  # [T, D/2]
        cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)  # [T, D]
        # Query t sees keys 0..P+t: key j is hidden where j > P + t.
        mask = torch.arange(P + T)[None, :] > (torch.arange(T)[:, None] + P)  # [T, P+T]
        bias = torch.zeros(mask.shape).masked_fill(mask, float("-inf"))

        def rope(z):  # z: [1, heads, T, D]; Hugging Face's rotate_half pairs i with i + D/2
            z1, z2 = z[..., : D // 2], z[..., D // 2:]
            return z * cos + torch.cat([-z2, z1], -1) * sin

        present = []
        for i in range(L):
            a = f"model.layers.{i}."
            h = self.norm(x, a + "input_layernorm.weight")
            q = (h @ self.p(a + "self_attn.q_proj.weight").T).view(1, T, H, D).transpose(1, 2)  # [1, H, T, D]
            k = (h @ self.p(a + "self_attn.k_proj.weight").T).view(1, T, KV, D).transpose(1, 2)  # [1, KV, T, D]
            v = (h @ self.p(a + "self_attn.v_proj.weight").T).view(1, T, KV, D).transpose(1, 2)
            k = torch.cat([past[2 * i], rope(k)], 2)  # [1, KV, P+T, D]
            v = torch.cat([past[2 * i + 1], v], 2)
            present += [k, v]
            # Grouped-query attention: each KV head serves H / KV query heads, side by side.
            qg = rope(q).reshape(1, KV, (H // KV) * T, D)  # [1, KV, (H/KV)·T, D]
            s = (qg @ k.transpose(2, 3)) / D ** 0.5  # [1, KV, (H/KV)·T, P+T]
            s = s.view(1, KV, H // KV, T, P + T) + bias
            att = torch.softmax(s, -1).view(1, KV, (H // KV) * T, P + T) @ v  # [1, KV, (H/KV)·T, D]
            att = att.view(1, H, T, D).transpose(1, 2).reshape(1, T, H * D)
            x = x + att @ self.p(a + "self_attn.o_proj.weight").T
            h = self.norm(x, a + "post_attention_layernorm.weight")
            gate = h @ self.p(a + "mlp.gate_proj.weight").T
            up = h @ self.p(a + "mlp.up_proj.weight").T
            x = x + (torch.nn.functional.silu(gate) * up) @ self.p(a + "mlp.down_proj.weight").T
        last = self.norm(x[:, -1], "model.norm.weight")  # [1, E]
        head = "model.embed_tokens.weight" if cfg.get("tie_word_embeddings") else "lm_head.weight"
        # (W xᵀ)ᵀ rather than x Wᵀ: the exporter folds Wᵀ into a second copy, which doubles a tied embedding.
        return ((self.p(head) @ last.T).T, *present)  # logits [1, V]


model = Llama().eval()
names = [f"past_key_values.{i}.{kv}" for i in range(L) for kv in ("key", "value")]
outs = ["logits"] + [f"present.{i}.{kv}" for i in range(L) for kv in ("key", "value")]


def empty(p):
    return [torch.zeros(1, KV, p, D) for _ in names]


# Checked against transformers on the same weights: a prompt, then one step with the cache.
with torch.no_grad():
    from transformers import LlamaConfig, LlamaForCausalLM

    ref = LlamaForCausalLM(LlamaConfig.from_pretrained(src)).eval()
    missing = ref.load_state_dict(weights, strict=False).missing_keys
    assert set(missing) <= {"lm_head.weight"}, missing
    ref.tie_weights()
    ids = torch.tensor([[1, 5, 9, 2, 7, 3]])
    want = ref(ids).logits
    got, *cache = model(ids[:, :5], *empty(0))
    assert torch.allclose(got, want[:, 4], atol=1e-3, rtol=1e-3), (got - want[:, 4]).abs().max()
    got, *_ = model(ids[:, 5:], *cache)
    assert torch.allclose(got, want[:, 5], atol=1e-3, rtol=1e-3), (got - want[:, 5]).abs().max()
    print("matches transformers' LlamaForCausalLM")

os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
axes = {"input_ids": {1: "T"}, **{n: {2: "P"} for n in names}, **{n: {2: "P+T"} for n in outs[1:]}}
# The TorchScript exporter: the cache's length is 0 for a prompt, which torch.export's dynamic dimensions refuse.
torch.onnx.export(model, (torch.zeros((1, 4), dtype=torch.long), *empty(3)), out, input_names=["input_ids"] + names,
                  output_names=outs, dynamic_axes=axes, opset_version=18, dynamo=False)
print("wrote", out)
