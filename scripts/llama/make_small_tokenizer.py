"""A tokenizer.json that fits the tiny Llama fixtures (vocab_size 300), for tests of a whole model.

Run:  python scripts/llama/make_small_tokenizer.py    (writes tests/fixtures/llama/tokenizer300/)
Made with: Python 3.11, tokenizers 0.23.3 (only to check the result loads; no randomness, no seed).

The fixtures in tests/fixtures/llama/{gqa,mqa,gqa_bf16} have 300 embedding rows, and the tokenizer
fixture (tests/fixtures/llama/tokenizer/, SmolLM2's configuration, 1,200 ids) does not fit them. This
keeps that tokenizer's first 300 ids: its 5 special tokens, the 256 byte tokens, and the merges
whose result is among the kept ids (BPE training gives merge i the id 261 + i, so the first 39).
Everything else (pre-tokenizer, decoder, post-processor, added tokens) is unchanged.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
VOCAB = 300


def main():
    src = os.path.join(ROOT, "tests", "fixtures", "llama", "tokenizer", "tokenizer.json")
    with open(src, encoding="utf-8") as f:
        tok = json.load(f)
    vocab = {t: i for t, i in tok["model"]["vocab"].items() if i < VOCAB}
    tok["model"]["vocab"] = vocab
    tok["model"]["merges"] = [m for m in tok["model"]["merges"] if "".join(m) in vocab]
    tok["added_tokens"] = [a for a in tok["added_tokens"] if a["id"] < VOCAB]
    out = os.path.join(ROOT, "tests", "fixtures", "llama", "tokenizer300")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "tokenizer.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, indent=1)
        f.write("\n")
    try:
        import tokenizers

        t = tokenizers.Tokenizer.from_file(path)
        print("ids of 'the cat':", t.encode("the cat").ids, "vocab", t.get_vocab_size())
    except ImportError:
        pass
    print("wrote", path, len(vocab), "tokens,", len(tok["model"]["merges"]), "merges")


if __name__ == "__main__":
    main()
