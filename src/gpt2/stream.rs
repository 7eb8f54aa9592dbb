//! GPT-2 loaded while it downloads (`model::stream` does the bytes): where each tensor of the
//! checkpoint goes, and the weights assembled from the filled buffers.
//!
//! The plan checks what `Weights::from_safetensors_in` checks: names with or without the
//! `transformer.` prefix, no layer past `n_layer`, every tensor `Weights::expected` names with its
//! shape, and an `lm_head.weight` of the embeddings' shape, tied to `wte`. The causal-mask
//! buffers are passed over; the linear layers' weights are packed in the browser.

use super::weights::{Attn, Block, LayerNorm, Linear, LinearWeight, Mlp, Weights};
use super::{Config, Gpt2, LoadError};
use crate::formats::safetensors::Header;
use crate::model::stream::{self, check_layers, Buf, Plan, Slot, Slots, Store, Streamed, Tie};

/// A GPT-2 checkpoint being loaded from chunks.
pub type StreamLoader = stream::StreamLoader<Gpt2>;

/// The tensors of a layer in `Weights::expected`'s order, and which of them are linear layers'
/// weights (packed in the browser).
const PER_LAYER: usize = 12;
const LINEAR_WEIGHTS: [usize; 4] = [4, 6, 8, 10];

impl Streamed for Gpt2 {
    type Config = Config;

    fn read_config(config_json: &str) -> Result<Config, LoadError> {
        Config::from_json(config_json)
    }

    fn plan(cfg: &Config, header: &Header, packed: bool) -> Result<Plan, LoadError> {
        let st = &header.tensors;
        check_layers(header, cfg.n_layer, "n_layer", |key| {
            let rest = key.strip_prefix("transformer.").unwrap_or(key).strip_prefix("h.")?;
            rest.split('.').next()?.parse().ok()
        })?;
        let prefix = if st.keys().any(|k| k.starts_with("transformer.")) { "transformer." } else { "" };
        let mut slots = Vec::new();
        for (i, (name, shape)) in Weights::expected(cfg).into_iter().enumerate() {
            let full = format!("{prefix}{name}");
            let key = if st.contains_key(&full) { full } else { name.clone() };
            // Slots 2 .. are the layers' tensors, then ln_f's two.
            let layer = i.wrapping_sub(2);
            let linear = layer < PER_LAYER * cfg.n_layer && LINEAR_WEIGHTS.contains(&(layer % PER_LAYER));
            let store = if packed && linear { Store::Packed } else { Store::Plain };
            slots.push(Slot::checked(header, key, name, &shape, store)?);
        }
        let (vocab, c) = (cfg.vocab_size, cfg.n_embd);
        if let Some(info) = st.get("lm_head.weight").filter(|info| info.shape != [vocab, c]) {
            return Err(LoadError::Shape {
                tensor: "lm_head.weight".into(),
                expected: vec![vocab, c],
                found: info.shape.clone(),
            });
        }
        let refusal = "lm_head.weight differs from wte.weight; GPT-2 ties them".to_string();
        Ok(Plan { slots, ties: vec![Tie { key: "lm_head.weight".into(), slot: 0, refusal }] })
    }

    /// `Weights::expected`'s order: wte, wpe, per layer the two layer norms then the four linear
    /// layers, ln_f.
    fn assemble(cfg: Config, mut s: Slots) -> Gpt2 {
        let (c, f) = (cfg.n_embd, cfg.n_inner);
        let wte = s.matrix(cfg.vocab_size, c);
        let wpe = s.matrix(cfg.n_positions, c);
        let h = (0..cfg.n_layer)
            .map(|_| {
                let (ln_1, ln_2) = (layer_norm(&mut s, c), layer_norm(&mut s, c));
                let (c_attn, attn_proj) = (linear(&mut s, c, 3 * c), linear(&mut s, c, c));
                let (c_fc, mlp_proj) = (linear(&mut s, c, f), linear(&mut s, f, c));
                Block { ln_1, attn: Attn { c_attn, c_proj: attn_proj }, ln_2, mlp: Mlp { c_fc, c_proj: mlp_proj } }
            })
            .collect();
        let ln_f = layer_norm(&mut s, c);
        Gpt2 { config: cfg, weights: Weights { wte, wpe, h, ln_f } }
    }
}

fn layer_norm(s: &mut Slots, c: usize) -> LayerNorm {
    LayerNorm { weight: s.vector(c), bias: s.vector(c) }
}

/// A linear layer (in, out): its weight as stored (packed or row-major), then its bias.
fn linear(s: &mut Slots, n_in: usize, n_out: usize) -> Linear {
    let weight = match s.next_buf() {
        Some(Buf::Packed(p)) => LinearWeight::Packed(p),
        Some(Buf::Plain(v)) => LinearWeight::Plain(ndarray::Array2::from_shape_vec((n_in, n_out), v).expect("sized")),
        None => LinearWeight::Plain(ndarray::Array2::zeros((n_in, n_out))),
    };
    Linear { weight, bias: s.vector(n_out) }
}
