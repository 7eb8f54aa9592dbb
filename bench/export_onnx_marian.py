"""Exports a Marian checkpoint to ONNX for ONNX Runtime Web (bench/onnx_marian.mjs): the peer of
the book's translation engine in bench/vs-onnx.mjs (BENCH_FAMILY=marian).

Run:  python bench/export_onnx_marian.py CHECKPOINT_FOLDER OUT_FOLDER
e.g.  python bench/export_onnx_marian.py static/models/dates-marian /tmp/attention-live-test-models/onnx/dates
      python bench/export_onnx_marian.py /tmp/attention-live-test-marian/random-opus-mt-en-de \
          /tmp/attention-live-test-models/onnx/opus
Made with torch 2.15.0, transformers 5.24.0, onnx 1.23.2, onnxscript 0.7.2 (pip install onnx onnxscript).
The folder's config.json and model.safetensors (widened to F32, as the book's engine holds them).
Never committed (about 300 MB for OPUS-MT's shape).

Two graphs, the way an encoder-decoder runs in ONNX Runtime (as optimum's and transformers.js's
exports split it), with the cross-attention's keys and values computed once per source, as the
book's engine does:
  encoder.onnx  input_ids [1, S] (int64) -> cross.{l}.key / .value [1, H, S, D] for each decoder layer
  decoder.onnx  input_ids [B, 1], past.{l}.key / .value [B, H, P, D] (P = 0 at the first step),
                cross.{l}.key / .value [B, H, S, D] -> logits [B, V] (final_logits_bias added),
                present.{l}.key / .value [B, H, P + 1, D]
B (the beams), P and S are dynamic; meta.json beside them holds the decoder's start token and `</s>`. The decoder step is written out here (post-norm blocks, Marian's
sinusoidal positions taken from transformers' own table) rather than traced through transformers'
cache classes, and checked against MarianMTModel's logits on the same weights before export.
"""
import json
import os
import sys

import torch
from transformers import MarianMTModel

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
m = MarianMTModel.from_pretrained(src, dtype=torch.float32, attn_implementation="eager").eval()
cfg = m.config
enc, dec = m.model.encoder, m.model.decoder
L, H, E = cfg.decoder_layers, cfg.decoder_attention_heads, cfg.d_model
D = E // H
scale = E ** 0.5 if cfg.scale_embedding else 1.0


def heads(x):  # [B, T, E] -> [B, H, T, D]
    return x.view(x.shape[0], x.shape[1], H, D).transpose(1, 2)


def attend(q, k, v):  # [B, H, 1, D] over [B, H, S, D] -> [B, 1, E]
    w = torch.softmax(q @ k.transpose(-1, -2) / D ** 0.5, dim=-1)
    y = w @ v
    return y.transpose(1, 2).reshape(q.shape[0], 1, E)


class Encoder(torch.nn.Module):
    def forward(self, input_ids):
        h = enc(input_ids=input_ids).last_hidden_state  # [1, S, E]
        kv = []
        for layer in dec.layers:
            kv += [heads(layer.encoder_attn.k_proj(h)), heads(layer.encoder_attn.v_proj(h))]
        return tuple(kv)


class Step(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("positions", dec.embed_positions.weight.detach().clone(), persistent=False)

    def forward(self, input_ids, *kv):  # kv: past k, v of each layer, then cross k, v of each layer
        P = kv[0].shape[2]
        x = torch.nn.functional.embedding(input_ids, dec.embed_tokens.weight) * scale  # [B, 1, E]
        x = x + self.positions.narrow(0, P, 1)[None]
        present = []
        for i, layer in enumerate(dec.layers):
            a = layer.self_attn
            k = torch.cat([kv[2 * i], heads(a.k_proj(x))], dim=2)  # [B, H, P + 1, D]
            v = torch.cat([kv[2 * i + 1], heads(a.v_proj(x))], dim=2)
            present += [k, v]
            # The new token sees every position so far: no mask for one query.
            x = layer.self_attn_layer_norm(x + a.out_proj(attend(heads(a.q_proj(x)), k, v)))
            c = layer.encoder_attn
            ck, cv = kv[2 * L + 2 * i], kv[2 * L + 2 * i + 1]
            x = layer.encoder_attn_layer_norm(x + c.out_proj(attend(heads(c.q_proj(x)), ck, cv)))
            x = layer.final_layer_norm(x + layer.fc2(layer.activation_fn(layer.fc1(x))))
        logits = m.lm_head(x)[:, 0, :] + m.final_logits_bias  # [B, V]
        return (logits, *present)


encoder, step = Encoder().eval(), Step().eval()
source = torch.tensor([[5 + (i * 7) % (cfg.vocab_size - 10) for i in range(12)] + [cfg.eos_token_id]])
target = [cfg.decoder_start_token_id] + [7 + (i * 13) % (cfg.vocab_size - 10) for i in range(5)]
with torch.no_grad():
    want = m(input_ids=source, decoder_input_ids=torch.tensor([target])).logits[0]  # [T, V]
    cross = encoder(source)
    past = [torch.zeros(1, H, 0, D) for _ in range(2 * L)]
    for t, tok in enumerate(target):
        logits, *past = step(torch.tensor([[tok]]), *past, *cross)
        err = (logits[0] - want[t]).abs().max().item()
        assert err < 1e-4, f"step {t}: {err}"
print("the written-out decoder matches MarianMTModel")

S, B, Pd = torch.export.Dim("S", min=2, max=cfg.max_position_embeddings), torch.export.Dim("B", min=1, max=16), \
    torch.export.Dim("P", min=0, max=cfg.max_position_embeddings - 1)
names = [f"cross.{i}.{kv}" for i in range(L) for kv in ("key", "value")]
torch.onnx.export(encoder, (source,), f"{out}/encoder.onnx", input_names=["input_ids"], output_names=names,
                  dynamic_shapes={"input_ids": {1: S}}, opset_version=18, dynamo=True, external_data=False)
past_names = [f"past.{i}.{kv}" for i in range(L) for kv in ("key", "value")]
present_names = [f"present.{i}.{kv}" for i in range(L) for kv in ("key", "value")]
ids = torch.tensor([[target[0]], [target[0]]])
past = tuple(torch.zeros(2, H, 1, D) for _ in range(2 * L))
cross2 = tuple(c.expand(2, -1, -1, -1).contiguous() for c in cross)
shapes = {"input_ids": {0: B}, "kv": tuple([{0: B, 2: Pd}] * (2 * L) + [{0: B, 2: S}] * (2 * L))}
torch.onnx.export(step, (ids, *past, *cross2), f"{out}/decoder.onnx", input_names=["input_ids", *past_names, *names],
                  output_names=["logits", *present_names], dynamic_shapes=shapes, opset_version=18, dynamo=True,
                  external_data=False)
with open(f"{out}/meta.json", "w") as f:
    json.dump({"decoder_start_token_id": cfg.decoder_start_token_id, "eos_token_id": cfg.eos_token_id}, f)
print("wrote", out)
