"""PyTorch eager training speed for the training lab's largest model, the reference for the Rust engine (src/train/).

Run:  python bench/pytorch_train.py [--threads N] [--steps S]     (needs torch; CPU; not part of CI)
Made with Python 3.11.7, torch 2.15.0. The model and optimiser are scripts/train/reference.py (the same module
as the fixtures): L=2, H=4, C=64, T=32, B=32, MLP on, learned positions, V=28, float32, parameters initialised
as the fixtures' (seed 0). A step is what the engine does per step: forward, loss, backward, clip to global norm
1.0, AdamW (betas (0.9, 0.95), eps 1e-8, lr 1e-3, weight decay 0.1 on the 2-D parameters), on one fixed random
batch (ids in 0..27, every target scored). torch.set_num_threads(--threads, default 1: the browser's worker has
one); 5 warm-up steps, then --steps (default 50) timed together.
Prints `pytorch eager: X steps/s (threads N, torch V)` and a JSON line with the figures.
"""
import argparse
import json
import os
import platform
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "train"))
from reference import VOCAB, TinyGPT, init_params, make_optimizer, train_step  # noqa: E402

L, H, C, T, B = 2, 4, 64, 32, 32
WARMUP = 5


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=50)
    args = ap.parse_args()
    if args.threads < 1 or args.steps < 1:
        ap.error("--threads and --steps must be at least 1")
    torch.set_num_threads(args.threads)

    model = TinyGPT(L, H, C, T, mlp=True, positions="learned")
    init_params(model, seed=0)
    opt = make_optimizer(model, lr=1e-3, wd=0.1)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (B, T), generator=g)  # (B, T)
    targets = torch.randint(0, VOCAB, (B, T), generator=g)  # (B, T)

    for _ in range(WARMUP):
        train_step(model, opt, ids, targets)
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss, _ = train_step(model, opt, ids, targets)
    loss = loss.item()  # eager CPU ops are synchronous; read it anyway so nothing is pending
    seconds = time.perf_counter() - t0

    rate = args.steps / seconds
    print(f"pytorch eager: {rate:.1f} steps/s (threads {args.threads}, torch {torch.__version__})")
    print(json.dumps({
        "engine": "pytorch-eager", "torch": torch.__version__, "python": platform.python_version(),
        "threads": args.threads, "steps": args.steps, "warmup": WARMUP, "seconds": round(seconds, 4),
        "steps_per_s": round(rate, 2), "ms_per_step": round(1e3 / rate, 3), "final_loss": round(loss, 4),
        "config": {"n_layer": L, "n_head": H, "n_embd": C, "n_positions": T, "batch": B, "vocab": VOCAB,
                   "mlp": True, "positions": "learned", "dtype": "f32"},
        "params": sum(p.numel() for p in model.parameters()),
    }))


if __name__ == "__main__":
    main()
