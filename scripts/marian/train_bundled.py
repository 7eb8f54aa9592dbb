"""Trains the bundled translation model: dates written out in English words to ISO dates, on this
machine's CPU, offline.

Run:  python scripts/marian/train_bundled.py          (a few minutes on 2 CPU threads; STEPS=… to change)
      python scripts/marian/train_bundled.py fixture  (only the fixture, from the shipped files)
Made with: Python 3.11, torch 2.15.0, transformers 5.24.0, sentencepiece 0.2.3, safetensors 0.8.0;
seeds below.
Writes static/models/dates-marian/{config.json, model.safetensors (F16), source.spm, target.spm,
vocab.json, card.json} and tests/fixtures/marian/dates/reference.json (what transformers computes
with the shipped files).

The task has the shape of translation with alignments that cross: "the twenty-third of march,
nineteen ninety-eight" → "1998-03-23". The target writes the year first, which the source says
last, and the day last, which the source says first, so cross-attention must jump back and forth.
Three source forms: "<day> of <month>, <year>" with words, "<month> <day>, <year>" with words,
and "<day> <month> <year>" with digits. Years 1900-2099.

A `MarianMTModel` (post-norm, sinusoidal positions, swish, tied embeddings) with OPUS-MT's own
tokenizer layout: two SentencePiece unigram models (source: the words; target: digits and "-")
and one `vocab.json`, `</s>` = 0, `<unk>` = 1, `<pad>` last (the decoder's start token), so it
loads in `transformers` unchanged and runs in the page as OPUS-MT does.
"""
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time

import sentencepiece as spm
import torch
import transformers
from safetensors.torch import load_file, save_file
from transformers import MarianConfig, MarianMTModel, MarianTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
OUT = os.path.join(ROOT, "static", "models", "dates-marian")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "marian", "dates")
STEPS = int(os.environ.get("STEPS", "3000"))
BATCH = 64
LR = 1e-3
torch.set_num_threads(2)

ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
    "seventeen eighteen nineteen".split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
ORD = {1: "first", 2: "second", 3: "third", 5: "fifth", 8: "eighth", 9: "ninth", 12: "twelfth"}
MONTHS = "january february march april may june july august september october november december".split()
DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def number(n):
    """0-99 in words: "twenty-three"."""
    if n < 20:
        return ONES[n]
    return TENS[n // 10] + ("" if n % 10 == 0 else "-" + ONES[n % 10])


def ordinal(n):
    """1-31 in words: "twenty-third"."""
    if n in ORD:
        return ORD[n]
    if n < 20:
        return ONES[n] + "th"
    if n % 10 == 0:
        return TENS[n // 10][:-1] + "ieth"
    return TENS[n // 10] + "-" + (ORD.get(n % 10) or ONES[n % 10] + "th")


def year(y):
    """1900-2099 in words, as it is said: "nineteen ninety-eight", "two thousand five", "twenty twelve"."""
    hi, lo = divmod(y, 100)
    if y == 2000:
        return "two thousand"
    if hi == 20 and lo < 10:
        return "two thousand " + ONES[lo]
    if lo == 0:
        return number(hi) + " hundred"
    if lo < 10:
        return number(hi) + " oh " + ONES[lo]
    return number(hi) + " " + number(lo)


def sample(rng):
    y, m = rng.randint(1900, 2099), rng.randint(1, 12)
    d = rng.randint(1, DAYS[m - 1] if m != 2 or (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28)
    form = rng.randint(0, 2)
    if form == 0:
        src = f"the {ordinal(d)} of {MONTHS[m - 1]}, {year(y)}"
    elif form == 1:
        src = f"{MONTHS[m - 1]} {ordinal(d)}, {year(y)}"
    else:
        src = f"{d} {MONTHS[m - 1]} {y}"
    return src, f"{y:04d}-{m:02d}-{d:02d}"


def tokenizer_files(folder):
    rng = random.Random(11)
    pairs = [sample(rng) for _ in range(20000)]
    tmp = os.path.join(tempfile.gettempdir(), "dates-marian-spm")
    os.makedirs(tmp, exist_ok=True)
    for side, texts, vocab in [("source", [p[0] for p in pairs], 120), ("target", [p[1] for p in pairs], 16)]:
        path = os.path.join(tmp, f"{side}.txt")
        with open(path, "w") as f:
            f.write("\n".join(texts))
        spm.SentencePieceTrainer.train(
            input=path, model_prefix=os.path.join(tmp, side), vocab_size=vocab, model_type="unigram",
            character_coverage=1.0, normalization_rule_name="nmt_nfkc", unk_id=1, bos_id=-1, eos_id=0, pad_id=-1,
            hard_vocab_limit=False, minloglevel=2, num_threads=1,
        )
        shutil.copy(os.path.join(tmp, f"{side}.model"), os.path.join(folder, f"{side}.spm"))
    vocab = {"</s>": 0, "<unk>": 1}
    for side in ["source", "target"]:
        sp = spm.SentencePieceProcessor(model_file=os.path.join(folder, f"{side}.spm"))
        for i in range(sp.get_piece_size()):
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    vocab["<pad>"] = len(vocab)
    with open(os.path.join(folder, "vocab.json"), "w") as f:
        json.dump(vocab, f, indent=1)
    return len(vocab)


def load_tokenizer(folder):
    return MarianTokenizer(
        os.path.join(folder, "source.spm"), os.path.join(folder, "target.spm"), os.path.join(folder, "vocab.json"),
        source_lang="en", target_lang="iso",
    )


def accuracy(model, tok, pairs):
    model.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(pairs), 100):
            chunk = pairs[i:i + 100]
            enc = tok([p[0] for p in chunk], return_tensors="pt", padding=True)
            out = model.generate(**enc, num_beams=1, max_new_tokens=16)
            texts = tok.batch_decode(out, skip_special_tokens=True)
            right += sum(t.replace(" ", "") == p[1] for t, p in zip(texts, chunk))
    model.train()
    return right / len(pairs)


def train():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    v = tokenizer_files(OUT)
    tok = load_tokenizer(OUT)
    torch.manual_seed(3)
    cfg = MarianConfig(
        vocab_size=v, d_model=128, encoder_layers=3, decoder_layers=3, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256, activation_function="swish",
        scale_embedding=True, max_position_embeddings=64, pad_token_id=v - 1, decoder_start_token_id=v - 1,
        eos_token_id=0, forced_eos_token_id=0, dropout=0.1, attention_dropout=0.0, activation_dropout=0.0,
        share_encoder_decoder_embeddings=True, tie_word_embeddings=True, num_beams=4, max_length=24,
        bad_words_ids=[[v - 1]],
    )
    model = MarianMTModel(cfg)
    rng = random.Random(2)
    vr = random.Random(2 + 12345)
    val = [sample(vr) for _ in range(1000)]
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 200) * 0.5 * (1 + math.cos(math.pi * min(s, STEPS) / STEPS))
    )
    t0 = time.time()
    model.train()
    for step in range(STEPS):
        batch = [sample(rng) for _ in range(BATCH)]
        enc = tok([b[0] for b in batch], text_target=[b[1] for b in batch], return_tensors="pt", padding=True)
        labels = enc["labels"].masked_fill(enc["labels"] == cfg.pad_token_id, -100)
        loss = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], labels=labels).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 250 == 0 or step == STEPS - 1:
            print(f"step {step} loss {loss.item():.4f} {time.time() - t0:.0f} s", flush=True)
    seconds = time.time() - t0
    model.eval()
    acc = accuracy(model, tok, val)
    print("validation exact match (greedy):", acc)
    tmp = os.path.join(tempfile.gettempdir(), "dates-marian-f32")
    model.save_pretrained(tmp, safe_serialization=True)
    shutil.copy(os.path.join(tmp, "config.json"), os.path.join(OUT, "config.json"))
    weights = {k: t.to(torch.float16).contiguous() for k, t in load_file(os.path.join(tmp, "model.safetensors")).items()}
    save_file(weights, os.path.join(OUT, "model.safetensors"), metadata={"format": "pt"})
    # The shipped F16 weights, reloaded: the card's figures are theirs.
    shipped = MarianMTModel.from_pretrained(OUT, dtype=torch.float32).eval()
    acc16 = accuracy(shipped, tok, val)
    params = sum(p.numel() for p in shipped.parameters()) - shipped.model.encoder.embed_positions.weight.numel() * 2
    card = {
        "name": "Dates in words to ISO dates (small Marian translation model)",
        "task": "English dates in words or digits to ISO 8601: 'the twenty-third of march, nineteen ninety-eight' -> "
        "'1998-03-23'; the target's year comes first and its day last, the source's the other way round",
        "trained_by": "scripts/marian/train_bundled.py",
        "architecture": {k: getattr(cfg, k) for k in [
            "model_type", "d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads",
            "decoder_attention_heads", "encoder_ffn_dim", "decoder_ffn_dim", "activation_function",
            "scale_embedding", "max_position_embeddings", "vocab_size", "tie_word_embeddings"]},
        "parameters": params,
        "file_bytes": os.path.getsize(os.path.join(OUT, "model.safetensors")),
        "tokenizer": f"two SentencePiece unigram models (source: words, target: digits and '-') and vocab.json, {v} ids",
        "steps": STEPS, "batch": BATCH, "learning_rate": LR, "train_seconds": round(seconds),
        "validation": "1000 dates from random.Random(12347), greedy decoding, exact match",
        "exact_match_f32": acc, "exact_match_f16": acc16,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
    }
    with open(os.path.join(OUT, "card.json"), "w") as f:
        json.dump(card, f, indent=1)
    print(json.dumps(card, indent=1))


def fixture():
    """What transformers computes with the shipped files: the engine must compute the same."""
    tok = load_tokenizer(OUT)
    model = MarianMTModel.from_pretrained(OUT, dtype=torch.float32, attn_implementation="eager").eval()
    cases = []
    vr = random.Random(99)
    texts = ["the twenty-third of march, nineteen ninety-eight", "july fourth, two thousand five", "1 may 2026"]
    texts += [sample(vr)[0] for _ in range(5)]
    for text in texts:
        enc = tok(text, return_tensors="pt")
        row = {"text": text, "source": enc["input_ids"][0].tolist()}
        with torch.no_grad():
            for beams in [1, 4]:
                out = model.generate(**enc, num_beams=beams, max_new_tokens=16)
                row[f"beams{beams}"] = {"tokens": out[0].tolist(), "text": tok.decode(out[0], skip_special_tokens=True)}
            full = model(**enc, decoder_input_ids=out[:, :-1], output_attentions=True)
            row["cross_attentions_last_layer"] = [round(x, 6) for x in full.cross_attentions[-1][0].reshape(-1).tolist()]
        cases.append(row)
    os.makedirs(FIXTURE, exist_ok=True)
    with open(os.path.join(FIXTURE, "reference.json"), "w") as f:
        json.dump(cases, f)
    print(cases[0]["beams4"])


if __name__ == "__main__":
    if sys.argv[1:] != ["fixture"]:
        train()
    fixture()
