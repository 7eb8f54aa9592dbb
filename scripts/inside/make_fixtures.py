"""Reference fixtures for looking inside a model (the logit lens, activation patching, head
detectors), made by PyTorch and Hugging Face transformers with hooks written here, fully offline.

Run:  python scripts/inside/make_fixtures.py      (writes tests/fixtures/inside/)
Made with: Python 3.11, torch 2.15.0 (CPU), transformers 5.24.0, tokenizers 0.22, seeds below.

Models: the GPT-2 fixtures `a` and `b` (random), the bundled `stories` and `induction` (GPT-2
BPE, the encoder.json / vocab.bpe that the tiktoken-rs crate ships), the Llama fixture `gqa`
(random) and the bundled `stories-llama` (its own tokenizer.json). Definitions, as
`session::inside` and `numerics::detectors` implement them (boundary b: 0 after the embeddings,
l + 1 after block l, before the final norm):
- lens: lm_head(final_norm(x_b[t])) softmaxed; the top 5 per cell, and one token's probability;
- patching: metric = logit[answer] - logit[wrong] at the last position; the corrupted run with
  x_b[p] replaced by the clean run's, for every (b, p); and with head h's slice of the
  concatenated heads (the input of c_proj / o_proj) replaced by the clean run's at every position;
- head scores on prefix + r + r (n tokens each, prefix of o): previous = mean A[i, i-1] over
  i >= o+1; induction = mean A[i, i-n+1] and duplicate = mean A[i, i-n] over i in o+n .. o+2n-1.
"""
import glob
import json
import os
import random
import shutil
import tempfile

import torch
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM, GPT2TokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "inside")
torch.set_num_threads(1)
CLEAN = "My cat is small, cute, and fluffy. She likes"
CORRUPT = "My dog is small, cute, and fluffy. She likes"


def r(x, nd=6):
    return [float(f"{v:.{nd}g}") for v in x]


def grid(x):
    return [r(row) for row in x]


class Probe:
    """A loaded model with hooks at the boundaries and on the heads' concatenated output."""

    def __init__(self, folder):
        self.m = AutoModelForCausalLM.from_pretrained(os.path.join(ROOT, folder), attn_implementation="eager",
                                                      dtype=torch.float32).eval()
        if hasattr(self.m, "transformer"):
            t = self.m.transformer
            self.blocks, self.norm = list(t.h), t.ln_f
            self.outs = [b.attn.c_proj for b in self.blocks]
            self.hd = self.m.config.n_embd // self.m.config.n_head
        else:
            t = self.m.model
            self.blocks, self.norm = list(t.layers), t.norm
            self.outs = [b.self_attn.o_proj for b in self.blocks]
            self.hd = self.m.config.head_dim
        self.L = len(self.blocks)

    def run(self, ids, residual=None, head=None, keep=False):
        """Logits (T, V) at every position; with `residual` = (b, p, value) or `head` = (l, h, value
        (T, hd)) patched in; with `keep`, also every boundary's stream and every head output."""
        hooks, xs, ys = [], {}, {}

        def boundary_in(b):
            def f(mod, args, kwargs):
                x = args[0] if args else kwargs["hidden_states"]
                if residual is not None and residual[0] == b:
                    x = x.clone()
                    x[0, residual[1]] = residual[2]
                xs[b] = x[0].detach().clone()
                if args:
                    return (x,) + tuple(args[1:]), kwargs
                kwargs["hidden_states"] = x
                return args, kwargs
            return f

        def last_out(mod, args, out):
            x = out[0] if isinstance(out, tuple) else out
            if residual is not None and residual[0] == self.L:
                x = x.clone()
                x[0, residual[1]] = residual[2]
            xs[self.L] = x[0].detach().clone()
            return (x,) + tuple(out[1:]) if isinstance(out, tuple) else x

        def heads_in(l):
            def f(mod, args):
                y = args[0]
                if head is not None and head[0] == l:
                    y = y.clone()
                    h = head[1]
                    y[0, :, h * self.hd:(h + 1) * self.hd] = head[2]
                ys[l] = y[0].detach().clone()
                return (y,) + tuple(args[1:])
            return f

        for b in range(self.L):
            hooks.append(self.blocks[b].register_forward_pre_hook(boundary_in(b), with_kwargs=True))
            hooks.append(self.outs[b].register_forward_pre_hook(heads_in(b)))
        hooks.append(self.blocks[-1].register_forward_hook(last_out))
        try:
            with torch.no_grad():
                out = self.m(torch.tensor([ids]), output_attentions=keep)
        finally:
            for h in hooks:
                h.remove()
        logits = out.logits[0]
        if keep:
            return logits, [xs[b] for b in range(self.L + 1)], [ys[l] for l in range(self.L)], out.attentions
        return logits

    def read_out(self, x):
        with torch.no_grad():
            return self.m.lm_head(self.norm(x))


def lens(p, ids):
    logits, xs, _, _ = p.run(ids, keep=True)
    own = int(torch.argmax(logits[-1]))
    top_ids, top_probs, track = [], [], []
    for b, x in enumerate(xs):
        probs = torch.softmax(p.read_out(x).double(), dim=-1)
        if b == p.L:
            assert torch.allclose(probs, torch.softmax(logits.double(), -1), atol=1e-6), "the lens at L is the output"
        # Most likely first, ties by the lower id (a stable sort of the negated probabilities).
        order = torch.sort(-probs, dim=-1, stable=True).indices[:, :5]
        top_ids.append(order.tolist())
        top_probs.append([r(probs[t, order[t]].tolist()) for t in range(len(ids))])
        track.append(r(probs[:, own].tolist()))
    return {"tokens": ids, "top_ids": top_ids, "top_probs": top_probs, "track": own, "track_probs": track}


def patching(p, clean, corrupt):
    assert len(clean) == len(corrupt)
    cl, xs, ys, _ = p.run(clean, keep=True)
    co = p.run(corrupt)
    answer = int(torch.argmax(cl[-1]))
    order = torch.sort(-co[-1], stable=True).indices.tolist()
    wrong = order[0] if order[0] != answer else order[1]
    metric = lambda lg: float(lg[-1, answer] - lg[-1, wrong])
    # Checks of the hooks: a patch of the corrupted run's own value changes nothing; the whole
    # clean stream at boundary 0 gives the clean run.
    _, cxs, _, _ = p.run(corrupt, keep=True)
    assert abs(metric(p.run(corrupt, residual=(1, 2, cxs[1][2]))) - metric(co)) < 1e-5
    plain = p.m(torch.tensor([corrupt])).logits[0].detach()
    assert torch.allclose(plain, co, atol=1e-6), "the hooks alone change nothing"
    residual = [[metric(p.run(corrupt, residual=(b, t, xs[b][t]))) for t in range(len(clean))]
                for b in range(p.L + 1)]
    n_head = ys[0].shape[1] // p.hd
    heads = [[metric(p.run(corrupt, head=(l, h, ys[l][:, h * p.hd:(h + 1) * p.hd]))) for h in range(n_head)]
             for l in range(p.L)]
    return {"clean": clean, "corrupt": corrupt, "answer": answer, "wrong": wrong, "clean_metric": metric(cl),
            "corrupt_metric": metric(co), "residual": grid(residual), "heads": grid(heads)}


def head_scores(p, tokens, n, o):
    _, _, _, att = p.run(tokens, keep=True)
    s = len(tokens)
    out = {"tokens": tokens, "n": n, "offset": o, "previous": [], "induction": [], "duplicate": []}
    for a in att:
        a = a[0]
        mean = lambda rows, back: [float(sum(a[h, i, i - back] for i in rows) / len(rows)) for h in range(a.shape[0])]
        out["previous"].append(r(mean(range(o + 1, s), 1)))
        out["induction"].append(r(mean(range(o + n, o + 2 * n), n - 1)))
        out["duplicate"].append(r(mean(range(o + n, o + 2 * n), n)))
    return out


def gpt2_tokenizer():
    reg = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/tiktoken-rs-*/assets"))[0]
    d = tempfile.mkdtemp()
    shutil.copy(os.path.join(reg, "encoder.json"), os.path.join(d, "vocab.json"))
    shutil.copy(os.path.join(reg, "vocab.bpe"), os.path.join(d, "merges.txt"))
    tok = GPT2TokenizerFast.from_pretrained(d)
    return lambda text, special=True: tok(text)["input_ids"]


def llama_tokenizer(folder):
    tok = Tokenizer.from_file(os.path.join(ROOT, folder, "tokenizer.json"))
    return lambda text, special=True: tok.encode(text, add_special_tokens=special).ids


def letters(encode, n, seed, vocab):
    """prefix + r + r with r n random capital letters, each " X" one token (random ids of the
    vocabulary where letters are not single tokens, as the session does); and the prefix's length."""
    ids = [encode(f" {c}", False) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    full, own = encode(" A"), encode(" A", False)
    o = full.index(own[0])
    rng = random.Random(seed)
    if all(len(i) == 1 for i in ids):
        seq = [ids[rng.randrange(26)][0] for _ in range(n)]
    else:
        seq = [rng.randrange(vocab) for _ in range(n)]
    return full[:o] + seq + seq, o


def write(name, data):
    with open(os.path.join(OUT, f"{name}.json"), "w") as f:
        json.dump(data, f, separators=(",", ":"))
    print(f"{name}: {os.path.getsize(os.path.join(OUT, name + '.json'))} bytes")


def random_fixture(name, folder, seed):
    p = Probe(folder)
    v = p.m.config.vocab_size
    g = random.Random(seed)
    clean = [g.randrange(v) for _ in range(8)]
    corrupt = list(clean)
    corrupt[2] = (clean[2] + 1 + g.randrange(v - 1)) % v
    r12 = [g.randrange(v) for _ in range(12)]
    write(name, {"model": folder, "lens": lens(p, clean), "patching": patching(p, clean, corrupt),
                 "heads": head_scores(p, r12 + r12, 12, 0)})


def bundled(name, folder, encode, prompt, seed):
    p = Probe(folder)
    tokens, o = letters(encode, 20, seed, p.m.config.vocab_size)
    data = {"model": folder, "lens": lens(p, encode(prompt)), "heads": head_scores(p, tokens, 20, o)}
    if prompt == CLEAN:
        data["patching"] = patching(p, encode(CLEAN), encode(CORRUPT))
    else:
        data["patching"] = patching(p, encode("Q F K B Z Q F K B Z"), encode("Q F K B Z Q F X B Z"))
    write(name, data)
    return data


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    random_fixture("gpt2-a", "tests/fixtures/gpt2/a", 10)
    random_fixture("gpt2-b", "tests/fixtures/gpt2/b", 11)
    random_fixture("llama-gqa", "tests/fixtures/llama/gqa", 12)
    gpt2 = gpt2_tokenizer()
    bundled("stories", "static/models/stories", gpt2, CLEAN, 13)
    ind = bundled("induction", "static/models/induction", gpt2, "Q F K B Z Q F K B Z", 14)
    print("induction scores of the induction model:", ind["heads"]["induction"])
    bundled("stories-llama", "static/models/stories-llama", llama_tokenizer("static/models/stories-llama"), CLEAN, 15)
