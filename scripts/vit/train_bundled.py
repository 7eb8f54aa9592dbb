"""Trains the bundled Vision Transformer: six shapes drawn by this script, on this machine's CPU,
offline.

Run:  python scripts/vit/train_bundled.py          (a few minutes on 2 CPU threads; STEPS=… to change)
      python scripts/vit/train_bundled.py fixture  (only the fixture, from the shipped files)
Made with: Python 3.11, torch 2.15.0, transformers 5.24.0, Pillow 13.0.0, safetensors 0.8.0; seeds below.
Writes static/models/shapes-vit/{config.json, model.safetensors (F16), preprocessor_config.json,
card.json} and tests/fixtures/vit/shapes/reference.json (what transformers computes with the
shipped files on a few drawn pictures).

The task: which of six shapes a picture shows (circle, square, triangle, star, cross, line), drawn
in dark ink on light paper, filled or as an outline, of any size, position and turn, the way a
reader draws one on the page's canvas. Each picture is drawn at 128 × 128 with Pillow and shrunk
to 32 × 32 with its bilinear filter (as the image processor shrinks a reader's drawing), with a
little noise.

A `ViTForImageClassification`: 32 × 32 pictures in 4 × 4 patches (an 8 × 8 grid: 64 patch tokens
and the class token), width 64, 4 layers of 4 heads, MLP 128, exact GELU; the image processor
resizes to 32 × 32 (bilinear) and maps 0..255 to −1..1. It loads in `transformers` unchanged.
"""
import json
import math
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import PIL
import torch
import transformers
from PIL import Image, ImageDraw
from safetensors.torch import load_file, save_file
from transformers import ViTConfig, ViTForImageClassification
from transformers.image_utils import PILImageResampling
from transformers.models.vit.image_processing_pil_vit import ViTImageProcessorPil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
OUT = os.path.join(ROOT, "static", "models", "shapes-vit")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "vit", "shapes")
STEPS = int(os.environ.get("STEPS", "4000"))
BATCH = 128
LR = 2e-3
SHAPES = ["circle", "square", "triangle", "star", "cross", "line"]
torch.set_num_threads(2)


def polygon(cx, cy, r, n, turn, inner=None):
    """The corners of a regular polygon (a star with `inner`, the radius of its inner corners)."""
    points = []
    k = 2 * n if inner else n
    for i in range(k):
        radius = (inner if i % 2 else r) if inner else r
        a = turn + 2 * math.pi * i / k
        points.append((cx + radius * math.sin(a), cy - radius * math.cos(a)))
    return points


def draw(rng, shape):
    """One 32 × 32 RGB picture of `shape` (uint8, (32, 32, 3))."""
    big = 128
    bg = rng.integers(200, 256, 3)  # paper
    fg = rng.integers(0, 100, 3)  # ink
    img = Image.new("RGB", (big, big), tuple(int(x) for x in bg))
    d = ImageDraw.Draw(img)
    r = rng.uniform(22, 58)
    cx, cy = rng.uniform(r, big - r), rng.uniform(r, big - r)
    filled = rng.random() < 0.3 and shape not in ("cross", "line")
    width = int(rng.uniform(5, 14))
    turn = rng.uniform(0, 2 * math.pi)
    colour = tuple(int(x) for x in fg)
    if shape == "circle":
        box = [cx - r, cy - r, cx + r, cy + r]
        d.ellipse(box, fill=colour if filled else None, outline=colour, width=width)
    elif shape in ("square", "triangle", "star"):
        pts = {"square": lambda: polygon(cx, cy, r, 4, turn), "triangle": lambda: polygon(cx, cy, r, 3, turn),
               "star": lambda: polygon(cx, cy, r, 5, turn, inner=r * 0.45)}[shape]()
        if filled:
            d.polygon(pts, fill=colour)
        else:
            d.line(pts + [pts[0]], fill=colour, width=width, joint="curve")
    elif shape == "cross":
        for a in (turn, turn + math.pi / 2):
            dx, dy = r * math.cos(a), r * math.sin(a)
            d.line([(cx - dx, cy - dy), (cx + dx, cy + dy)], fill=colour, width=width + 2)
    else:  # line
        dx, dy = r * math.cos(turn), r * math.sin(turn)
        d.line([(cx - dx, cy - dy), (cx + dx, cy + dy)], fill=colour, width=width + 2)
    small = np.asarray(img.resize((32, 32), Image.BILINEAR), dtype=np.float64)
    small = small + rng.normal(0, 4, small.shape)
    return np.clip(np.rint(small), 0, 255).astype(np.uint8)


def dataset(seed, n):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(SHAPES), n)
    return np.stack([draw(rng, SHAPES[k]) for k in labels]), labels


def processor():
    return ViTImageProcessorPil(size={"height": 32, "width": 32}, resample=PILImageResampling.BILINEAR,
                                image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])


def pixels(images):
    """What the image processor gives for 32 × 32 pictures (no resizing): (x / 255 − 0.5) / 0.5."""
    x = torch.from_numpy(images.astype(np.float32) / 255.0).permute(0, 3, 1, 2)
    return (x - 0.5) / 0.5


def accuracy(model, images, labels):
    with torch.no_grad():
        out = torch.cat([model(pixel_values=pixels(images[i:i + 500])).logits for i in range(0, len(images), 500)])
    return float((out.argmax(-1).numpy() == labels).mean())


def train():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    t0 = time.time()
    train_x, train_y = dataset(1, 40000)
    val_x, val_y = dataset(2, 2000)
    print(f"drew {len(train_x) + len(val_x)} pictures in {time.time() - t0:.0f} s", flush=True)
    torch.manual_seed(3)
    cfg = ViTConfig(image_size=32, patch_size=4, num_channels=3, hidden_size=64, num_hidden_layers=4,
                    num_attention_heads=4, intermediate_size=128, hidden_act="gelu", layer_norm_eps=1e-12,
                    qkv_bias=True, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                    id2label=dict(enumerate(SHAPES)), label2id={s: i for i, s in enumerate(SHAPES)})
    model = ViTForImageClassification(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 200) * 0.5 * (1 + math.cos(math.pi * min(s, STEPS) / STEPS)))
    g = torch.Generator().manual_seed(4)
    t0 = time.time()
    model.train()
    for step in range(STEPS):
        idx = torch.randint(0, len(train_x), (BATCH,), generator=g).numpy()
        loss = model(pixel_values=pixels(train_x[idx]), labels=torch.from_numpy(train_y[idx])).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 250 == 0 or step == STEPS - 1:
            print(f"step {step} loss {loss.item():.4f} {time.time() - t0:.0f} s", flush=True)
    seconds = time.time() - t0
    model.eval()
    acc = accuracy(model, val_x, val_y)
    print("validation accuracy:", acc)
    tmp = os.path.join(tempfile.gettempdir(), "shapes-vit-f32")
    model.save_pretrained(tmp, safe_serialization=True)
    shutil.copy(os.path.join(tmp, "config.json"), os.path.join(OUT, "config.json"))
    weights = {k: t.to(torch.float16).contiguous() for k, t in load_file(os.path.join(tmp, "model.safetensors")).items()}
    save_file(weights, os.path.join(OUT, "model.safetensors"), metadata={"format": "pt"})
    processor().save_pretrained(OUT)
    # The shipped F16 weights, reloaded: the card's figures are theirs.
    shipped = ViTForImageClassification.from_pretrained(OUT, dtype=torch.float32).eval()
    acc16 = accuracy(shipped, val_x, val_y)
    card = {
        "name": "Six drawn shapes (small Vision Transformer)",
        "task": "which shape a picture shows: " + ", ".join(SHAPES) + "; in dark ink on light paper, filled or "
        "outlined, any size, place and turn, drawn by the training script",
        "trained_by": "scripts/vit/train_bundled.py",
        "architecture": {k: getattr(cfg, k) for k in [
            "model_type", "image_size", "patch_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
            "intermediate_size", "hidden_act"]},
        "parameters": sum(p.numel() for p in shipped.parameters()),
        "file_bytes": os.path.getsize(os.path.join(OUT, "model.safetensors")),
        "training_pictures": len(train_x), "steps": STEPS, "batch": BATCH, "learning_rate": LR,
        "train_seconds": round(seconds),
        "validation": "2000 pictures from numpy's default_rng(2), top-1 accuracy",
        "accuracy_f32": acc, "accuracy_f16": acc16,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "pillow": PIL.__version__},
    }
    with open(os.path.join(OUT, "card.json"), "w") as f:
        json.dump(card, f, indent=1)
    print(json.dumps(card, indent=1))


def fixture():
    """What transformers computes with the shipped files on a few pictures: the engine must compute
    the same, from the same bytes through its own image processor."""
    model = ViTForImageClassification.from_pretrained(OUT, dtype=torch.float32, attn_implementation="eager").eval()
    proc = transformers.AutoImageProcessor.from_pretrained(OUT, backend="pil")
    images, labels = dataset(5, 6)
    cases = []
    for image, label in zip(images, labels):
        with torch.no_grad():
            x = proc(images=image, return_tensors="pt")["pixel_values"]
            out = model(pixel_values=x, output_attentions=True)
        cases.append({"shape": SHAPES[label], "rgb": image.reshape(-1).tolist(),
                      "logits": [round(v, 6) for v in out.logits[0].tolist()],
                      "cls_attention_last_layer": [round(v, 6) for v in out.attentions[-1][0, :, 0].reshape(-1).tolist()]})
    os.makedirs(FIXTURE, exist_ok=True)
    with open(os.path.join(FIXTURE, "reference.json"), "w") as f:
        json.dump(cases, f)
    print([(c["shape"], int(np.argmax(c["logits"]))) for c in cases])


if __name__ == "__main__":
    if sys.argv[1:] != ["fixture"]:
        train()
    fixture()
