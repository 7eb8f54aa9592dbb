"""The training lab's model and optimiser in plain PyTorch: the reference for the Rust engine in src/train/.

A small GPT-2 (pre-layer-norm) with Hugging Face GPT-2's parameter names and Conv1D layout ([in, out],
y = x @ W + b), so `model.state_dict()` has exactly the keys of the engine's definition: `wte.weight`,
`wpe.weight` (learned positions only), `h.{i}.ln_1.*`, `h.{i}.attn.c_attn.*`, `h.{i}.attn.c_proj.*`,
(MLP on) `h.{i}.ln_2.*`, `h.{i}.mlp.c_fc.*`, `h.{i}.mlp.c_proj.*`, then `ln_f.*`. The head is tied to `wte`.
Positions: "learned" (wpe added), "sinusoidal" (fixed table added), "rope" (q and k rotated), "none".
Used by scripts/train/make_fixtures.py (in float64) and bench/pytorch_train.py (in float32).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 28
POSITIONS = ("learned", "sinusoidal", "rope", "none")


class Conv1D(nn.Module):
    """GPT-2's linear layer: weight stored [in, out], y = x @ W + b."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.empty(n_out))

    def forward(self, x):  # (..., in) -> (..., out)
        return x @ self.weight + self.bias


def sinusoidal_table(t, c, dtype):
    """PE[t, 2i] = sin(t / 10000^(2i/C)), PE[t, 2i+1] = cos(same): (T, C), not a parameter."""
    pos = torch.arange(t, dtype=dtype)[:, None]  # (T, 1)
    two_i = torch.arange(0, c, 2, dtype=dtype)[None, :]  # (1, C/2): the even column index 2i
    angle = pos / torch.pow(torch.tensor(10000.0, dtype=dtype), two_i / c)  # (T, C/2)
    pe = torch.zeros(t, c, dtype=dtype)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : c // 2])
    return pe


def rope(x):
    """Rotate each head's adjacent column pairs (2i, 2i+1) by angle t * w_i, w_i = 1 / 10000^(2i/d).

    x: (B, H, T, d) -> (B, H, T, d)."""
    _, _, t, d = x.shape
    pos = torch.arange(t, dtype=x.dtype)[:, None]  # (T, 1)
    two_i = torch.arange(0, d, 2, dtype=x.dtype)[None, :]  # (1, d/2)
    angle = pos / torch.pow(torch.tensor(10000.0, dtype=x.dtype), two_i / d)  # (T, d/2)
    cos, sin = torch.cos(angle), torch.sin(angle)  # (T, d/2) each, broadcast over B and H
    x0, x1 = x[..., 0::2], x[..., 1::2]  # (B, H, T, d/2) each
    out = torch.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


class Attention(nn.Module):
    def __init__(self, n_embd, n_head, use_rope):
        super().__init__()
        assert n_embd % n_head == 0, "the width must split evenly into heads"
        self.n_head, self.use_rope = n_head, use_rope
        self.c_attn = Conv1D(n_embd, 3 * n_embd)
        self.c_proj = Conv1D(n_embd, n_embd)

    def forward(self, x):  # x: (B, T, C) -> (B, T, C)
        b, t, c = x.shape
        h, d = self.n_head, c // self.n_head
        qkv = self.c_attn(x)  # (B, T, 3C)
        q, k, v = qkv.split(c, dim=2)  # (B, T, C) each
        # head j = columns j*d .. j*d + d of each third
        q = q.view(b, t, h, d).transpose(1, 2)  # (B, H, T, d)
        k = k.view(b, t, h, d).transpose(1, 2)  # (B, H, T, d)
        v = v.view(b, t, h, d).transpose(1, 2)  # (B, H, T, d)
        if self.use_rope:
            q, k = rope(q), rope(k)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d)  # (B, H, T, T): query rows, key columns
        causal = torch.ones(t, t, dtype=torch.bool).tril()  # (T, T): key j visible to query i iff j <= i
        scores = scores.masked_fill(~causal, float("-inf"))
        att = F.softmax(scores, dim=-1)  # (B, H, T, T)
        y = att @ v  # (B, H, T, d)
        y = y.transpose(1, 2).contiguous().view(b, t, c)  # (B, T, C): heads concatenated
        return self.c_proj(y)  # (B, T, C)


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = Conv1D(n_embd, 4 * n_embd)
        self.c_proj = Conv1D(4 * n_embd, n_embd)

    def forward(self, x):  # (B, T, C) -> (B, T, C)
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))  # via (B, T, 4C)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, mlp, use_rope):
        super().__init__()
        # Attribute order = the engine's parameter order (state_dict keys come out in this order).
        self.ln_1 = nn.LayerNorm(n_embd, eps=1e-5)
        self.attn = Attention(n_embd, n_head, use_rope)
        if mlp:
            self.ln_2 = nn.LayerNorm(n_embd, eps=1e-5)
            self.mlp = MLP(n_embd)
        self.has_mlp = mlp

    def forward(self, x):  # (B, T, C) -> (B, T, C)
        x = x + self.attn(self.ln_1(x))
        if self.has_mlp:
            x = x + self.mlp(self.ln_2(x))
        return x


class TinyGPT(nn.Module):
    def __init__(self, n_layer, n_head, n_embd, n_positions, mlp=True, positions="learned", vocab=VOCAB):
        super().__init__()
        assert positions in POSITIONS, f"positions must be one of {POSITIONS}, not {positions!r}"
        self.positions, self.n_positions = positions, n_positions
        self.wte = nn.Embedding(vocab, n_embd)  # weight (V, C)
        if positions == "learned":
            self.wpe = nn.Embedding(n_positions, n_embd)  # weight (T, C)
        self.h = nn.ModuleList(Block(n_embd, n_head, mlp, positions == "rope") for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd, eps=1e-5)

    def forward(self, ids):  # ids: (B, T) int64 -> logits (B, T, V)
        b, t = ids.shape
        assert t <= self.n_positions, f"sequence of {t} tokens, the model has {self.n_positions} positions"
        x = self.wte(ids)  # (B, T, C)
        if self.positions == "learned":
            x = x + self.wpe.weight[:t]  # (T, C) broadcast over B
        elif self.positions == "sinusoidal":
            x = x + sinusoidal_table(t, x.shape[-1], x.dtype)  # (T, C)
        for block in self.h:
            x = block(x)  # (B, T, C)
        return self.ln_f(x) @ self.wte.weight.t()  # (B, T, C) @ (C, V) -> (B, T, V)


def loss_fn(logits, targets):
    """Mean cross-entropy over every target in the batch that is not -1. logits (B, T, V), targets (B, T)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1)


def init_params(model, seed):
    """torch.manual_seed(seed), then in state_dict order: 2-D weights N(0, 0.2), layer-norm weights 1 + N(0, 0.1),
    biases N(0, 0.1). Drawn in float32 (so the saved F32 values are exactly the starting point)."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            z = torch.randn(p.shape, dtype=torch.float32)
            if p.dim() == 2:
                val = 0.2 * z
            elif ".ln_" in "." + name and name.endswith(".weight"):
                val = 1.0 + 0.1 * z
            else:
                val = 0.1 * z
            p.copy_(val.to(p.dtype))


def decay_groups(model, wd):
    """Two AdamW groups: weight decay wd for the 2-D parameters (wte, wpe, c_attn/c_proj/c_fc weights), 0 else."""
    decay = [p for p in model.parameters() if p.dim() == 2]
    rest = [p for p in model.parameters() if p.dim() != 2]
    return [{"params": decay, "weight_decay": wd}, {"params": rest, "weight_decay": 0.0}]


def make_optimizer(model, lr, wd):
    return torch.optim.AdamW(decay_groups(model, wd), lr=lr, betas=(0.9, 0.95), eps=1e-8)


def train_step(model, opt, ids, targets):
    """One step: forward, loss, backward, clip to global norm 1.0, AdamW. Returns (loss, grad norm before clipping)."""
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(ids), targets)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss, norm
