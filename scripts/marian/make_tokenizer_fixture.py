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
"""
import glob
import json
import os
import re
import shutil
import tempfile

import sentencepiece as spm
from transformers import MarianTokenizer

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


if __name__ == "__main__":
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    with tempfile.TemporaryDirectory() as tmp:
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
