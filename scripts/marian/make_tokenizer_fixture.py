"""A small Marian tokenizer and `transformers`' ids on edge cases, fully offline.

Run:  python scripts/marian/make_tokenizer_fixture.py      (writes tests/fixtures/marian/tokenizer/)
Made with: Python 3.11, sentencepiece 0.2.3, transformers 5.24.0.

OPUS-MT's tokenizer is two SentencePiece unigram models (`source.spm`, `target.spm`, with the
default `nmt_nfkc` normalization) and one `vocab.json` that maps both models' pieces to the
model's ids (`</s>` 0, `<unk>` 1, …, `<pad>` last). Here the source model is trained on the
book's own chapters (English prose, 400 pieces) and the target model on the same prose made
into a language of its own (lower case, umlauts and ß; 300 pieces),
and `vocab.json` is built the way the OPUS-MT conversion builds it: the specials, then the
source model's pieces, then the target model's that are new, then `<pad>`.
`cases.json`: for each text, `MarianTokenizer`'s ids as a source (`tok(text)`) and as a target
(`tok(text_target=text)`), and the decoding of the source ids.

Beside it, `tests/fixtures/marian/translator/`: a small random `MarianMTModel` (seed 7, d_model 32,
2 + 2 layers of 4 heads, swish, tied, init_std 0.2) whose vocabulary is this tokenizer's, and
`translations.json`: for a few sentences, what `generate` writes from the tokenizer's ids
(greedy, and 4 beams; at most 12 new tokens) and that output decoded: text in, text out.
"""
import glob
import json
import os
import re
import shutil
import tempfile

import sentencepiece as spm
import torch
from transformers import MarianConfig, MarianMTModel, MarianTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "marian", "tokenizer")

CASES = [
    "Attention is all you need.",
    "The cat sat on the mat, and the dog did not.",
    "café naïve résumé Ångström",
    "e\u0301 and é",
    "1234 56.78 3,14 1/2 2026-11-27",
    "!!!???... -- (x) [y] {z} \"quoted\" 'single'",
    "  two   spaces\tand\ttabs\nand a newline  ",
    "日本語 🙂 ∑ Ω",
    "Donaudampfschifffahrtsgesellschaftskapitänswitwe",
    "ＡＢＣ１２３ ﬁne ½",
    "Übermorgen fährt er nach Köln.",
    ">>de<< Hello world",
    ">>de<< one</s>>>fr<< two",
    "an </s> inside and <unk> too",
    "",
    "a",
    "A   ",
    "\u00a0non-breaking\u2009thin\u3000ideographic",
]


def corpus(path, german=False):
    text = []
    for f in sorted(glob.glob(os.path.join(ROOT, "chapters", "*.md"))):
        for line in open(f, encoding="utf-8"):
            line = re.sub(r"[`*_#>\[\]{}|$\\]", " ", line).strip()
            if len(line) > 20:
                if german:
                    # A target language of its own: the same prose lower-cased, with umlauts and ß.
                    line = line.lower().replace("ae", "ä").replace("oe", "ö").replace("ue", "ü").replace("ss", "ß")
                text.append(line)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(text))


def train(text, prefix, vocab):
    spm.SentencePieceTrainer.train(
        input=text, model_prefix=prefix, vocab_size=vocab, model_type="unigram", character_coverage=0.9995,
        normalization_rule_name="nmt_nfkc", unk_id=1, bos_id=-1, eos_id=0, pad_id=-1, unk_piece="<unk>",
        eos_piece="</s>", minloglevel=2, seed_sentencepiece_size=100000, num_threads=1,
    )


def translator(tok, v):
    torch.manual_seed(7)
    torch.set_num_threads(1)
    cfg = MarianConfig(
        vocab_size=v, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, activation_function="swish",
        scale_embedding=True, max_position_embeddings=64, pad_token_id=v - 1, decoder_start_token_id=v - 1,
        eos_token_id=0, forced_eos_token_id=0, init_std=0.2, dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0, share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
    )
    cfg._attn_implementation = "eager"
    model = MarianMTModel(cfg).eval()
    folder = os.path.join(ROOT, "tests", "fixtures", "marian", "translator")
    shutil.rmtree(folder, ignore_errors=True)
    model.save_pretrained(folder, safe_serialization=True)
    os.remove(os.path.join(folder, "generation_config.json"))
    out = []
    for text in ["The cat sat on the mat.", "Attention is all you need.", "Where is the station?"]:
        src = tok(text, return_tensors="pt")
        row = {"text": text, "source": src["input_ids"][0].tolist()}
        for beams in [1, 4]:
            with torch.no_grad():
                ids = model.generate(**src, num_beams=beams, max_new_tokens=12, do_sample=False, bad_words_ids=[[v - 1]])
            row[f"beams{beams}"] = {"tokens": ids[0].tolist(), "text": tok.decode(ids[0], skip_special_tokens=True)}
        out.append(row)
    with open(os.path.join(folder, "translations.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
    print(out[0])


if __name__ == "__main__":
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    # A fixed folder: the models record their training file's path, so reruns write the same bytes.
    tmp = os.path.join(tempfile.gettempdir(), "marian-tokenizer-fixture")
    os.makedirs(tmp, exist_ok=True)
    english, german = os.path.join(tmp, "en.txt"), os.path.join(tmp, "de.txt")
    corpus(english)
    corpus(german, german=True)
    train(english, os.path.join(tmp, "source"), 400)
    train(german, os.path.join(tmp, "target"), 300)
    for side in ["source", "target"]:
        shutil.copy(os.path.join(tmp, f"{side}.model"), os.path.join(OUT, f"{side}.spm"))
    vocab = {"</s>": 0, "<unk>": 1}
    for side in ["source", "target"]:
        sp = spm.SentencePieceProcessor(model_file=os.path.join(OUT, f"{side}.spm"))
        for i in range(sp.get_piece_size()):
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    vocab["<pad>"] = len(vocab)
    with open(os.path.join(OUT, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=1)
    tok = MarianTokenizer(
        os.path.join(OUT, "source.spm"), os.path.join(OUT, "target.spm"), os.path.join(OUT, "vocab.json"),
        source_lang="en", target_lang="de",
    )
    cases = []
    for text in CASES:
        src = tok(text)["input_ids"]
        tgt = tok(text_target=text)["input_ids"]
        cases.append({"text": text, "source": src, "target": tgt, "decoded": tok.decode(src, skip_special_tokens=True)})
    with open(os.path.join(OUT, "cases.json"), "w", encoding="utf-8") as f:
        json.dump({"vocab_size": len(vocab), "cases": cases}, f, ensure_ascii=False, indent=1)
    print(len(vocab), "ids;", cases[2])
    translator(tok, len(vocab))
