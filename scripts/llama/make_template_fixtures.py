"""Tokenizers whose post-processor is a TemplateProcessing, saved by `transformers`, with its ids.

Run:  python scripts/llama/make_template_fixtures.py    (writes tests/fixtures/llama/template/)
Made with: Python 3.11, tokenizers 0.23.3, transformers 5.24.0 (no torch). No seed: BPE training
is deterministic, and the corpus is CORPUS below (not the chapters, so that editing the book does
not change these fixtures). Fully offline: the hub cannot be reached, so the tokenizers are trained
here, each a small byte-level BPE (VOCAB ids before the added tokens).

`transformers` 5.x writes the template itself: `save_pretrained` of a tokenizer made with
`add_bos_token` / `add_eos_token` replaces the post-processor with a TemplateProcessing
(`update_post_processor`: single "<bos>:0 $A:0 <eos>:0", pair "... <bos>:1 $B:1 <eos>:1", each
special token present only when asked for) and does not write those flags to tokenizer_config.json,
so on loading the template in tokenizer.json is what adds the tokens. Llama 3's own files instead
have a Sequence of ByteLevel and TemplateProcessing, made here with `tokenizers` directly.

Writes one folder per tokenizer under tests/fixtures/llama/template/, each with what
`save_pretrained` wrote (tokenizer.json, tokenizer_config.json) and cases.json:
- bos: Llama 2 / TinyLlama's names (<unk> 0, <s> 1, </s> 2), add_bos_token=True: "<s> $A";
- none: the same with add_bos_token=False: a template that adds nothing ("$A", no special tokens);
- bos_eos: add_bos_token=True and add_eos_token=True: "<s> $A </s>";
- sequence: Llama 3's layout, added tokens after the BPE's ids (<|begin_of_text|> first), the
  post-processor Sequence [ByteLevel, TemplateProcessing "<|begin_of_text|> $A"], and a pair
  template with a special token of two ids (<|sep|>: <|eot_id|> then <|begin_of_text|>).
cases.json has, for each text, `ids` = AutoTokenizer.from_pretrained(folder)(text)["input_ids"]
(checked equal to `tokenizers`' encode with add_special_tokens=True), `plain` = the ids with
add_special_tokens=False, and `decoded` = decode(ids) with the special tokens kept; for each pair
(a, b), `ids` = tokenizer(a, b)["input_ids"] (b is never empty: transformers takes an empty second text
for none and encodes a alone, where `tokenizers` applies the pair template).
"""
import json
import os
import shutil

import tokenizers
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

VOCAB = 300
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "tests", "fixtures", "llama", "template")

CORPUS = [
    "Attention lets every token look at the tokens before it and take a weighted average of their values.",
    "The weights come from a softmax of the scores, the dot products of a query with each key.",
    "Once upon a time there was a little cat. The cat sat on the mat, and the mat was warm.",
    "A model reads the text as tokens: each token is an id, and each id has an embedding.",
    "The start of the text is marked by a special token, so the first word is never alone.",
] * 10

TEXTS = [
    "Hello world",
    "The cat sat on the mat.",
    "",
    " ",
    " leading space",
    "trailing space ",
    "\n",
    "line one\nline two",
    "emoji 😀 and 👩‍👩‍👧",
    "digits 1234 and café",
    "<s>",
    "<s>already a start",
    "</s>",
    "text</s>",
    "<|begin_of_text|>",
    "<|begin_of_text|>Hi<|eot_id|>",
    "<unk>",
]

PAIRS = [
    ("Hello", "world"),
    ("", "only the second"),
    ("The cat", " sat on the mat."),
    ("question?\n", "answer 😀"),
]


def train(special):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        min_frequency=2,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def llama2_style(**flags):
    tok = train(["<unk>", "<s>", "</s>"])
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>", **flags
    )


def llama3_style():
    tok = train([])
    tok.add_special_tokens(["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"])
    bos, eot = tok.token_to_id("<|begin_of_text|>"), tok.token_to_id("<|eot_id|>")
    template = processors.TemplateProcessing(
        single="<|begin_of_text|> $A",
        pair="<|begin_of_text|> $A <|sep|> $B:1",
        special_tokens=[
            ("<|begin_of_text|>", bos),
            {"id": "<|sep|>", "ids": [eot, bos], "tokens": ["<|eot_id|>", "<|begin_of_text|>"]},
        ],
    )
    tok.post_processor = processors.Sequence(
        [processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True), template]
    )
    # No add_bos_token here: transformers then keeps the file's post-processor as it is.
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|begin_of_text|>", eos_token="<|end_of_text|>"
    )


def record(name, made, expect_type):
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    made.save_pretrained(folder)
    path = os.path.join(folder, "tokenizer.json")
    with open(path, encoding="utf-8") as f:
        saved = json.load(f)
    assert saved["post_processor"]["type"] == expect_type, saved["post_processor"]
    auto = transformers.AutoTokenizer.from_pretrained(folder)
    raw = Tokenizer.from_file(path)
    cases = []
    for text in TEXTS:
        ids = auto(text)["input_ids"]
        assert ids == raw.encode(text).ids, (name, text)
        plain = auto(text, add_special_tokens=False)["input_ids"]
        assert plain == raw.encode(text, add_special_tokens=False).ids, (name, text)
        decoded = auto.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        cases.append({"text": text, "ids": ids, "plain": plain, "decoded": decoded})
    pairs = []
    for a, b in PAIRS:
        ids = auto(a, b)["input_ids"]
        assert ids == raw.encode(a, b).ids, (name, a, b)
        pairs.append({"a": a, "b": b, "ids": ids})
    meta = {
        "made_with": f"tokenizers {tokenizers.__version__}, transformers {transformers.__version__}",
        "loaded_as": type(auto).__name__,
        "vocab_size": raw.get_vocab_size(with_added_tokens=True),
        "post_processor": saved["post_processor"],
        "cases": cases,
        "pairs": pairs,
    }
    with open(os.path.join(folder, "cases.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{name}: {os.path.getsize(path)} bytes, vocab {meta['vocab_size']}, 'Hello world' -> {cases[0]['ids']}")


def main():
    record("bos", llama2_style(add_bos_token=True), "TemplateProcessing")
    record("none", llama2_style(add_bos_token=False), "TemplateProcessing")
    record("bos_eos", llama2_style(add_bos_token=True, add_eos_token=True), "TemplateProcessing")
    record("sequence", llama3_style(), "Sequence")


if __name__ == "__main__":
    main()
