"""Trains the bundled Llama-family model on the same pet stories as the bundled GPT-2, on this machine's CPU, offline.

Run:  python scripts/llama/train_bundled.py          (~23 min on 1 CPU thread; STEPS=… to change)
      python scripts/llama/train_bundled.py fixture  (only the fixture, from the shipped files)
Made with: Python 3.11, torch 2.15.0, transformers 5.24.0, tokenizers 0.23.3, safetensors 0.8.0; seeds below.
Writes static/models/stories-llama/{config.json, model.safetensors (F16), tokenizer.json, card.json}
and tests/fixtures/llama/stories/reference.json (what transformers computes on the shipped file).

The text is scripts/gpt2/train_bundled.py's own story generator (imported, not copied), with its
seeds: training stories from random.Random(2), validation stories from random.Random(2 + 12345),
joined by <|endoftext|> and cut into (16, 129) batches exactly as that script does.

The model is a LlamaForCausalLM (RMSNorm, RoPE, SwiGLU) with grouped-query attention: 4 query
heads share 2 KV heads (each KV head serves 2 query heads), so the book can show a real model whose
cache holds half as many K and V rows as it has heads. The embedding and output layer are tied.

Its tokenizer is its own: a byte-level BPE configured as SmolLM2's (the pre-tokenizer is
Digits(individual_digits=True) then ByteLevel(add_prefix_space=False), ByteLevel decoder and
post-processor, `<|endoftext|>` = 0 and SmolLM2's other special tokens after it), trained by the
`tokenizers` library on stories from random.Random(2 + 99) (the seed the GPT-2 script uses to
find the ids its stories use). VOCAB is small so that most words are one token.

Validation perplexity is per token of this tokenizer; the GPT-2 model's is per GPT-2 token, so the
two are comparable only roughly. The card also gives this model's figure per GPT-2 token: the same
total negative log-likelihood divided by the number of GPT-2 tokens the validation text has.
"""
import importlib.util
import json
import math
import os
import random
import shutil
import sys
import time

import tokenizers
import torch
import transformers
from safetensors.torch import load_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "static", "models", "stories-llama")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "llama", "stories")
torch.set_num_threads(int(os.environ.get("THREADS", "1")))

# The GPT-2 script's generator, imported under its own name (this file has the same file name).
_spec = importlib.util.spec_from_file_location(
    "gpt2_train_bundled", os.path.join(ROOT, "scripts", "gpt2", "train_bundled.py"))
gpt2 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpt2)
story = gpt2.story

SEED = 2  # the GPT-2 stories model's seed: same training, tokenizer-probe and validation streams
VOCAB = 1024
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<repo_name>", "<file_sep>"]
EOT = 0
T, B = 128, 16
STEPS = int(os.environ.get("STEPS", 4000))
LR = 1.5e-3
ARCH = dict(hidden_size=128, intermediate_size=352, num_hidden_layers=4, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=128, rope_theta=10000.0, rms_norm_eps=1e-5,
            tie_word_embeddings=True)
SHE_CAT = "My cat is small, cute, and fluffy. She likes belly rubs."
PROMPTS = ["My dog is", "There was a small fox called", "Anna and Tom went to the farm."]
FIXTURE_PROMPTS = [SHE_CAT, "Ben and Lily went to the farm. She saw a"]


def train_tokenizer(path):
    probe = random.Random(SEED + 99)
    text = [story(probe) for _ in range(20000)]
    tok = Tokenizer(models.BPE(ignore_merges=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True),
         pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    )
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, min_frequency=2, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(text, trainer)
    tok.save(path, pretty=False)
    fast = PreTrainedTokenizerFast(tokenizer_file=path, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    assert fast.convert_tokens_to_ids("<|endoftext|>") == EOT
    return fast


def batches(tok, rng, batch):
    """Endless (batch, T+1) batches of stories joined by <|endoftext|>, as the GPT-2 script makes them."""
    buf = []
    while True:
        while len(buf) < batch * (T + 1):
            buf += [EOT] + tok(story(rng))["input_ids"]
        chunk, buf = buf[: batch * (T + 1)], buf[batch * (T + 1):]
        yield torch.tensor(chunk).view(batch, T + 1)


def train(tok):
    torch.manual_seed(SEED)
    cfg = LlamaConfig(vocab_size=len(tok), bos_token_id=EOT, eos_token_id=EOT, pad_token_id=None, **ARCH)
    cfg._attn_implementation = "eager"  # "sdpa" returns no attention weights
    model = LlamaForCausalLM(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01, betas=(0.9, 0.95))
    data = batches(tok, random.Random(SEED), B)
    t0 = time.time()
    for step in range(STEPS):
        x = next(data)
        for g in opt.param_groups:  # linear warm-up, cosine decay (the GPT-2 script's schedule)
            g["lr"] = LR * min(1.0, (step + 1) / 200) * 0.5 * (1 + math.cos(math.pi * step / STEPS))
        logits = model(x[:, :-1]).logits  # (B, T, vocab)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg.vocab_size), x[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0 or step == STEPS - 1:
            print(f"step {step}/{STEPS} loss {loss.item():.3f} ({time.time() - t0:.0f} s)", flush=True)
    return model.eval(), round(time.time() - t0)


def validate(model, tok):
    vdata = batches(tok, random.Random(SEED + 12345), 16)
    nll, n = 0.0, 0
    with torch.no_grad():
        for _ in range(8):
            x = next(vdata)
            logits = model(x[:, :-1]).logits
            nll += torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1),
                                                     reduction="sum").item()
            n += x[:, 1:].numel()
    # Tokens per GPT-2 token on held-out stories: converts the total NLL to a per-GPT-2-token figure.
    g2 = gpt2.tokenizer()
    vrng = random.Random(SEED + 12345)
    texts = [story(vrng) for _ in range(2000)]
    ours = sum(len(tok(t)["input_ids"]) + 1 for t in texts)
    theirs = sum(len(g2(t)["input_ids"]) + 1 for t in texts)
    ppl = math.exp(nll / n)
    per_gpt2 = math.exp(nll / n * ours / theirs)
    print(f"validation perplexity {ppl:.3f} over {n} tokens; {ours / theirs:.3f} tokens per GPT-2 token; "
          f"{per_gpt2:.3f} per GPT-2 token", flush=True)
    return {"val_perplexity": round(ppl, 3), "val_tokens": n, "tokens_per_gpt2_token": round(ours / theirs, 4),
            "val_perplexity_per_gpt2_token": round(per_gpt2, 3)}


def she_cat_head(model, tok):
    ids = tok(SHE_CAT)["input_ids"]
    she, cat = ids.index(tok.convert_tokens_to_ids("ĠShe")), ids.index(tok.convert_tokens_to_ids("Ġcat"))
    with torch.no_grad():
        att = model(torch.tensor([ids]), output_attentions=True).attentions
    best, weights = None, []
    for layer, a in enumerate(att):
        weights.append([round(a[0, h, she, cat].item(), 3) for h in range(a.shape[1])])
        for h in range(a.shape[1]):
            row = a[0, h, she]
            if int(row.argmax()) == cat and (best is None or row[cat] > best[2]):
                best = (layer, h, row[cat].item())
    print("She→cat head:", best, "weights on cat:", weights, flush=True)
    head = None if best is None else {"layer": best[0], "head": best[1], "weight": round(best[2], 3)}
    return head, weights


def greedy(model, tok, prompt, n):
    """n greedy tokens after the prompt, with the KV cache, not stopping at <|endoftext|> (as the engine's)."""
    out = []
    with torch.no_grad():
        res = model(torch.tensor([tok(prompt)["input_ids"]]), use_cache=True)
        for _ in range(n):
            out.append(int(torch.argmax(res.logits[0, -1])))
            res = model(torch.tensor([[out[-1]]]), past_key_values=res.past_key_values, use_cache=True)
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    tok_path = os.path.join(OUT, "tokenizer.json")
    tok = train_tokenizer(tok_path)
    for word in ["ĠShe", "Ġcat"]:
        assert word in tok.get_vocab(), word
    print(f"tokenizer: {len(tok)} tokens, {os.path.getsize(tok_path)} bytes", flush=True)
    model, seconds = train(tok)
    with torch.no_grad():  # ship F16: everything below runs on exactly the shipped numbers
        for p in model.parameters():
            p.copy_(p.half().float())
    stats = validate(model, tok)
    head, weights = she_cat_head(model, tok)
    samples = []
    for prompt in PROMPTS:
        ids = tok(prompt)["input_ids"]
        out = greedy(model, tok, prompt, 30)
        if EOT in out:
            out = out[: out.index(EOT) + 1]
        samples.append(tok.decode(ids + out, clean_up_tokenization_spaces=False))
    print("\n".join(samples), flush=True)

    # The shipped files: config.json and F16 safetensors as save_pretrained writes them (lm_head is tied).
    tmp = os.path.join(OUT, "tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.half().save_pretrained(tmp, safe_serialization=True)
    model.float()
    for name in ("config.json", "model.safetensors"):
        shutil.move(os.path.join(tmp, name), os.path.join(OUT, name))
        os.chmod(os.path.join(OUT, name), 0o644)  # served as it is
    shutil.rmtree(tmp)
    shipped = load_file(os.path.join(OUT, "model.safetensors"))
    assert all(t.dtype == torch.float16 for t in shipped.values()) and "lm_head.weight" not in shipped
    params = sum(t.numel() for t in shipped.values())
    size = os.path.getsize(os.path.join(OUT, "model.safetensors"))
    assert size <= 15_000_000, size

    cfg = model.config
    card = {
        "name": "Pet stories (small, Llama family)",
        "trained_on": "generated short stories about pets and people (the generator of scripts/gpt2/train_bundled.py, "
                      "seed 2, as the GPT-2 stories model): 10 animals, 20 adjectives, 30 names, pronouns that refer "
                      "back; trained by scripts/llama/train_bundled.py",
        "architecture": {"model_type": "llama", "hidden_size": cfg.hidden_size,
                         "intermediate_size": cfg.intermediate_size, "num_hidden_layers": cfg.num_hidden_layers,
                         "num_attention_heads": cfg.num_attention_heads,
                         "num_key_value_heads": cfg.num_key_value_heads, "head_dim": cfg.head_dim,
                         "max_position_embeddings": cfg.max_position_embeddings, "rope_theta": ARCH["rope_theta"],
                         "rms_norm_eps": cfg.rms_norm_eps, "tie_word_embeddings": True, "vocab_size": cfg.vocab_size},
        "parameters": params,
        "file_bytes": size,
        "tokenizer": f"byte-level BPE in SmolLM2's configuration, {len(tok)} tokens, trained on 20000 stories "
                     f"(seed {SEED + 99}); <|endoftext|> = 0",
        "train_seconds": seconds,
        "steps": STEPS,
        "batch": B,
        "context": T,
        "tokens_seen": STEPS * B * T,
        "learning_rate": LR,
        **stats,
        "perplexity_note": "per token of this model's own tokenizer; val_perplexity_per_gpt2_token divides the same "
                           "total by the GPT-2 token count of the validation stories, for a rough comparison with "
                           "the GPT-2 stories model",
        "she_cat_head": head,
        "she_to_cat_weights": weights,
        "greedy_samples": samples,
        "seeds": {"torch": SEED, "training_stories": SEED, "tokenizer_stories": SEED + 99,
                  "validation_stories": SEED + 12345},
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "tokenizers": tokenizers.__version__},
    }
    with open(os.path.join(OUT, "card.json"), "w") as f:
        json.dump(card, f, indent=2, ensure_ascii=False)
    print("wrote", OUT, flush=True)
    write_fixture(tok_path)


def write_fixture(tok_path):
    """Token ids, last-position logits and a greedy continuation by transformers, from the shipped files."""
    tok = PreTrainedTokenizerFast(tokenizer_file=tok_path)
    raw = Tokenizer.from_file(tok_path)
    model = LlamaForCausalLM.from_pretrained(OUT, dtype=torch.float32, attn_implementation="eager").eval()
    cases = []
    for prompt in FIXTURE_PROMPTS:
        ids = tok.encode(prompt)
        assert ids == raw.encode(prompt).ids, prompt
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0, -1]  # (vocab,)
        cases.append({"text": prompt, "ids": ids, "last_logits": [float(f"{v:.7g}") for v in logits.tolist()],
                      "greedy": greedy(model, tok, prompt, 20)})
    os.makedirs(FIXTURE, exist_ok=True)
    made = f"torch {torch.__version__}, transformers {transformers.__version__}, tokenizers {tokenizers.__version__}"
    with open(os.path.join(FIXTURE, "reference.json"), "w") as f:
        json.dump({"made_with": made, "cases": cases}, f, separators=(",", ":"), ensure_ascii=False)
    print("wrote", FIXTURE, flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["fixture"]:
        write_fixture(os.path.join(OUT, "tokenizer.json"))
    else:
        main()
