"""A reference tokenizer for the Llama-family tokenizer, made by Hugging Face `tokenizers`, fully offline.

Run:  python scripts/llama/make_tokenizer_fixture.py    (writes tests/fixtures/llama/tokenizer/)
Made with: Python 3.11, tokenizers 0.23.3, transformers 5.24.0. BPE training is deterministic
(no seed is involved); the corpus is the book's own chapters (chapters/*.md, sorted by name).

The hub cannot be reached here, so instead of SmolLM2-135M's own tokenizer.json this trains a small
one (VOCAB tokens) configured exactly like it: a byte-level BPE whose pre-tokenizer is the Sequence
`Digits(individual_digits=True)` then `ByteLevel(add_prefix_space=False, use_regex=True)`, a
ByteLevel decoder and post-processor, and special tokens as added tokens with `<|endoftext|>` = 0,
then `<|im_start|>`, `<|im_end|>` and two more of SmolLM2's (`<repo_name>`, `<file_sep>`).

Writes:
- tokenizer.json: the trained tokenizer (merges as [a, b] pairs, as `tokenizers` saves them);
- cases.json: edge-case strings, each with the ids from
  `transformers.PreTrainedTokenizerFast(tokenizer_file=...)` (checked equal to the raw `tokenizers`
  ids) and `decoded`, the text `decode(ids)` gives back (clean_up_tokenization_spaces=False).
"""
import glob
import json
import os

import tokenizers
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

VOCAB = 1200
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<repo_name>", "<file_sep>"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "tests", "fixtures", "llama", "tokenizer")

CASES = [
    "Hello world",
    "My cat is small, cute, and fluffy. She likes belly rubs.",
    "Attention is all you need.",
    "",
    " ",
    "a",
    "   leading spaces",
    "trailing spaces   ",
    "trailing space ",
    "runs   of    spaces     inside",
    "tab\tseparated\tvalues",
    "\t\tdouble tab",
    "line one\nline two\n\nline four",
    "windows\r\nline\r\nendings\r\n",
    "\n\n\n",
    "digits 1234567890 and 3.14159, 1,000,000 and -42",
    "2026-11-24T21:57:00Z",
    "x1y22z333",
    "superscript ² fraction ½ arabic ٣ digits",
    "one ⅓ cup, ① and Ⅳ (numeric, not ASCII digits: each its own piece)",
    "café naïve résumé Ångström façade",
    "e\u0301 combining accent",
    "Grüße aus Köln, ça va? ¿Qué tal?",
    "emoji 😀 🙂‍↔️ 👩‍👩‍👧 🇫🇷 family",
    "😀😀😀",
    "中文字符和日本語のテキスト、한국어",
    "Привет, мир! Ελληνικά",
    "mixed中文English混合123",
    "contractions: don't, I'm, you're, we've, they'll, she'd, it's",
    "CAPS DON'T SHOUT",
    "<|endoftext|>",
    "Once upon a time<|endoftext|>The end.",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n",
    "<|im_start|><|im_end|><|endoftext|>",
    "<repo_name>attention<file_sep>src/lib.rs",
    "<|endoftext",
    "<|im_start |>",
    "not<|endoftext|>spaced <|endoftext|> spaced",
    "symbols !@#$%^&*()_+-=[]{}|;':\",./<>?`~",
    "math: q·k / √d, softmax(QKᵀ) ≤ 1 → ∑ = 1",
    "non-breaking\u00a0space and\u2028line separator",
    "zero\u200bwidth",
    "\u0000nul and \u0007bell",
    "ﬁ ligature and Ｆｕｌｌｗｉｄｔｈ",
    "=" * 500 + " " * 500 + "ab" * 250 + "-" * 499 + "\n" * 300,
    "The softmax of the scores gives the weights; each output is a weighted average of the values.",
]


def main():
    files = sorted(glob.glob(os.path.join(ROOT, "chapters", "*.md")))
    tok = Tokenizer(models.BPE(ignore_merges=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        min_frequency=2,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train(files, trainer)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "tokenizer.json")
    tok.save(path, pretty=False)

    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=path)
    raw = Tokenizer.from_file(path)
    cases = []
    for text in CASES:
        ids = fast.encode(text)
        assert ids == raw.encode(text).ids, text
        decoded = fast.decode(ids, clean_up_tokenization_spaces=False)
        assert decoded == raw.decode(ids, skip_special_tokens=False), text
        cases.append({"text": text, "ids": ids, "decoded": decoded})
    assert fast.convert_tokens_to_ids("<|endoftext|>") == 0
    meta = {
        "made_with": f"tokenizers {tokenizers.__version__}, transformers {transformers.__version__}",
        "vocab_size": raw.get_vocab_size(with_added_tokens=True),
        "cases": cases,
    }
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(meta, f, ensure_ascii=False, indent=1)
    print(f"wrote {path} ({os.path.getsize(path)} bytes), {len(cases)} cases, vocab {meta['vocab_size']}")


if __name__ == "__main__":
    main()
