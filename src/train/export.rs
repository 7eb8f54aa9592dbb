//! The trained model as a Hugging Face GPT-2 checkpoint: `config.json` and `model.safetensors`
//! (F32, the names without the `transformer.` prefix, as the public GPT-2 checkpoints), which
//! `GPT2LMHeadModel.from_pretrained` and the book's own loader read unchanged.
//!
//! GPT-2 has learned positions and an MLP in every block, so the other variants are written as
//! the same function in GPT-2's form: sinusoidal positions become the `wpe` table they add,
//! no positions a `wpe` of zeros, and a block without an MLP an MLP of zeros (its output,
//! GELU(0) · 0 + 0, is 0). RoPE rotates inside attention, which GPT-2 cannot express: refused.

use super::task::{token_char, VOCAB};
use super::{Model, Positions};
use crate::formats::safetensors::{write, Dtype};

pub struct Checkpoint {
    pub config_json: String,
    pub safetensors: Vec<u8>,
}

pub fn checkpoint(model: &Model) -> Result<Checkpoint, String> {
    let cfg = &model.cfg;
    if cfg.positions == Positions::Rope {
        return Err("a RoPE model cannot be written as GPT-2, which has no rotary positions: \
                    train with learned, sinusoidal or no positions to export"
            .into());
    }
    let (c, t) = (cfg.n_embd, cfg.n_positions);
    let mut tensors: Vec<(String, Vec<usize>, Vec<f32>)> = Vec::new();
    let mut push = |name: String, shape: Vec<usize>, values: Vec<f32>| tensors.push((name, shape, values));
    let get = |name: &str| model.get(name).map(<[f32]>::to_vec);
    push("wte.weight".into(), vec![cfg.vocab, c], get("wte.weight").unwrap_or_default());
    let wpe = match cfg.positions {
        Positions::Learned => get("wpe.weight").unwrap_or_default(),
        Positions::Sinusoidal => {
            crate::numerics::positional::sinusoidal(t, c, 10_000.0).iter().map(|&v| v as f32).collect()
        }
        Positions::None | Positions::Rope => vec![0.0; t * c],
    };
    push("wpe.weight".into(), vec![t, c], wpe);
    for i in 0..cfg.n_layer {
        let mut copy = |suffix: &str, shape: Vec<usize>| {
            let name = format!("h.{i}.{suffix}");
            let n = shape.iter().product();
            let values = get(&name).unwrap_or_else(|| {
                // A block without an MLP: γ = 1 for its (unused) norm, zeros elsewhere.
                vec![if suffix == "ln_2.weight" { 1.0 } else { 0.0 }; n]
            });
            push(name, shape, values);
        };
        copy("ln_1.weight", vec![c]);
        copy("ln_1.bias", vec![c]);
        copy("attn.c_attn.weight", vec![c, 3 * c]);
        copy("attn.c_attn.bias", vec![3 * c]);
        copy("attn.c_proj.weight", vec![c, c]);
        copy("attn.c_proj.bias", vec![c]);
        copy("ln_2.weight", vec![c]);
        copy("ln_2.bias", vec![c]);
        copy("mlp.c_fc.weight", vec![c, 4 * c]);
        copy("mlp.c_fc.bias", vec![4 * c]);
        copy("mlp.c_proj.weight", vec![4 * c, c]);
        copy("mlp.c_proj.bias", vec![c]);
    }
    push("ln_f.weight".into(), vec![c], get("ln_f.weight").unwrap_or_default());
    push("ln_f.bias".into(), vec![c], get("ln_f.bias").unwrap_or_default());
    let vocab: String = (0..VOCAB as u32).map(token_char).collect();
    let config = serde_json::json!({
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": cfg.vocab,
        "n_positions": t,
        "n_ctx": t,
        "n_embd": c,
        "n_layer": cfg.n_layer,
        "n_head": cfg.n_head,
        "n_inner": null,
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-5,
        "resid_pdrop": 0.0,
        "embd_pdrop": 0.0,
        "attn_pdrop": 0.0,
        "tie_word_embeddings": true,
        "bos_token_id": super::task::BOS,
        "eos_token_id": super::task::BOS,
        // The book's character vocabulary: token i is the i-th character (read by the book's
        // loader; `transformers` keeps unknown keys as attributes and ignores them).
        "char_vocab": vocab,
    });
    let config_json = serde_json::to_string_pretty(&config).map_err(|e| e.to_string())?;
    Ok(Checkpoint { config_json, safetensors: write(&tensors, Dtype::F32, &[("format", "pt")]) })
}
