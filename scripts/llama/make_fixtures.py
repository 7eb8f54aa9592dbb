"""Reference fixtures for the Llama-family engine, made by Hugging Face transformers, fully offline.

Run:  python scripts/llama/make_fixtures.py      (writes tests/fixtures/llama/)
Made with: Python 3.11, torch 2.15.0 (CPU), transformers 5.24.0, safetensors 0.8.0, seeds below.

Small random `LlamaForCausalLM` models (initializer_range 0.2, so attention is far from uniform and
greedy decoding does not repeat one token), eager attention (sdpa returns no weights):
- `gqa`: hidden 48, 6 heads of 8 sharing 2 KV heads (3 query heads per group), 2 layers, MLP 96,
  vocab 300, rope_theta 10000, tied lm_head, F32;
- `mqa`: hidden 32, 4 heads of head_dim 16 set explicitly (4 · 16 = 64 ≠ 32), 1 KV head
  (multi-query), 3 layers, MLP 64, rope_theta 500000, rms_norm_eps 1e-5, untied lm_head, F32;
- `gqa_bf16`: `gqa`'s model saved in BF16; its reference runs on the BF16-rounded weights
  widened to F32, and `f32_logits` are `gqa`'s own (how far the rounding moves them).
Each folder: config.json, model.safetensors, reference.json with the prompt's ids, the logits of
every position, every layer's attention weights (heads, T, T), the residual stream after the
embeddings and after each layer (forward hooks), logits with heads knocked out (their slice of
the attention output zeroed before o_proj, by a forward pre-hook), and greedy decoding with the
cache: for each of `DECODE` steps the token fed and the logits that came out.
Plus `rope.json`: `LlamaRotaryEmbedding`'s cos and sin (first half of each row; the second
repeats it) at positions up to 100,000 for SmolLM2's head_dim 64 and rope_theta 100,000, and for
head_dim 16 at rope_theta 500,000: where an f32 angle has lost digits, the engine must lose the same.
"""
import json
import os
import shutil

import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "fixtures", "llama")
PROMPT = 9
DECODE = 3
torch.set_num_threads(1)


def r(x, nd=7):
    """Round for a compact JSON file; 7 significant digits keep errors far below 1e-4."""
    return [float(f"{v:.{nd}g}") for v in x.reshape(-1).tolist()]


def reference(model, cfg, ids, ablate):
    out = {"tokens": ids[0].tolist()}
    with torch.no_grad():
        hidden = []
        hooks = [model.model.layers[0].register_forward_pre_hook(lambda m, a, kw: hidden.append(a[0] if a else kw["hidden_states"]), with_kwargs=True)]
        for layer in model.model.layers:
            hooks.append(layer.register_forward_hook(lambda m, i, o: hidden.append(o[0] if isinstance(o, tuple) else o)))
        res = model(ids, output_attentions=True)
        for h in hooks:
            h.remove()
        assert len(res.attentions) == cfg.num_hidden_layers, "eager attention returns the weights"
        out["logits"] = r(res.logits[0])
        out["attentions"] = [r(a[0]) for a in res.attentions]
        out["hidden_states"] = [r(h[0]) for h in hidden]

        # Knock-outs: zero the heads' slices of o_proj's input.
        d = cfg.head_dim
        hooks = []
        for layer in range(cfg.num_hidden_layers):
            heads = [hh for (ll, hh) in ablate if ll == layer]
            if heads:
                def pre(mod, args, heads=heads):
                    x = args[0].clone()
                    for hh in heads:
                        x[..., hh * d:(hh + 1) * d] = 0
                    return (x,)
                hooks.append(model.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(pre))
        out["ablate"] = [list(p) for p in ablate]
        out["ablated_logits"] = r(model(ids).logits[0])
        for h in hooks:
            h.remove()

        # Greedy decoding with the cache: the prompt, then one token per step.
        res = model(ids, use_cache=True)
        past, logits = res.past_key_values, res.logits[0, -1]
        steps = []
        for _ in range(DECODE):
            nxt = int(torch.argmax(logits))
            res = model(torch.tensor([[nxt]]), past_key_values=past, use_cache=True)
            past, logits = res.past_key_values, res.logits[0, -1]
            steps.append({"token": nxt, "logits": r(logits)})
        out["decode"] = steps
    return out


def make(name, seed, cfg_kwargs, dtype=None, f32_logits=None):
    torch.manual_seed(seed)
    cfg = LlamaConfig(initializer_range=0.2, **cfg_kwargs)
    cfg._attn_implementation = "eager"  # "sdpa" returns an empty tuple of attentions
    model = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # RMSNorm gains start at 1; random ones test that they are applied
        for n, p in model.named_parameters():
            if n.endswith("norm.weight"):
                p.copy_(1 + 0.3 * torch.randn_like(p))
    if dtype is not None:
        with torch.no_grad():  # the reference runs on the rounded weights, widened to F32
            for p in model.parameters():
                p.copy_(p.to(dtype).float())
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    saved = model if dtype is None else LlamaForCausalLM(cfg).to(dtype)
    if dtype is not None:
        saved.load_state_dict({k: v.to(dtype) for k, v in model.state_dict().items()})
    saved.save_pretrained(folder, safe_serialization=True)
    for extra in ("generation_config.json",):
        p = os.path.join(folder, extra)
        if os.path.exists(p):
            os.remove(p)
    g = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, cfg.vocab_size, (1, PROMPT), generator=g)
    ref = reference(model, cfg, ids, [(0, 1), (cfg.num_hidden_layers - 1, cfg.num_attention_heads - 1)])
    if f32_logits is not None:
        ref["f32_logits"] = f32_logits
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"))
    return ref


gqa = dict(vocab_size=300, hidden_size=48, intermediate_size=96, num_hidden_layers=2, num_attention_heads=6,
           num_key_value_heads=2, rope_theta=10000.0, tie_word_embeddings=True, max_position_embeddings=64)
ref = make("gqa", 1234, gqa)
make("mqa", 4323, dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                       num_attention_heads=4, num_key_value_heads=1, head_dim=16, rope_theta=500000.0,
                       rms_norm_eps=1e-5, tie_word_embeddings=False, max_position_embeddings=64))
make("gqa_bf16", 1234, gqa, dtype=torch.bfloat16, f32_logits=ref["logits"])


def rope_tables():
    positions = [0, 1, 2, 7, 100, 1000, 4095, 8191, 100000]
    tables = []
    for head_dim, theta in [(64, 100000.0), (16, 500000.0)]:
        cfg = LlamaConfig(hidden_size=head_dim * 2, num_attention_heads=2, head_dim=head_dim, rope_theta=theta)
        emb = LlamaRotaryEmbedding(cfg)
        x = torch.zeros(1, len(positions), head_dim)
        cos, sin = emb(x, torch.tensor([positions]))
        half = head_dim // 2
        assert torch.equal(cos[0, :, :half], cos[0, :, half:])
        tables.append({"head_dim": head_dim, "rope_theta": theta, "positions": positions,
                       "cos": r(cos[0, :, :half], 9), "sin": r(sin[0, :, :half], 9)})
    with open(os.path.join(OUT, "rope.json"), "w") as f:
        json.dump(tables, f, separators=(",", ":"))


rope_tables()
