"""Reference fixtures for looking inside a model (the logit lens, activation patching, head
detectors), made by PyTorch and Hugging Face transformers with hooks written here, fully offline.

Run:  python scripts/inside/make_fixtures.py      (writes tests/fixtures/inside/)
Made with: Python 3.11.7, torch 2.15.0 (the PyPI wheel, run on the CPU with one thread),
transformers 5.24.0, tokenizers 0.23.3, safetensors 0.8.0, seeds below (random.Random).

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
Prompts: the random fixtures' lens and clean run are 8 random ids, the corrupted run the same
with position 2 changed, their head scores 12 random ids twice; the bundled story models read
the cat and the dog below (no start token: GPT-2 adds none, and stories-llama's tokenizer.json
has a `ByteLevel` post-processor, which adds none either, so its offset is 0), the induction
model the letters below (corrupted: the second K an X); the bundled models' head scores read 20
random letters " X" twice where each " X" is one token (GPT-2's BPE), else 20 random ids of the
vocabulary twice (stories-llama: " B", " D", " F", … are "Ġ" + letter, two tokens), as the session
does. The stories model's 26 letters share one embedding row (an unused token's, see
scripts/gpt2/train_bundled.py), so its scores there show positions only.
`answer` is the clean run's top token, `wrong` the corrupted run's (its second if the same).
Checks (asserted as it runs): the hooks alone change no logit; the boundaries 0 .. L-1 are
`output_hidden_states`' own and the final norm of boundary L is its last; each head's slice of
the concatenation is that head's attention weights times its values; the lens at L is the
model's output; a patch of the corrupted run's own value changes nothing, and the clean stream
at every position of any boundary gives the clean metric.
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


def check_hooks(p, ids):
    """The hooks read what the model computes: no logit changes, the boundaries are HF's hidden
    states (the last one before the final norm), and each head's slice of the concatenation is its
    attention weights times its values."""
    with torch.no_grad():
        plain = p.m(torch.tensor([ids]), output_hidden_states=True)
    logits, xs, ys, att = p.run(ids, keep=True)
    assert torch.equal(logits, plain.logits[0]), "the hooks alone change nothing"
    assert torch.equal(p.run(ids), plain.logits[0])
    hs = plain.hidden_states
    for b in range(p.L):
        assert torch.equal(xs[b], hs[b][0]), f"boundary {b} is the input of block {b}"
    with torch.no_grad():
        assert torch.allclose(p.norm(xs[p.L]), hs[p.L][0], atol=1e-6), "hidden_states[L] is after the final norm"
        for l, block in enumerate(p.blocks):
            a = att[l][0]  # (H, T, T)
            n_head, t = a.shape[0], len(ids)
            if hasattr(block, "attn"):
                d = p.m.config.n_embd
                v = block.attn.c_attn(block.ln_1(xs[l]))[:, 2 * d:3 * d].reshape(t, n_head, p.hd)
            else:
                v = block.self_attn.v_proj(block.input_layernorm(xs[l]))
                v = v.reshape(t, -1, p.hd).repeat_interleave(n_head // (v.shape[1] // p.hd), dim=1)
            for h in range(n_head):
                want = a[h] @ v[:, h]
                got = ys[l][:, h * p.hd:(h + 1) * p.hd]
                assert torch.allclose(got, want, atol=1e-5), f"head {l}.{h}: {(got - want).abs().max()}"


def lens(p, ids):
    logits, xs, _, _ = p.run(ids, keep=True)
    own = int(torch.argmax(logits[-1]))
    top_ids, top_probs, track = [], [], []
    for b, x in enumerate(xs):
        probs = torch.softmax(p.read_out(x).double(), dim=-1)
        if b == p.L:
            assert torch.allclose(p.read_out(x), logits, atol=1e-5), "the lens at L is the output"
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
    # Checks of the hooks: a patch of the corrupted run's own value changes nothing (every
    # boundary and position, every head); the whole clean stream at any boundary gives the clean run.
    _, cxs, cys, _ = p.run(corrupt, keep=True)
    with torch.no_grad():
        plain = p.m(torch.tensor([corrupt])).logits[0]
    assert torch.equal(plain, co), "the hooks alone change nothing"
    for b in range(p.L + 1):
        for t in range(len(corrupt)):
            assert metric(p.run(corrupt, residual=(b, t, cxs[b][t]))) == metric(co), f"own value at {b}, {t}"
        assert abs(metric(p.run(corrupt, residual=(b, slice(None), xs[b]))) - metric(cl)) < 1e-5, f"clean at {b}"
    for l in range(p.L):
        for h in range(cys[l].shape[1] // p.hd):
            own = cys[l][:, h * p.hd:(h + 1) * p.hd]
            assert metric(p.run(corrupt, head=(l, h, own))) == metric(co), f"own head {l}.{h}"
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
        # The same means from the diagonals below the main one.
        for key, back, rows in (("previous", 1, (o + 1, s)), ("induction", n - 1, (o + n, o + 2 * n)),
                                ("duplicate", n, (o + n, o + 2 * n))):
            diag = torch.diagonal(a, offset=-back, dim1=1, dim2=2)[:, rows[0] - back:rows[1] - back]  # A[h, i, i - back]
            assert torch.allclose(diag.double().mean(-1), torch.tensor(out[key][-1], dtype=torch.float64), rtol=1e-5, atol=1e-7), key
    return out


def gpt2_tokenizer():
    reg = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/tiktoken-rs-*/assets"))[0]
    d = tempfile.mkdtemp()
    shutil.copy(os.path.join(reg, "encoder.json"), os.path.join(d, "vocab.json"))
    shutil.copy(os.path.join(reg, "vocab.bpe"), os.path.join(d, "merges.txt"))
    tok = GPT2TokenizerFast.from_pretrained(d)
    encode = lambda text, special=True: tok(text)["input_ids"]
    encode.decode = lambda ids: tok.decode(ids)
    return encode


def llama_tokenizer(folder):
    tok = Tokenizer.from_file(os.path.join(ROOT, folder, "tokenizer.json"))
    encode = lambda text, special=True: tok.encode(text, add_special_tokens=special).ids
    encode.decode = lambda ids: tok.decode(ids, skip_special_tokens=False)
    return encode


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


def show(name, data, decode=None):
    """Print what the fixture holds, for reading by eye."""
    pt = data["patching"]
    word = lambda i: f"{i} {decode([i])!r}" if decode else str(i)
    print(f"{name}: answer {word(pt['answer'])}, wrong {word(pt['wrong'])}, clean metric {pt['clean_metric']:.6g}, "
          f"corrupt metric {pt['corrupt_metric']:.6g}, lens track {word(data['lens']['track'])}")
    print("  residual patching (boundary x position):")
    for b, row in enumerate(pt["residual"]):
        print(f"    {b}: " + " ".join(f"{v:8.3f}" for v in row))
    print("  head patching (layer x head):")
    for l, row in enumerate(pt["heads"]):
        print(f"    {l}: " + " ".join(f"{v:8.3f}" for v in row))
    hs = data["heads"]
    for key in ("previous", "induction", "duplicate"):
        print(f"  {key} scores (n {hs['n']}, offset {hs['offset']}):")
        for l, row in enumerate(hs[key]):
            print(f"    {l}: " + " ".join(f"{v:.4f}" for v in row))


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
    check_hooks(p, clean)
    check_hooks(p, r12 + r12)
    data = {"model": folder, "lens": lens(p, clean), "patching": patching(p, clean, corrupt),
            "heads": head_scores(p, r12 + r12, 12, 0)}
    write(name, data)
    show(name, data)


def bundled(name, folder, encode, prompt, seed):
    p = Probe(folder)
    tokens, o = letters(encode, 20, seed, p.m.config.vocab_size)
    split = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if len(encode(f" {c}", False)) != 1]
    print(f"{name}: r is " + (f"random ids (\" X\" is two tokens for {''.join(split)})" if split else "letters \" X\""))
    assert len(encode(CLEAN)) == len(encode(CORRUPT)), "the cat and the dog have as many tokens"
    check_hooks(p, encode(prompt))
    check_hooks(p, tokens)
    data = {"model": folder, "lens": lens(p, encode(prompt)), "heads": head_scores(p, tokens, 20, o)}
    if prompt == CLEAN:
        data["patching"] = patching(p, encode(CLEAN), encode(CORRUPT))
    else:
        data["patching"] = patching(p, encode("Q F K B Z Q F K B Z"), encode("Q F K B Z Q F X B Z"))
    write(name, data)
    show(name, data, encode.decode)
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
