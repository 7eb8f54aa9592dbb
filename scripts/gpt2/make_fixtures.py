"""Reference fixtures for the GPT-2 engine, made by Hugging Face transformers, fully offline.

Run:  python scripts/gpt2/make_fixtures.py      (writes tests/fixtures/gpt2/)
Made with: Python 3.11, torch 2.15.0 (CPU), transformers 5.23.0, safetensors 0.8.0, seeds below.

Two small random GPT-2 models (initializer_range 0.3, so greedy decoding does not repeat one token) with different layer / head / width counts:
- `a`: n_layer=2, n_head=2, n_embd=32, saved by `save_pretrained` (F32, `transformer.` prefix);
- `b`: n_layer=3, n_head=4, n_embd=48, n_inner=96, saved the way the public checkpoint is
  (no prefix, `h.N.attn.bias` buffers present) in F16; its reference runs on the F16-rounded
  weights widened to F32.
For each: logits for every position, every layer's attention weights, the residual stream after
the embeddings and after each block, logits with heads ablated (their slice of the attention
output zeroed before c_proj, by a forward pre-hook), and a 10-token greedy continuation.
Plus `tokenizer.json`: GPT2TokenizerFast ids for edge-case strings (vocab.json and merges.txt are
the encoder.json and vocab.bpe that the tiktoken-rs crate ships).
"""
import glob
import json
import os
import shutil
import tempfile

import torch
from safetensors.torch import save_file
from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "fixtures", "gpt2")
torch.set_num_threads(1)


def r(x, nd=6):
    """Round for a compact JSON file; 6 significant digits keep errors far below 1e-4."""
    return [float(f"{v:.{nd}g}") for v in x.reshape(-1).tolist()]


def make(name, seed, cfg_kwargs, f16, prompt_len, ablate):
    torch.manual_seed(seed)
    cfg = GPT2Config(**cfg_kwargs)
    cfg._attn_implementation = "eager"  # "sdpa" returns no attention weights
    model = GPT2LMHeadModel(cfg).eval()
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    if f16:
        # Round the weights to F16 first so the reference and the file hold the same numbers.
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.half().float())
        sd = {k.removeprefix("transformer."): v.half().contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
        n_pos = cfg.n_positions
        for i in range(cfg.n_layer):  # the public checkpoint's causal-mask buffers
            sd[f"h.{i}.attn.bias"] = torch.tril(torch.ones(n_pos, n_pos)).view(1, 1, n_pos, n_pos).half()
        save_file(sd, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
        cfg.to_json_file(os.path.join(folder, "config.json"))
    else:
        model.save_pretrained(folder, safe_serialization=True)
    for extra in ("generation_config.json",):
        p = os.path.join(folder, extra)
        if os.path.exists(p):
            os.remove(p)

    g = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, cfg.vocab_size, (1, prompt_len), generator=g)
    with torch.no_grad():
        out = model(ids, output_attentions=True, output_hidden_states=True)
        # hidden_states[L] is after ln_f; take the last block's own output with a hook instead.
        last = {}
        h = model.transformer.h[-1].register_forward_hook(lambda m, i, o: last.setdefault("x", o[0] if isinstance(o, tuple) else o))
        model(ids)
        h.remove()
        hidden = list(out.hidden_states[: cfg.n_layer]) + [last["x"]]

        hooks = []
        hd = cfg.n_embd // cfg.n_head
        for layer in range(cfg.n_layer):
            heads = [hh for (ll, hh) in ablate if ll == layer]
            if heads:
                def pre(mod, args, heads=heads):
                    x = args[0].clone()
                    for hh in heads:
                        x[..., hh * hd:(hh + 1) * hd] = 0
                    return (x,)
                hooks.append(model.transformer.h[layer].attn.c_proj.register_forward_pre_hook(pre))
        ablated = model(ids).logits
        for hk in hooks:
            hk.remove()

        gen = model.generate(ids, max_new_tokens=10, do_sample=False, pad_token_id=0, attention_mask=torch.ones_like(ids))
    fixture = {
        "config": cfg_kwargs,
        "tokens": ids[0].tolist(),
        "logits": r(out.logits[0]),
        "attentions": [r(a[0]) for a in out.attentions],
        "hidden_states": [r(x[0]) for x in hidden],
        "ablate": ablate,
        "ablated_logits": r(ablated[0]),
        "greedy": gen[0, prompt_len:].tolist(),
    }
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(fixture, f, separators=(",", ":"))


def tokenizer_fixture():
    reg = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/tiktoken-rs-0.12.1/assets"))[0]
    with tempfile.TemporaryDirectory() as d:
        shutil.copy(os.path.join(reg, "encoder.json"), os.path.join(d, "vocab.json"))
        shutil.copy(os.path.join(reg, "vocab.bpe"), os.path.join(d, "merges.txt"))
        tok = GPT2TokenizerFast.from_pretrained(d)
    cases = [
        "My cat is small, cute, and fluffy. She likes belly rubs.",
        "The doctor spoke to the nurse. She said to him",
        "I'm sure they'll say it's what we've done, isn't it?",
        "naïve café façade — déjà vu",
        "東京は日本の首都です。",
        "emoji: 🐈‍⬛🎉👍🏽",
        "digits 1234567890 3.14159 1,000,000",
        "tabs\tand\r\nCRLF\nnewlines",
        "runs   of     spaces  ",
        "non\u00a0breaking\u2028line separator",
        "trailing whitespace \n\n",
        "<|endoftext|>Hello<|endoftext|>",
        "   leading spaces",
        "CamelCaseWords and snake_case_words",
        "",
        "a",
        "\u0000\u0001 control",
    ]
    data = [{"text": t, "ids": tok(t)["input_ids"]} for t in cases]
    with open(os.path.join(OUT, "tokenizer.json"), "w") as f:
        json.dump(data, f, ensure_ascii=False)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    make("a", 0, dict(vocab_size=256, n_positions=64, n_embd=32, n_layer=2, n_head=2, initializer_range=0.3), False, 12, [[0, 1]])
    make("b", 1, dict(vocab_size=300, n_positions=32, n_embd=48, n_layer=3, n_head=4, n_inner=96, initializer_range=0.3), True, 9, [[0, 2], [2, 0], [2, 3]])
    tokenizer_fixture()
    print("wrote", OUT)
