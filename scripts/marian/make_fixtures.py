"""Reference fixtures for the Marian (translation Transformer) engine, made by Hugging Face
transformers, fully offline.

Run:  python scripts/marian/make_fixtures.py      (writes tests/fixtures/marian/)
Made with: Python 3.11, torch 2.15.0, transformers 5.24.0, safetensors 0.8.0, seeds below.

Small random `MarianMTModel`s (init_std 0.2, so attention is far from uniform), eager attention
(sdpa returns no weights), a random `final_logits_bias` (zeros would not test it):
- `tied`: d_model 32, 2 encoder and 2 decoder layers of 4 heads, FFN 64, vocab 120, `swish`,
  `scale_embedding` true, the output layer tied to the shared embeddings;
- `untied`: d_model 24, 3 encoder layers of 4 heads (FFN 48) and 1 decoder layer of 2 heads
  (FFN 40), vocab 100, `relu`, no embedding scale, an output layer of its own.
Each folder: config.json, model.safetensors (as `save_pretrained` writes it: the tied copies and
the sinusoidal positions left out), and reference.json with a source sentence's ids, a target
prefix's ids (the decoder start token first), and what the model computes on them with teacher
forcing: the encoder's hidden states (after the embeddings and after each layer), every
attention of every kind (encoder self-attention, decoder masked self-attention,
cross-attention; per layer (heads, T, S)), the decoder's hidden states, the logits of every
target position, the logits with one head of each kind knocked out (its slice of `out_proj`'s
input zeroed by a forward pre-hook); then greedy decoding and beam search (4 beams, length penalty 1) from the
source: the tokens and, for beam search, each returned hypothesis with its score.
"""
import json
import os
import shutil

import torch
from transformers import MarianConfig, MarianMTModel

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "fixtures", "marian")
torch.set_num_threads(1)


def r(x, nd=7):
    """Round for a compact JSON file; 7 significant digits keep errors far below 1e-4."""
    return [float(f"{v:.{nd}g}") for v in x.reshape(-1).tolist()]


SHAPES = {
    "tied": dict(
        vocab_size=120, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, activation_function="swish",
        scale_embedding=True, tie_word_embeddings=True, max_position_embeddings=64,
    ),
    "untied": dict(
        vocab_size=100, d_model=24, encoder_layers=3, decoder_layers=1, encoder_attention_heads=4,
        decoder_attention_heads=2, encoder_ffn_dim=48, decoder_ffn_dim=40, activation_function="relu",
        scale_embedding=False, tie_word_embeddings=False, max_position_embeddings=48,
    ),
}


# (kind, layer, head) knocked out one at a time.
KNOCK_OUTS = {
    "tied": [("encoder", 1, 2), ("decoder", 0, 3), ("cross", 1, 0)],
    "untied": [("encoder", 2, 1), ("decoder", 0, 1), ("cross", 0, 0)],
}


def make(name, shape, seed):
    torch.manual_seed(seed)
    v = shape["vocab_size"]
    cfg = MarianConfig(
        **shape, pad_token_id=v - 1, decoder_start_token_id=v - 1, eos_token_id=0, forced_eos_token_id=0,
        init_std=0.2, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, static_position_embeddings=True,
        share_encoder_decoder_embeddings=True,
    )
    cfg._attn_implementation = "eager"
    model = MarianMTModel(cfg).eval()
    with torch.no_grad():
        model.final_logits_bias.normal_(0.0, 0.5)
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    model.save_pretrained(folder, safe_serialization=True)
    for extra in ["generation_config.json"]:
        if os.path.exists(os.path.join(folder, extra)):
            os.remove(os.path.join(folder, extra))

    # A source of 9 tokens ending in </s> (id 0), as the tokenizer writes it; a target prefix of 6.
    src = torch.randint(1, v - 1, (1, 9))
    src[0, -1] = 0
    tgt = torch.cat([torch.tensor([[v - 1]]), torch.randint(1, v - 1, (1, 5))], dim=1)
    out = {"source": src[0].tolist(), "target": tgt[0].tolist()}
    with torch.no_grad():
        res = model(input_ids=src, decoder_input_ids=tgt, output_attentions=True, output_hidden_states=True)
        out["encoder_hidden_states"] = [r(h[0]) for h in res.encoder_hidden_states]
        out["encoder_attentions"] = [r(a[0]) for a in res.encoder_attentions]
        out["decoder_hidden_states"] = [r(h[0]) for h in res.decoder_hidden_states]
        out["decoder_attentions"] = [r(a[0]) for a in res.decoder_attentions]
        out["cross_attentions"] = [r(a[0]) for a in res.cross_attentions]
        out["logits"] = r(res.logits[0])

        # Knock-outs: one head of one kind of attention, its slice of out_proj's input zeroed.
        out["knock_outs"] = []
        for kind, layer, head in KNOCK_OUTS[name]:
            side = model.model.encoder if kind == "encoder" else model.model.decoder
            attn = side.layers[layer].encoder_attn if kind == "cross" else side.layers[layer].self_attn
            d = attn.head_dim

            def zero(module, args, h=head, d=d):
                x = args[0].clone()
                x[..., h * d:(h + 1) * d] = 0
                return (x,)

            hook = attn.out_proj.register_forward_pre_hook(zero)
            knocked = model(input_ids=src, decoder_input_ids=tgt).logits[0]
            hook.remove()
            out["knock_outs"].append({"kind": kind, "layer": layer, "head": head, "logits": r(knocked)})

        common = dict(max_new_tokens=10, min_new_tokens=0, do_sample=False, bad_words_ids=[[v - 1]])
        greedy = model.generate(src, num_beams=1, **common)
        out["greedy"] = greedy[0].tolist()
        beams = model.generate(
            src, num_beams=4, num_return_sequences=4, length_penalty=1.0, early_stopping=False,
            output_scores=True, return_dict_in_generate=True, **common,
        )
        out["beam"] = [
            {"tokens": s.tolist(), "score": float(sc)} for s, sc in zip(beams.sequences, beams.sequences_scores)
        ]
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(out, f)
    print(name, "greedy", out["greedy"], "beam", [b["tokens"] for b in out["beam"]][:2])


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for i, (name, shape) in enumerate(SHAPES.items()):
        make(name, shape, 1000 + i)
