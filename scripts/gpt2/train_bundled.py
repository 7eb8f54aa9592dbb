"""Trains the two GPT-2 models the book ships, on this machine's CPU, offline.

Run:  python scripts/gpt2/train_bundled.py induction   (~5 min on 1 CPU thread)
      python scripts/gpt2/train_bundled.py stories     (~25 min on 1 CPU thread)
Made with: Python 3.11, torch 2.15.0, transformers 5.23.0, safetensors 0.8.0; seeds fixed below.
Writes static/models/<name>/{config.json, model.safetensors (F16), card.json}.

Both are GPT2LMHeadModel (GPT-2's architecture, GPT-2's tokenizer, vocab_size 50257 in the
shipped file). To train fast on a CPU, the output layer is trained only over the GPT-2 ids the
training text uses (a "compact vocabulary"); the exported `wte` puts those rows back at their
GPT-2 ids. The other rows must give logits far below any real token's, and GPT-2 has no output
bias, so one residual feature is made constant: ln_f's weight is held at 0 and its bias at 1 in
feature 0, so after ln_f that feature is always 1. An unused token's row is (-UNUSED_LOGIT, 0, …),
so its logit is exactly -UNUSED_LOGIT; a used token's feature-0 entry acts as its output bias.

- `induction`: random strings of capital letters repeated ("Q F K B Q F K B"): the model can
  only predict the repeat by finding the earlier copy, which grows a previous-token head and an
  induction head (Olsson et al. 2022). The card names both, found by their scores.
- `stories`: generated short stories about pets and people, built so that pronouns refer back to
  animals and people and what follows a pronoun depends on who it is. The card names the head in
  which, for "My cat is small, cute, and fluffy. She likes belly rubs.", "She" puts its largest
  weight on "cat", and reports validation perplexity on stories from a held-out seed.
"""
import glob
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time

import torch
from safetensors.torch import save_file
from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
VOCAB = 50257
EOT = 50256
UNUSED_LOGIT = 30.0
torch.set_num_threads(int(os.environ.get("THREADS", "1")))


def tokenizer():
    reg = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/tiktoken-rs-0.12.1/assets"))[0]
    with tempfile.TemporaryDirectory() as d:
        shutil.copy(os.path.join(reg, "encoder.json"), os.path.join(d, "vocab.json"))
        shutil.copy(os.path.join(reg, "vocab.bpe"), os.path.join(d, "merges.txt"))
        return GPT2TokenizerFast.from_pretrained(d)


# ---------------------------------------------------------------- data

LETTERS = [chr(c) for c in range(ord("A"), ord("Z") + 1)]


def induction_text(rng):
    seq = [rng.choice(LETTERS) for _ in range(rng.randint(4, 14))]
    reps = rng.randint(2, 4)
    return " ".join(seq * reps)


ANIMALS = {
    "cat": (["belly rubs", "fish", "warm milk", "sleeping in the sun", "chasing mice"], ["purrs on the sofa", "climbs the curtains", "naps all day", "hides under the bed"]),
    "dog": (["long walks", "bones", "playing fetch", "rolling in the mud", "the park"], ["barks at the mailman", "wags the tail", "digs in the garden", "runs after the ball"]),
    "bird": (["seeds", "singing", "the open window", "shiny things", "apples"], ["sings every morning", "flies around the room", "builds a nest", "sits on the roof"]),
    "rabbit": (["carrots", "lettuce", "soft hay", "jumping", "the garden"], ["hops across the lawn", "digs a hole", "wiggles the nose", "sleeps in a box"]),
    "horse": (["apples", "running", "fresh grass", "the big field", "sugar"], ["gallops by the river", "eats hay", "jumps the fence", "pulls the cart"]),
    "duck": (["the pond", "bread", "swimming", "the rain", "bugs"], ["quacks loudly", "swims in the pond", "waddles to the lake", "splashes in puddles"]),
    "mouse": (["cheese", "crumbs", "small holes", "the dark", "seeds"], ["squeaks at night", "runs along the wall", "nibbles the bread", "hides in the barn"]),
    "fox": (["the forest", "berries", "the night", "eggs", "the snow"], ["sneaks through the woods", "digs a den", "jumps over the log", "howls at the moon"]),
    "goat": (["climbing", "grass", "the hills", "paper", "rocks"], ["climbs the rocks", "eats everything", "jumps on the table", "butts the gate"]),
    "pig": (["mud", "apples", "corn", "a warm bath", "the barn"], ["rolls in the mud", "sleeps in the straw", "oinks at dinner", "sniffs the ground"]),
}
ADJ = ["small", "cute", "fluffy", "big", "old", "young", "shy", "brave", "happy", "lazy", "quick", "soft", "loud", "quiet", "playful", "gentle", "clever", "tiny", "grumpy", "sleepy"]
GIRLS = ["Anna", "Lily", "Mia", "Emma", "Sara", "Lucy", "Nora", "Ella", "Rose", "Kate"]
BOYS = ["Tom", "Ben", "Sam", "Jack", "Leo", "Max", "Noah", "Adam", "Paul", "Finn"]
PETS = ["Luna", "Milo", "Bella", "Oscar", "Coco", "Rex", "Daisy", "Charlie", "Pip", "Ziggy"]
SUBJ = {"f": "She", "m": "He"}
OBJ = {"f": "her", "m": "him"}
POSS = {"f": "Her", "m": "His"}


def story(rng):
    """One short story: an animal introduced, then sentences that refer back to it by pronoun."""
    animal = rng.choice(list(ANIMALS))
    likes, does = ANIMALS[animal]
    g = rng.choice("fm")
    p = SUBJ[g]
    a = rng.sample(ADJ, 3)
    kind = rng.random()
    if kind < 0.4:
        owner = rng.choice(["My", "Our", "The"])
        intro = rng.choice([f"{owner} {animal} is {a[0]}, {a[1]}, and {a[2]}.", f"{owner} {animal} is {a[0]} and {a[1]}.", f"{owner} {animal} is very {a[0]}."])
    elif kind < 0.7:
        intro = rng.choice([f"There was a {a[0]} {animal} called {rng.choice(PETS)}.", f"I have a {a[0]} {animal}."])
    else:
        # Two people: the pronoun must pick the person by gender.
        girl, boy = rng.choice(GIRLS), rng.choice(BOYS)
        first, second = (girl, boy) if rng.random() < 0.5 else (boy, girl)
        owner_g = rng.choice("fm")
        owner = girl if owner_g == "f" else boy
        intro = f"{first} and {second} went to the farm. {SUBJ[owner_g]} saw a {a[0]} {animal}."
        tail = rng.choice([f"{SUBJ[owner_g]} gave it {rng.choice(likes)}.", f"It liked {owner}.", f"{owner} smiled at it."])
        return f"{intro} {tail} {p} likes {rng.choice(likes)}. {p} {rng.choice(does)}."
    lines = [intro]
    for _ in range(rng.randint(2, 4)):
        lines.append(rng.choice([
            f"{p} likes {rng.choice(likes)}.",
            f"{p} {rng.choice(does)}.",
            f"Every day {p.lower()} {rng.choice(does)}.",
            f"{POSS[g]} favourite thing is {rng.choice(likes)}.",
            f"When it rains, {p.lower()} {rng.choice(does)}.",
            f"We love {OBJ[g]} very much.",
        ]))
    return " ".join(lines)


# ---------------------------------------------------------------- training

def batches(make_text, tok, rng, T, B):
    """Endless (B, T+1) batches of stories joined by <|endoftext|>, as GPT-2 was trained."""
    buf = []
    while True:
        while len(buf) < B * (T + 1):
            buf += [EOT] + tok(make_text(rng))["input_ids"]
        chunk, buf = buf[: B * (T + 1)], buf[B * (T + 1):]
        yield torch.tensor(chunk).view(B, T + 1)


def train(name, make_text, cfg_kwargs, T, B, steps, lr, seed):
    tok = tokenizer()
    rng = random.Random(seed)
    # The compact vocabulary: every GPT-2 id the generator can emit (plus <|endoftext|>).
    probe = random.Random(seed + 99)
    used = {EOT}
    for _ in range(20000):
        used.update(tok(make_text(probe))["input_ids"])
    used = sorted(used)
    to_compact = {g: i for i, g in enumerate(used)}
    print(f"{name}: {len(used)} GPT-2 ids in use", flush=True)

    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=len(used), **cfg_kwargs, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    cfg._attn_implementation = "eager"
    model = GPT2LMHeadModel(cfg)
    ln_f = model.transformer.ln_f

    def pin():
        with torch.no_grad():
            ln_f.weight[0] = 0.0
            ln_f.bias[0] = 1.0

    pin()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.95))
    lut = torch.full((VOCAB,), -1, dtype=torch.long)
    lut[torch.tensor(used)] = torch.arange(len(used))
    data = batches(make_text, tok, rng, T, B)
    t0 = time.time()
    for step in range(steps):
        x = lut[next(data)]
        for g in opt.param_groups:  # linear warm-up, cosine decay
            g["lr"] = lr * min(1.0, (step + 1) / 200) * 0.5 * (1 + math.cos(math.pi * step / steps))
        logits = model(x[:, :-1]).logits  # (B, T, compact vocab)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, len(used)), x[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        pin()
        if step % 100 == 0 or step == steps - 1:
            print(f"{name} step {step}/{steps} loss {loss.item():.3f} ({time.time() - t0:.0f} s)", flush=True)
    model.eval()

    # Validation on text from a held-out seed, through the full 50257-way output of the export.
    full = export(model, used, cfg_kwargs)
    vrng = random.Random(seed + 12345)
    vdata = batches(make_text, tok, vrng, T, 16)
    nll, n = 0.0, 0
    with torch.no_grad():
        for _ in range(8):
            x = next(vdata)
            logits = full(x[:, :-1]).logits
            nll += torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), x[:, 1:].reshape(-1), reduction="sum").item()
            n += x[:, 1:].numel()
    ppl = math.exp(nll / n)
    print(f"{name}: validation perplexity {ppl:.3f} over {n} tokens", flush=True)
    return full, tok, {"train_seconds": round(time.time() - t0), "steps": steps, "batch": B, "context": T,
                       "tokens_seen": steps * B * T, "compact_vocab": len(used), "val_perplexity": round(ppl, 3), "val_tokens": n}


def export(model, used, cfg_kwargs):
    """The trained compact model as a full-vocabulary GPT2LMHeadModel (see the module doc)."""
    cfg = GPT2Config(vocab_size=VOCAB, **cfg_kwargs)
    cfg._attn_implementation = "eager"
    full = GPT2LMHeadModel(cfg).eval()
    sd = {k: v for k, v in model.state_dict().items() if k not in ("transformer.wte.weight", "lm_head.weight")}
    wte = torch.zeros(VOCAB, cfg.n_embd)
    wte[:, 0] = -UNUSED_LOGIT
    wte[torch.tensor(used)] = model.transformer.wte.weight.detach()
    sd["transformer.wte.weight"] = wte
    full.load_state_dict(sd, strict=False)
    full.tie_weights()
    with torch.no_grad():  # ship F16: run the reference on exactly the shipped numbers
        for p in full.parameters():
            p.copy_(p.half().float())
    return full


def attention(full, tok, text):
    ids = torch.tensor([tok(text)["input_ids"]])
    with torch.no_grad():
        att = full(ids, output_attentions=True).attentions
    return ids[0].tolist(), [a[0] for a in att]  # per layer (H, T, T)


def save(name, full, card):
    folder = os.path.join(ROOT, "static", "models", name)
    os.makedirs(folder, exist_ok=True)
    sd = {k.removeprefix("transformer."): v.half().contiguous() for k, v in full.state_dict().items()
          if k != "lm_head.weight" and not k.endswith(".attn.bias")}
    save_file(sd, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    c = full.config
    config = {"model_type": "gpt2", "vocab_size": c.vocab_size, "n_positions": c.n_positions, "n_embd": c.n_embd,
              "n_layer": c.n_layer, "n_head": c.n_head, "n_inner": None, "activation_function": "gelu_new",
              "layer_norm_epsilon": 1e-5, "tie_word_embeddings": True}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    card["versions"] = {"torch": torch.__version__, "transformers": __import__("transformers").__version__}
    with open(os.path.join(folder, "card.json"), "w") as f:
        json.dump(card, f, indent=2)
    print("wrote", folder, flush=True)


def induction():
    cfg = dict(n_positions=64, n_embd=64, n_layer=2, n_head=4)
    full, tok, stats = train("induction", induction_text, cfg, T=48, B=32, steps=int(os.environ.get("STEPS", 2500)), lr=2e-3, seed=1)
    # Score every head on held-out repeated strings: previous-token score = mean weight on i−1;
    # induction score = mean weight, in the repeats, on the token after the earlier copy of token i.
    rng = random.Random(777)
    prev = torch.zeros(cfg["n_layer"], cfg["n_head"])
    ind = torch.zeros_like(prev)
    n = 50
    for _ in range(n):
        seq = [rng.choice(LETTERS) for _ in range(8)]
        ids, att = attention(full, tok, " ".join(seq * 3))
        T = len(ids)
        for l, a in enumerate(att):
            prev[l] += torch.stack([a[:, i, i - 1] for i in range(1, T)], 1).mean(1) / n
            ind[l] += torch.stack([a[:, i, i - 8 + 1] for i in range(8, T)], 1).mean(1) / n
    pl, ph = divmod(int(prev.argmax()), cfg["n_head"])
    il, ih = divmod(int(ind.argmax()), cfg["n_head"])
    print("previous-token scores", prev, "induction scores", ind, sep="\n")
    card = {"name": "Induction (tiny)", "trained_on": "random strings of capital letters A-Z (4 to 14 letters) repeated 2 to 4 times, joined by <|endoftext|>",
            "architecture": cfg, **stats,
            "previous_token_head": {"layer": pl, "head": ph, "score": round(prev[pl, ph].item(), 3)},
            "induction_head": {"layer": il, "head": ih, "score": round(ind[il, ih].item(), 3)},
            "scores": {"previous_token": prev.round(decimals=3).tolist(), "induction": ind.round(decimals=3).tolist()}}
    save("induction", full, card)


def stories():
    cfg = dict(n_positions=128, n_embd=128, n_layer=4, n_head=4)
    full, tok, stats = train("stories", story, cfg, T=128, B=16, steps=int(os.environ.get("STEPS", 4000)), lr=1.5e-3, seed=2)
    text = "My cat is small, cute, and fluffy. She likes belly rubs."
    ids, att = attention(full, tok, text)
    she, cat = ids.index(1375), ids.index(3797)  # " She", " cat"
    best = None
    for l, a in enumerate(att):
        for h in range(a.shape[0]):
            row = a[h, she]
            if int(row.argmax()) == cat and (best is None or row[cat] > best[2]):
                best = (l, h, row[cat].item())
    print("She→cat head:", best)
    samples = []
    with torch.no_grad():
        for prompt in ["My dog is", "There was a small fox called", "Anna and Tom went to the farm."]:
            x = torch.tensor([tok(prompt)["input_ids"]])
            y = full.generate(x, max_new_tokens=30, do_sample=False, pad_token_id=EOT, attention_mask=torch.ones_like(x))
            samples.append(tok.decode(y[0]))
    print("\n".join(samples))
    card = {"name": "Pet stories (small)", "trained_on": "generated short stories about pets and people (scripts/gpt2/train_bundled.py, seed 2): 10 animals, 20 adjectives, 30 names, pronouns that refer back",
            "architecture": cfg, **stats,
            "she_cat_head": None if best is None else {"layer": best[0], "head": best[1], "weight": round(best[2], 3)},
            "greedy_samples": samples}
    save("stories", full, card)


if __name__ == "__main__":
    {"induction": induction, "stories": stories}[sys.argv[1]]()
