"""Reference fixtures for the training engine (src/train/): forward, gradients and three AdamW steps.

Run:  python scripts/train/make_fixtures.py      (writes tests/fixtures/train/; CPU, offline, a few seconds)
Made with: Python 3.11.7, torch 2.15.0, safetensors 0.8.0, transformers 5.23.0 (only for the cross-check).

The model and optimiser are scripts/train/reference.py (the engine's definition, with Hugging Face GPT-2's
parameter names). Every computation (forward, loss, backward, clipping, AdamW) runs in torch.float64; the
initial parameters are drawn in float32, so `init.*` is exactly the starting point, and everything else is an
f64 result rounded to f32 when saved.

Seeds: configuration k (in the order below, k = 0..3) initialises with torch.manual_seed(k) (see
reference.init_params) and draws its batch from torch.Generator().manual_seed(1000 + k): ids uniform in 0..27,
targets uniform in 0..27 with about a third set to -1 (ignored), at least one scored target per row. The batch
is random on purpose: the fixtures test the maths, not the tasks.

For each configuration <name>:
- `<name>.safetensors` (F32): `init.<param>` (initial parameters), `grad.<param>` (gradient of the loss at init,
  before clipping), `after3.<param>` (after 3 steps on the same batch: clip to global norm 1.0, then AdamW with
  betas (0.9, 0.95), eps 1e-8, weight decay on the 2-D parameters only), `logits` (B, T, V) at init.
- `<name>.json`: config, ids, targets, loss at init, losses before steps 1, 2, 3 and after step 3, the global
  gradient norm at init (before clipping), the torch version.

Cross-check: for `learned`, Hugging Face `GPT2LMHeadModel` (eager attention, gelu_new, dropouts 0) loaded with
the same state dict (prefix `transformer.`, lm_head tied to wte) must give the same logits and the same gradients
to 1e-6 in float64; the script asserts it and prints the largest differences.
"""
import json
import os
import sys

import torch
from safetensors.torch import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import VOCAB, TinyGPT, init_params, loss_fn, make_optimizer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "fixtures", "train")
torch.set_num_threads(1)

# name: (n_layer, n_head, n_embd, T, B, mlp, positions, lr, weight_decay)
CONFIGS = {
    "learned": (2, 2, 16, 10, 3, True, "learned", 1e-2, 0.1),
    "rope": (2, 4, 16, 8, 2, False, "rope", 1e-2, 0.1),
    "sinusoidal": (1, 2, 8, 6, 2, True, "sinusoidal", 3e-2, 0.0),
    "none": (1, 1, 8, 5, 2, True, "none", 1e-2, 0.5),
}
STEPS = 3


def batch(b, t, seed):
    """Random ids (B, T) in 0..V-1 and targets (B, T) with about a third -1, at least one scored per row."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, VOCAB, (b, t), generator=g)
    targets = torch.randint(0, VOCAB, (b, t), generator=g)
    ignored = torch.rand(b, t, generator=g) < 1 / 3
    for row in range(b):
        if ignored[row].all():
            ignored[row, 0] = False
    return ids, targets.masked_fill(ignored, -1)


def compact_json(obj):
    """One key per line, each list (or row of a batch) on one line: small and readable in a diff."""
    lines = []
    for k, v in obj.items():
        if k in ("ids", "targets"):
            rows = ",\n  ".join(json.dumps(row) for row in v)
            lines.append(f' "{k}": [\n  {rows}\n ]')
        else:
            lines.append(f" {json.dumps(k)}: {json.dumps(v)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def grad_norm(model):
    return torch.sqrt(sum((p.grad.double() ** 2).sum() for p in model.parameters())).item()


def check_against_transformers(model, ids, targets):
    """Hugging Face GPT-2 with the same weights: same logits and same gradients (float64)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    c = model.h[0].attn.c_attn.weight.shape[0]
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=model.n_positions, n_embd=c, n_layer=len(model.h),
                     n_head=model.h[0].attn.n_head, activation_function="gelu_new", resid_pdrop=0.0,
                     embd_pdrop=0.0, attn_pdrop=0.0, layer_norm_epsilon=1e-5, tie_word_embeddings=True,
                     bos_token_id=None, eos_token_id=None)
    cfg._attn_implementation = "eager"
    hf = GPT2LMHeadModel(cfg).double().eval()
    sd = {"transformer." + k: v for k, v in model.state_dict().items()}
    sd["lm_head.weight"] = sd["transformer.wte.weight"]
    missing, unexpected = hf.load_state_dict(sd, strict=False)
    # non-persistent buffers aside, every parameter must have been loaded
    assert not [k for k in missing if not k.endswith(".attn.bias") and not k.endswith("masked_bias")], missing
    assert not unexpected, unexpected
    assert hf.lm_head.weight.data_ptr() == hf.transformer.wte.weight.data_ptr(), "lm_head must stay tied"

    ours = model(ids)
    theirs = hf(ids).logits
    d_logits = (ours - theirs).abs().max().item()
    model.zero_grad(set_to_none=True)
    loss_fn(ours, targets).backward()
    loss_fn(theirs, targets).backward()
    hf_params = dict(hf.transformer.named_parameters())
    d_grad = max((p.grad - hf_params[k].grad).abs().max().item() for k, p in model.named_parameters())
    model.zero_grad(set_to_none=True)
    print(f"transformers GPT2LMHeadModel vs reference (f64): max |logits diff| {d_logits:.3g}, "
          f"max |grad diff| {d_grad:.3g}")
    assert d_logits < 1e-6 and d_grad < 1e-6, "the reference does not match Hugging Face GPT-2"


def make(k, name):
    n_layer, n_head, n_embd, t, b, mlp, positions, lr, wd = CONFIGS[name]
    model = TinyGPT(n_layer, n_head, n_embd, t, mlp=mlp, positions=positions)
    init_params(model, seed=k)  # float32 draws ...
    model = model.double()  # ... computed on in float64 from here on
    ids, targets = batch(b, t, seed=1000 + k)
    if name == "learned":
        check_against_transformers(model, ids, targets)

    tensors = {f"init.{n}": p.detach().clone() for n, p in model.named_parameters()}
    logits = model(ids)  # (B, T, V)
    loss = loss_fn(logits, targets)
    loss.backward()
    tensors["logits"] = logits.detach().clone()
    tensors.update({f"grad.{n}": p.grad.detach().clone() for n, p in model.named_parameters()})
    norm0 = grad_norm(model)

    opt = make_optimizer(model, lr, wd)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=True)
        step_loss = loss_fn(model(ids), targets)
        step_loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(step_loss.item())
    with torch.no_grad():
        losses.append(loss_fn(model(ids), targets).item())
    tensors.update({f"after3.{n}": p.detach().clone() for n, p in model.named_parameters()})
    assert losses[0] == loss.item()

    save_file({n: v.float().contiguous() for n, v in tensors.items()},
              os.path.join(OUT, f"{name}.safetensors"), metadata={"format": "pt"})
    fixture = {
        "config": {"n_layer": n_layer, "n_head": n_head, "n_embd": n_embd, "vocab": VOCAB, "n_positions": t,
                   "mlp": mlp, "positions": positions, "lr": lr, "weight_decay": wd},
        "ids": ids.tolist(),
        "targets": targets.tolist(),
        "loss": loss.item(),
        "losses": losses,
        "grad_norm": norm0,
        "torch": torch.__version__,
    }
    with open(os.path.join(OUT, f"{name}.json"), "w") as f:
        f.write(compact_json(fixture))
    print(f"{name}: {len(tensors)} tensors, loss {loss.item():.6f}, grad norm {norm0:.6f}, "
          f"losses {[round(x, 6) for x in losses]}")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for k, name in enumerate(CONFIGS):
        make(k, name)
    print("wrote", os.path.normpath(OUT))
