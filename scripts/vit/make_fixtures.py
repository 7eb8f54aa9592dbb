"""Reference fixtures for the Vision Transformer engine, made by Hugging Face transformers, fully
offline.

Run:  python scripts/vit/make_fixtures.py      (writes tests/fixtures/vit/)
Made with: Python 3.11, torch 2.15.0, transformers 5.24.0, safetensors 0.8.0, seeds below.

Small random models (initializer_range 0.2, so attention is far from uniform), eager attention
(sdpa returns no weights):
- `vit`: `ViTForImageClassification`, 32 × 32 images in 8 × 8 patches (16 patches and the class
  token), width 32, 2 layers of 4 heads, MLP 64, 5 classes, exact GELU;
- `deit`: `DeiTForImageClassificationWithTeacher`, 24 × 24 images in 6 × 6 patches (16 patches,
  the class token and the distillation token), width 24, 3 layers of 2 heads, MLP 48, 4 classes,
  its logits the mean of the class head's and the distillation head's.
Each folder: config.json and model.safetensors as `save_pretrained` writes them, and
reference.json with the pixel values fed (1, 3, H, W; random, seeded), the hidden states (after
the embeddings and after each layer, before the final layer norm), every layer's attention
(heads, N, N), the logits, the logits with one head knocked out (its slice of the attention's
output projection's input zeroed by a forward pre-hook), and the attention rollout of Abnar and
Zuidema (2020) over every layer, computed here in float64 from the attentions as their paper
defines it: each layer's weights averaged over the heads, the identity added for the residual
connection, each row divided by its sum (A' = (A + I) / 2), and the layers' products in order,
rollout = A'_L ··· A'_1 (N, N).

Each folder also has a preprocessor_config.json (`vit`: resize to 32 × 32, bilinear, mean and std
0.5; `deit`: resize to 28 × 28, bicubic, centre crop 24 × 24, ImageNet's mean and std), and
reference.json the image processor's work on a drawn 45 × 37 RGB image (gradients, a
checkerboard of sharp edges, noise; numpy seed 7) with transformers' PIL backend (Pillow 13.0.0):
"image" (height, width, the RGB bytes row by row) and "preprocessed" (3, H, W).
"""
import json
import os
import shutil

import numpy as np
import torch
from transformers import DeiTConfig, DeiTForImageClassificationWithTeacher, ViTConfig, ViTForImageClassification
from transformers.image_utils import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, PILImageResampling
from transformers.models.deit.image_processing_pil_deit import DeiTImageProcessorPil
from transformers.models.vit.image_processing_pil_vit import ViTImageProcessorPil

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "fixtures", "vit")
torch.set_num_threads(1)


def r(x, nd=7):
    """Round for a compact JSON file; 7 significant digits keep errors far below 1e-4."""
    return [float(f"{v:.{nd}g}") for v in x.reshape(-1).tolist()]


COMMON = dict(num_channels=3, hidden_act="gelu", layer_norm_eps=1e-12, qkv_bias=True, initializer_range=0.2,
              attn_implementation="eager")
SHAPES = {
    "vit": (ViTConfig, ViTForImageClassification, dict(
        image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, id2label={i: f"class {i}" for i in range(5)}, **COMMON)),
    "deit": (DeiTConfig, DeiTForImageClassificationWithTeacher, dict(
        image_size=24, patch_size=6, hidden_size=24, num_hidden_layers=3, num_attention_heads=2,
        intermediate_size=48, id2label={i: f"kind {i}" for i in range(4)}, **COMMON)),
}
PROCESSORS = {
    "vit": lambda: ViTImageProcessorPil(size={"height": 32, "width": 32}, resample=PILImageResampling.BILINEAR,
                                        image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5]),
    "deit": lambda: DeiTImageProcessorPil(size={"height": 28, "width": 28}, crop_size={"height": 24, "width": 24},
                                          resample=PILImageResampling.BICUBIC, image_mean=IMAGENET_DEFAULT_MEAN,
                                          image_std=IMAGENET_DEFAULT_STD),
}


def drawn_image():
    """A 45 × 37 RGB picture whose resizing exercises the rounding: smooth gradients, sharp edges, noise."""
    h, w = 37, 45
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([x * 255 / (w - 1), y * 255 / (h - 1), ((x // 4 + y // 4) % 2) * 255], axis=-1)
    img = img + np.random.default_rng(7).normal(0, 12, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


# (layer, head) knocked out.
KNOCK_OUT = {"vit": (1, 2), "deit": (0, 1)}


def attention_modules(model):
    """Each layer's attention block, whose output projection reads the heads side by side."""
    return [m for name, m in model.named_modules() if name.endswith("attention") and hasattr(m, "o_proj")]


for seed, (name, (Config, Model, kw)) in enumerate(SHAPES.items()):
    torch.manual_seed(100 + seed)
    cfg = Config(**kw)
    model = Model(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():  # biases and norms away from their neutral init, so they are tested
            if p.dim() == 1:
                p.add_(0.1 * torch.randn_like(p))
        for n, p in model.named_parameters():  # DeiT starts its tokens and positions at zero
            if "embeddings." in n and "patch" not in n:
                p.add_(0.5 * torch.randn_like(p))
    pixels = torch.randn(1, 3, cfg.image_size, cfg.image_size)
    with torch.no_grad():
        out = model(pixel_values=pixels, output_hidden_states=True, output_attentions=True)
        layer, head = KNOCK_OUT[name]
        d = cfg.hidden_size // cfg.num_attention_heads
        o_proj = attention_modules(model)[layer].o_proj

        def zero(_module, args):
            x = args[0].clone()
            x[..., head * d:(head + 1) * d] = 0
            return (x,)

        handle = o_proj.register_forward_pre_hook(zero)
        knocked = model(pixel_values=pixels).logits
        handle.remove()
    rollout = torch.eye(out.attentions[0].shape[-1], dtype=torch.float64)
    for a in out.attentions:
        a = a[0].double().mean(0)
        a = a + torch.eye(a.shape[0], dtype=torch.float64)
        a = a / a.sum(-1, keepdim=True)
        rollout = a @ rollout
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    model.save_pretrained(folder)
    reference = {
        "pixel_values": r(pixels),
        "hidden_states": [r(h[0]) for h in out.hidden_states],
        "attentions": [r(a[0]) for a in out.attentions],
        "logits": r(out.logits[0]),
        "knock_out": {"layer": layer, "head": head, "logits": r(knocked[0])},
        "rollout": r(rollout),
    }
    processor = PROCESSORS[name]()
    processor.save_pretrained(folder)
    image = drawn_image()
    preprocessed = processor(images=image, return_tensors="np")["pixel_values"][0]
    reference["image"] = {"height": image.shape[0], "width": image.shape[1], "rgb": image.reshape(-1).tolist()}
    reference["preprocessed"] = r(preprocessed)
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(reference, f)
    print(name, "logits", out.logits[0].tolist())
