//! A Llama-family model loaded while it downloads (`model::stream` does the bytes): where each
//! tensor of the checkpoint goes, and the weights assembled from the filled buffers.
//!
//! The plan checks what `Weights::from_safetensors_in` checks: no layer past
//! `num_hidden_layers`, every tensor `Weights::expected` names with its shape, and, when the
//! config ties the output layer to the embeddings, an `lm_head.weight` in the file equal to them.
//! Other tensors (old checkpoints' `rotary_emb.inv_freq`) are passed over. A projection, stored
//! (out, in), is written transposed into its packed matrix in the browser.

use super::weights::{Attn, Layer, Linear, Mlp, Weights};
use super::{Config, Llama};
use crate::formats::safetensors::Header;
use crate::formats::LoadError;
use crate::model::stream::{self, check_layers, Buf, Plan, Slot, Slots, Store, Streamed, Tie};

/// A Llama-family checkpoint being loaded from chunks.
pub type StreamLoader = stream::StreamLoader<Llama>;

impl Streamed for Llama {
    type Config = Config;

    fn read_config(config_json: &str) -> Result<Config, LoadError> {
        Config::from_json(config_json)
    }

    fn plan(cfg: &Config, header: &Header, packed: bool) -> Result<Plan, LoadError> {
        check_layers(header, cfg.num_hidden_layers, "num_hidden_layers", |key| {
            key.strip_prefix("model.layers.")?.split('.').next()?.parse().ok()
        })?;
        let mut slots = Vec::new();
        for (name, shape) in Weights::expected(cfg) {
            let projection = name.starts_with("model.layers.") && name.ends_with("_proj.weight");
            let store = if packed && projection { Store::PackedTransposed } else { Store::Plain };
            slots.push(Slot::checked(header, name.clone(), name, &shape, store)?);
        }
        if !cfg.tie_word_embeddings {
            return Ok(Plan { slots, ties: Vec::new() });
        }
        let refusal =
            "lm_head.weight differs from model.embed_tokens.weight, but tie_word_embeddings is true".to_string();
        let (v, c) = (cfg.vocab_size, cfg.hidden_size);
        if header.tensors.get("lm_head.weight").is_some_and(|info| info.shape != [v, c]) {
            return Err(LoadError::Checkpoint(refusal));
        }
        Ok(Plan { slots, ties: vec![Tie { key: "lm_head.weight".into(), slot: 0, refusal }] })
    }

    /// `Weights::expected`'s order: the embeddings, per layer the two norms' gains then the seven
    /// projections, the final norm's gain, the output layer unless tied.
    fn assemble(cfg: Config, mut s: Slots) -> Llama {
        let (c, v, f) = (cfg.hidden_size, cfg.vocab_size, cfg.intermediate_size);
        let (qw, kvw) = (cfg.q_width(), cfg.kv_width());
        let embed_tokens = s.matrix(v, c);
        let layers = (0..cfg.num_hidden_layers)
            .map(|_| {
                let (input_layernorm, post_attention_layernorm) = (s.vector(c), s.vector(c));
                let self_attn = Attn {
                    q_proj: linear(&mut s, qw, c),
                    k_proj: linear(&mut s, kvw, c),
                    v_proj: linear(&mut s, kvw, c),
                    o_proj: linear(&mut s, c, qw),
                };
                let mlp = Mlp {
                    gate_proj: linear(&mut s, f, c),
                    up_proj: linear(&mut s, f, c),
                    down_proj: linear(&mut s, c, f),
                };
                Layer { input_layernorm, self_attn, post_attention_layernorm, mlp }
            })
            .collect();
        let norm = s.vector(c);
        let lm_head = (!cfg.tie_word_embeddings).then(|| s.matrix(v, c));
        Llama { config: cfg, weights: Weights { embed_tokens, layers, norm, lm_head } }
    }
}

/// A projection W (out, in): packed (as Wᵀ) or as stored.
fn linear(s: &mut Slots, n_out: usize, n_in: usize) -> Linear {
    match s.next_buf() {
        Some(Buf::Packed(p)) => Linear::Packed(p),
        Some(Buf::Plain(w)) => Linear::Plain(ndarray::Array2::from_shape_vec((n_out, n_in), w).expect("sized")),
        None => Linear::Plain(ndarray::Array2::zeros((n_out, n_in))),
    }
}
