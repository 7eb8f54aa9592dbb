"""The peer of `examples/marian_bench.rs`: the same measurements on the same shape in PyTorch.

Run:  /tmp/ref/bin/python bench/pytorch_marian.py [threads]      (default: 1 thread)
Made with: Python 3.11, torch 2.15.0, transformers 5.24.0.

A random `MarianMTModel` of `Helsinki-NLP/opus-mt-en-de`'s shape (eager attention, F32), the same
27-token source; medians of 5: the encoder alone, the encoder and the first decoder step, 20
greedy tokens with the KV cache (`generate`, min and max 20 new tokens), beam search with 4
beams and at most 20 new tokens.
"""
import statistics
import sys
import time

import torch
from transformers import MarianConfig, MarianMTModel

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
torch.set_num_threads(threads)
torch.manual_seed(1)
cfg = MarianConfig(
    vocab_size=58101, d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
    decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048, activation_function="swish",
    scale_embedding=True, max_position_embeddings=512, pad_token_id=58100, decoder_start_token_id=58100,
    eos_token_id=0, forced_eos_token_id=0, share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
)
cfg._attn_implementation = "eager"
model = MarianMTModel(cfg).eval()
source = torch.tensor([[100 + (i * 7919) % 58000 for i in range(26)] + [0]])


def time_ms(f):
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        f()
        runs.append((time.perf_counter() - t) * 1e3)
    return statistics.median(runs)


with torch.no_grad():
    encode = time_ms(lambda: model.model.encoder(source))
    start = torch.tensor([[58100]])
    first = time_ms(lambda: model(input_ids=source, decoder_input_ids=start))
    greedy = time_ms(lambda: model.generate(source, num_beams=1, min_new_tokens=20, max_new_tokens=20, do_sample=False))
    out = model.generate(source, num_beams=4, max_new_tokens=20, do_sample=False)
    beam = time_ms(lambda: model.generate(source, num_beams=4, max_new_tokens=20, do_sample=False))
steps = out.shape[1] - 1
print(f"| PyTorch {torch.__version__}, {threads} thread(s), eager | {encode:.1f} ms | {first:.1f} ms | "
      f"{20 / (greedy / 1e3):.1f} | {steps}, {steps / (beam / 1e3):.1f} |")
