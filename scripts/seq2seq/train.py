"""Trains the six small GRU encoder-decoder models of the seq2seq chapter on string reversal, offline, on CPU.

Run:  /work/venv-ref/bin/python scripts/seq2seq/train.py     (~39 min on 1 CPU thread: 2306 s measured;
      per variant fixed 291 s, bahdanau 611 s, luong_dot 280 s, luong_general 272 s, luong_concat 532 s,
      luong_local 309 s, each 7000 steps of batch 64, Adam lr 3e-3)
Made with: Python 3.11.7, torch 2.15.0, safetensors 0.8.0, numpy 2.4.6; seeds fixed below
(SEED_INIT for every variant's torch.manual_seed, SEED_DATA for the training stream, SEED_EVAL for
the held-out curve, SEED_FIXTURE for the length-30 fixture input). Deterministic on 1 thread.
Writes static/models/seq2seq/{model.safetensors, curve.json} and tests/fixtures/seq2seq/reference.json.

Task: reverse a string of 1..MAXLEN lowercase letters. Ids: 0 <pad>, 1 <s>, 2 </s>, 3..28 = a..z (V=29).
Source = letters + </s> (S = len+1 encoder steps); target = reversed letters + </s>; the decoder
starts from <s>; greedy decoding stops at </s> (kept in the output) or after S+5 tokens.

Every variant: E=32, H=64, A=64. Encoder: enc.embed (V,E), one unidirectional GRU
(torch.nn.GRU math, gate order r,z,n; weight_ih (3H,in), weight_hh (3H,H), bias_ih, bias_hh), h_0 = 0,
states h_1..h_S (0-based index j = 0..S-1 below). Decoder: dec.embed (V,E), a GRU cell, s_0 = h_S.
  fixed          c = h_S;  s_i = GRU([emb(y_{i-1}); c], s_{i-1});  logits = out([s_i; c])   out (V,2H)
  bahdanau       e_ij = v_a . tanh(W_a s_{i-1} + U_a h_j); a_i = softmax_j; c_i = sum_j a_ij h_j;
                 s_i = GRU([emb(y_{i-1}); c_i], s_{i-1}); logits = out([s_i; c_i])           out (V,2H)
  luong_*        s_i = GRU(emb(y_{i-1}), s_{i-1}); a_i = softmax_j score(s_i, h_j); c_i = sum_j a_ij h_j;
                 t_i = tanh(W_c [c_i; s_i]) (W_c (H,2H), no bias); logits = out(t_i)         out (V,H)
                 dot: s.h   general: s . (W h) (W (H,H))   concat: v . tanh(W [s; h]) (W (A,2H), v (A))
  luong_local    general scores; p_i = S * sigmoid(v_p . tanh(W_p s_i)); softmax over the j (0-based)
                 with |j - p_i| <= D only (D=4), then times exp(-(j-p_i)^2 / (2 (D/2)^2)), not renormalised.
                 The window is never empty: p_i is in [0, S] and index S-1 is within 1 <= D of S.
Tensors are named <variant>.<name> in one F32 safetensors file (names in export() below).

Training: teacher forcing, cross-entropy over the target positions (letters and </s>), Adam,
linear warm-up then cosine decay, gradient clipping 1.0, batches of mixed lengths (uniform in
1..MAXLEN) padded at the end; padded source positions are masked out of attention and h_S is taken
at each sequence's true last position, so the model equals the unpadded math above. Every variant
sees the same data stream and the same budget. Training strings of length >= 3 that occur in the
held-out evaluation set are rejected (lengths 1 and 2 have only 26 and 676 strings: they overlap).
"""
import copy
import json
import math
import os
import random
import sys
import time

import numpy as np
import safetensors
import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file

torch.set_num_threads(1)
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

PAD, BOS, EOS = 0, 1, 2
LETTERS = "abcdefghijklmnopqrstuvwxyz"
V, E, H, A, D = 29, 32, 64, 64, 4
MAXLEN = 30
VARIANTS = ["fixed", "bahdanau", "luong_dot", "luong_general", "luong_concat", "luong_local"]
SEED_INIT, SEED_DATA, SEED_EVAL, SEED_FIXTURE = 0, 1, 2024, 7
N_EVAL = 200
HOLDOUT_MIN_LEN = 3

STEPS = int(os.environ.get("STEPS", 7000))
BATCH = int(os.environ.get("BATCH", 64))
LR = float(os.environ.get("LR", 3e-3))
WARMUP = 200
ONLY = os.environ.get("ONLY")  # comma list of variants, for experiments; the shipped run trains all


def ids(s):
    return [3 + LETTERS.index(ch) for ch in s]


# ---------------------------------------------------------------- data

def eval_set():
    rng = random.Random(SEED_EVAL)
    return {L: ["".join(rng.choice(LETTERS) for _ in range(L)) for _ in range(N_EVAL)] for L in range(1, MAXLEN + 1)}


def make_batch(strs):
    B, T = len(strs), max(len(s) for s in strs) + 1
    src = torch.full((B, T), PAD, dtype=torch.long)
    dec_in = torch.full((B, T), PAD, dtype=torch.long)
    tgt = torch.full((B, T), PAD, dtype=torch.long)
    for b, s in enumerate(strs):
        x = ids(s)
        S = len(x) + 1
        src[b, :S] = torch.tensor(x + [EOS])
        r = x[::-1]
        dec_in[b, :S] = torch.tensor([BOS] + r)
        tgt[b, :S] = torch.tensor(r + [EOS])
    lens = torch.tensor([len(s) + 1 for s in strs])
    return src, lens, dec_in, tgt


def train_stream(heldout):
    rng = random.Random(SEED_DATA)
    while True:
        strs = []
        while len(strs) < BATCH:
            L = rng.randint(1, MAXLEN)
            s = "".join(rng.choice(LETTERS) for _ in range(L))
            if L >= HOLDOUT_MIN_LEN and s in heldout:
                continue
            strs.append(s)
        yield make_batch(strs)


# ---------------------------------------------------------------- model

def uni(*shape, fan):
    return nn.Parameter(torch.empty(*shape).uniform_(-1 / math.sqrt(fan), 1 / math.sqrt(fan)))


class Seq2Seq(nn.Module):
    def __init__(self, variant):
        super().__init__()
        self.variant = v = variant
        self.luong = v.startswith("luong")
        self.enc_embed = nn.Embedding(V, E)
        self.enc_gru = nn.GRU(E, H, batch_first=True)
        self.dec_embed = nn.Embedding(V, E)
        self.dec_gru = nn.GRU(E if self.luong else E + H, H, batch_first=True)
        self.out = nn.Linear(H if self.luong else 2 * H, V)
        a = {}
        if v == "bahdanau":
            a = {"W_a": uni(A, H, fan=H), "U_a": uni(A, H, fan=H), "v_a": uni(A, fan=A)}
        elif v in ("luong_general", "luong_local"):
            a = {"W": uni(H, H, fan=H)}
        elif v == "luong_concat":
            a = {"W": uni(A, 2 * H, fan=2 * H), "v": uni(A, fan=A)}
        if self.luong:
            a["W_c"] = uni(H, 2 * H, fan=2 * H)
        if v == "luong_local":
            a["W_p"] = uni(H, H, fan=H)
            a["v_p"] = uni(H, fan=H)
        self.attn = nn.ParameterDict(a)

    def export(self):
        g, d = self.enc_gru, self.dec_gru
        t = {"enc.embed": self.enc_embed.weight, "dec.embed": self.dec_embed.weight,
             "out.weight": self.out.weight, "out.bias": self.out.bias}
        for pre, gru in (("enc.gru", g), ("dec.gru", d)):
            t[pre + ".weight_ih"] = gru.weight_ih_l0
            t[pre + ".weight_hh"] = gru.weight_hh_l0
            t[pre + ".bias_ih"] = gru.bias_ih_l0
            t[pre + ".bias_hh"] = gru.bias_hh_l0
        for k, p in self.attn.items():
            t["attn." + k] = p
        return {f"{self.variant}.{k}": v.detach().float().contiguous().clone() for k, v in t.items()}

    def cell(self, x, h):
        d = self.dec_gru
        return torch.gru_cell(x, h, d.weight_ih_l0, d.weight_hh_l0, d.bias_ih_l0, d.bias_hh_l0)

    def encode(self, src, lens):
        hs, _ = self.enc_gru(self.enc_embed(src))                     # (B,T,H), exact for j < S
        hS = hs[torch.arange(src.shape[0]), lens - 1]
        mask = torch.arange(src.shape[1])[None, :] < lens[:, None]    # (B,T) valid source positions
        keys = None
        if self.variant == "bahdanau":
            keys = hs @ self.attn["U_a"].T
        elif self.variant in ("luong_general", "luong_local"):
            keys = hs @ self.attn["W"].T                              # W h_j
        elif self.variant == "luong_concat":
            keys = hs @ self.attn["W"][:, H:].T                       # W_h h_j
        return hs, hS, mask, lens, keys

    def luong_attn(self, s, enc):
        """s (B,Ti,H) -> weights (B,Ti,Tj), p (B,Ti) or None."""
        hs, _, mask, lens, keys = enc
        v = self.variant
        if v == "luong_dot":
            sc = s @ hs.transpose(1, 2)
        elif v in ("luong_general", "luong_local"):
            sc = s @ keys.transpose(1, 2)
        else:
            q = s @ self.attn["W"][:, :H].T
            sc = torch.tanh(q[:, :, None, :] + keys[:, None, :, :]) @ self.attn["v"]
        allowed = mask[:, None, :]
        p = None
        if v == "luong_local":
            p = lens[:, None].to(s.dtype) * torch.sigmoid(torch.tanh(s @ self.attn["W_p"].T) @ self.attn["v_p"])
            dist = torch.arange(hs.shape[1], dtype=s.dtype)[None, None, :] - p[:, :, None]
            allowed = allowed & (dist.abs() <= D)
        a = sc.masked_fill(~allowed, float("-inf")).softmax(-1)
        if v == "luong_local":
            sigma = D / 2
            a = a * torch.exp(-dist ** 2 / (2 * sigma ** 2))
        return a, p

    def luong_out(self, s, c):
        return self.out(torch.tanh(torch.cat([c, s], -1) @ self.attn["W_c"].T))

    def bahdanau_attn(self, sp, enc):
        hs, _, mask, _, keys = enc
        e = torch.tanh((sp @ self.attn["W_a"].T)[:, None, :] + keys) @ self.attn["v_a"]   # (B,Tj)
        a = e.masked_fill(~mask, float("-inf")).softmax(-1)
        return a, (a[:, None, :] @ hs)[:, 0]

    def forward(self, src, lens, dec_in):
        """Teacher-forced logits (B,T,V)."""
        enc = self.encode(src, lens)
        hs, hS = enc[0], enc[1]
        x = self.dec_embed(dec_in)
        T = dec_in.shape[1]
        if self.variant == "fixed":
            c = hS[:, None, :].expand(-1, T, -1)
            s, _ = self.dec_gru(torch.cat([x, c], -1), hS[None].contiguous())
            return self.out(torch.cat([s, c], -1))
        if self.variant == "bahdanau":
            sp, ss, cs = hS, [], []
            for t in range(T):
                _, c = self.bahdanau_attn(sp, enc)
                sp = self.cell(torch.cat([x[:, t], c], -1), sp)
                ss.append(sp)
                cs.append(c)
            return self.out(torch.cat([torch.stack(ss, 1), torch.stack(cs, 1)], -1))
        s, _ = self.dec_gru(x, hS[None].contiguous())
        a, _ = self.luong_attn(s, enc)
        return self.luong_out(s, a @ hs)

    def step(self, enc, y_prev, sp):
        """One decoder step: (logits (B,V), s (B,H), attn (B,Tj) or None, p (B,) or None)."""
        hs, hS = enc[0], enc[1]
        x = self.dec_embed(y_prev)
        if self.variant == "fixed":
            s = self.cell(torch.cat([x, hS], -1), sp)
            return self.out(torch.cat([s, hS], -1)), s, None, None
        if self.variant == "bahdanau":
            a, c = self.bahdanau_attn(sp, enc)
            s = self.cell(torch.cat([x, c], -1), sp)
            return self.out(torch.cat([s, c], -1)), s, a, None
        s = self.cell(x, sp)
        a, p = self.luong_attn(s[:, None], enc)
        logits = self.luong_out(s[:, None], a @ hs)[:, 0]
        return logits, s, a[:, 0], None if p is None else p[:, 0]


@torch.no_grad()
def greedy(model, strs):
    """Greedy decode of equal-length strings; returns lists of output ids (cut after the first </s>)."""
    src, lens, _, _ = make_batch(strs)
    S = src.shape[1]
    enc = model.encode(src, lens)
    y = torch.full((len(strs),), BOS, dtype=torch.long)
    s = enc[1]
    outs, done = [], torch.zeros(len(strs), dtype=torch.bool)
    for _ in range(S + 5):
        logits, s, _, _ = model.step(enc, y, s)
        y = logits.argmax(-1)
        outs.append(y)
        done |= y == EOS
        if done.all():
            break
    outs = torch.stack(outs, 1).tolist()
    res = []
    for o in outs:
        res.append(o[:o.index(EOS) + 1] if EOS in o else o)
    return res


def accuracy(model, strs):
    outs = greedy(model, strs)
    exact = tok = ntok = 0
    for s, o in zip(strs, outs):
        t = ids(s)[::-1] + [EOS]
        exact += o == t
        tok += sum(1 for k in range(len(t)) if k < len(o) and o[k] == t[k])
        ntok += len(t)
    return exact / len(strs), tok / ntok


def check_paths(variant):
    """The parallel teacher-forced path and the step path compute the same logits (padded batch)."""
    torch.manual_seed(123)
    m = Seq2Seq(variant).double()
    rng = random.Random(5)
    strs = ["".join(rng.choice(LETTERS) for _ in range(rng.randint(1, 12))) for _ in range(6)]
    src, lens, dec_in, tgt = make_batch(strs)
    with torch.no_grad():
        full = m(src, lens, dec_in)
        enc = m.encode(src, lens)
        s = enc[1]
        for t in range(dec_in.shape[1]):
            logits, s, _, _ = m.step(enc, dec_in[:, t], s)
            ok = tgt[:, t] != PAD
            assert (logits[ok] - full[ok, t]).abs().max() < 1e-9, (variant, t)


# ---------------------------------------------------------------- training

def train(variant, heldout, curve_sets):
    check_paths(variant)
    torch.manual_seed(SEED_INIT)
    model = Seq2Seq(variant)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: min(1.0, (k + 1) / WARMUP) * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(1.0, k / STEPS)))))
    data = train_stream(heldout)
    t0 = time.time()
    run_loss = None
    for step in range(1, STEPS + 1):
        src, lens, dec_in, tgt = next(data)
        logits = model(src, lens, dec_in)
        loss = F.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1), ignore_index=PAD)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        run_loss = loss.item() if run_loss is None else 0.98 * run_loss + 0.02 * loss.item()
        if step % 500 == 0 or step == STEPS:
            model.eval()
            probe = {L: accuracy(model, curve_sets[L][:50])[0] for L in (10, 20, 30)}
            model.train()
            print(f"{variant} step {step}/{STEPS} loss {run_loss:.4f} exact@10/20/30 "
                  f"{probe[10]:.2f}/{probe[20]:.2f}/{probe[30]:.2f} ({time.time() - t0:.0f} s)", flush=True)
    secs = time.time() - t0
    model.eval()
    return model, {"steps": STEPS, "batch": BATCH, "lr": LR, "seconds": round(secs, 1), "final_loss": round(run_loss, 5)}


# ---------------------------------------------------------------- fixtures

def r7(x):
    if isinstance(x, list):
        return [r7(y) for y in x]
    return float(f"{x:.7g}")


@torch.no_grad()
def fixture(model, text, with_enc=True):
    m = copy.deepcopy(model).double()
    x = ids(text) + [EOS]
    S = len(x)
    src = torch.tensor([x])
    enc = m.encode(src, torch.tensor([S]))
    y = torch.tensor([BOS])
    s = enc[1]
    out, logits_l, attn_l, p_l = [], [], [], []
    for _ in range(S + 5):
        logits, s, a, p = m.step(enc, y, s)
        logits_l.append(r7(logits[0].tolist()))
        if a is not None:
            attn_l.append(r7(a[0].tolist()))
        if p is not None:
            p_l.append(r7(p[0].item()))
        y = logits.argmax(-1)
        out.append(y.item())
        if y.item() == EOS:
            break
    rec = {"text": text, "src": x}
    if with_enc:
        rec["enc_states"] = r7(enc[0][0].tolist())
    rec["out"] = out
    rec["out_text"] = "".join(LETTERS[i - 3] if i >= 3 else "" for i in out)
    rec["logits"] = logits_l
    if attn_l:
        rec["attn"] = attn_l
    if p_l:
        rec["p"] = p_l
    return rec


def main():
    t_start = time.time()
    curve_sets = eval_set()
    heldout = {s for L, ss in curve_sets.items() if L >= HOLDOUT_MIN_LEN for s in ss}
    variants = ONLY.split(",") if ONLY else VARIANTS
    frng = random.Random(SEED_FIXTURE)
    inputs = ["abc", "attention", "thequickbrownfoxjumps", "".join(frng.choice(LETTERS) for _ in range(30))]

    tensors, curve, train_info, fixtures = {}, {}, {}, {}
    for v in variants:
        model, info = train(v, heldout, curve_sets)
        train_info[v] = info
        tensors.update(model.export())
        ex, tk = [], []
        for L in range(1, MAXLEN + 1):
            e, t = accuracy(model, curve_sets[L])
            ex.append(round(e, 4))
            tk.append(round(t, 4))
        curve[v] = {"exact": ex, "token": tk}
        print(f"{v}: {info['seconds']:.0f} s; exact at 5/10/15/20/25/30: "
              + " ".join(f"{ex[L - 1]:.3f}" for L in (5, 10, 15, 20, 25, 30))
              + "; token: " + " ".join(f"{tk[L - 1]:.3f}" for L in (5, 10, 15, 20, 25, 30)), flush=True)
        fixtures[v] = [fixture(model, t) for t in inputs]

    versions = {"python": sys.version.split()[0], "torch": torch.__version__.split("+")[0],
                "safetensors": safetensors.__version__, "numpy": np.__version__}
    if ONLY:
        print("ONLY set: experiment run, nothing written", flush=True)
        return
    mdir = os.path.join(ROOT, "static", "models", "seq2seq")
    fdir = os.path.join(ROOT, "tests", "fixtures", "seq2seq")
    os.makedirs(mdir, exist_ok=True)
    os.makedirs(fdir, exist_ok=True)
    meta = {"vocab": "<pad>,<s>,</s>," + ",".join(LETTERS), "V": str(V), "E": str(E), "H": str(H), "A": str(A),
            "D": str(D), "MAXLEN": str(MAXLEN), "variants": ",".join(VARIANTS),
            "pad": str(PAD), "bos": str(BOS), "eos": str(EOS), "max_extra_steps": "5",
            "source": "scripts/seq2seq/train.py"}
    save_file(tensors, os.path.join(mdir, "model.safetensors"), metadata=meta)
    with open(os.path.join(mdir, "curve.json"), "w") as f:
        json.dump({"task": "reverse a string of lowercase letters; greedy decoding",
                   "lengths": list(range(1, MAXLEN + 1)), "n_per_length": N_EVAL, "seed": SEED_EVAL,
                   "heldout": f"eval strings: random.Random({SEED_EVAL}), {N_EVAL} per length drawn in length order "
                              f"1..{MAXLEN} (with replacement); training rejected every string of length >= "
                              f"{HOLDOUT_MIN_LEN} in this set; lengths 1 and 2 (26 and 676 strings) overlap training",
                   "exact": "fraction of sequences whose greedy output (cut after the first </s>) equals reversed letters + </s>",
                   "token": "fraction of target positions (letters and the final </s>) where the greedy output has the target token; "
                            "positions past the end of a short output count as wrong",
                   "variants": curve, "train": train_info, "versions": versions,
                   "total_seconds": round(time.time() - t_start, 1)}, f, indent=1)
    with open(os.path.join(fdir, "reference.json"), "w") as f:
        json.dump({"about": "greedy decodes of static/models/seq2seq/model.safetensors computed in float64 "
                            "(weights cast from the F32 file); floats rounded to 7 significant digits. "
                            "src includes </s>; enc_states are h_1..h_S (S x H); logits/attn/p are per decoder step; "
                            "out includes the </s> when produced (decoding stops at </s> or after S+5 steps).",
                   "E": E, "H": H, "A": A, "D": D, "V": V, "inputs": inputs, "fixture_seed": SEED_FIXTURE,
                   "variants": fixtures}, f, separators=(",", ":"))
    print(f"total {time.time() - t_start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
