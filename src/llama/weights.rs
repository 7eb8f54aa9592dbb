//! The checkpoint's tensors, under the names `LlamaForCausalLM` gives them.
//!
//! nn.Linear layout: a projection's weight is stored (out, in), so y = x Wᵀ, and no layer has a
//! bias. Names: `model.embed_tokens.weight`; per layer N, `model.layers.N.self_attn.{q,k,v,o}_proj`,
//! `model.layers.N.mlp.{gate,up,down}_proj`, `model.layers.N.{input,post_attention}_layernorm`;
//! `model.norm.weight`; `lm_head.weight` unless the config ties it to the embeddings (then a
//! `lm_head.weight` in the file must equal them). Old checkpoints' `rotary_emb.inv_freq`
//! buffers are skipped: the engine computes the frequencies from `rope_theta`.

use ndarray::{Array1, Array2};

use super::Config;
use crate::formats::safetensors::SafeTensors;
use crate::formats::LoadError;

pub use crate::model::stream::PACK_WEIGHTS;

/// A projection without bias, y = x Wᵀ (nn.Linear's layout, shared with the other families).
pub use crate::model::linear::Linear;

#[derive(Debug, Clone)]
pub struct Attn {
    /// C → H·D
    pub q_proj: Linear,
    /// C → KV·D
    pub k_proj: Linear,
    /// C → KV·D
    pub v_proj: Linear,
    /// H·D → C
    pub o_proj: Linear,
}

#[derive(Debug, Clone)]
pub struct Mlp {
    /// C → F
    pub gate_proj: Linear,
    /// C → F
    pub up_proj: Linear,
    /// F → C
    pub down_proj: Linear,
}

#[derive(Debug, Clone)]
pub struct Layer {
    /// (C,): RMSNorm's gain before attention.
    pub input_layernorm: Array1<f32>,
    pub self_attn: Attn,
    /// (C,): RMSNorm's gain before the MLP.
    pub post_attention_layernorm: Array1<f32>,
    pub mlp: Mlp,
}

#[derive(Debug, Clone)]
pub struct Weights {
    /// (vocab, C): token embeddings (also the output layer when tied).
    pub embed_tokens: Array2<f32>,
    pub layers: Vec<Layer>,
    /// (C,): the final RMSNorm's gain.
    pub norm: Array1<f32>,
    /// (vocab, C): the output layer, None when tied to `embed_tokens`.
    pub lm_head: Option<Array2<f32>>,
}

impl Weights {
    /// Reads every tensor the config calls for, checking names, shapes and values, in this
    /// build's layout (`PACK_WEIGHTS`).
    pub fn from_safetensors(st: &SafeTensors, cfg: &Config) -> Result<Self, LoadError> {
        Weights::from_safetensors_in(st, cfg, PACK_WEIGHTS)
    }

    /// `from_safetensors` in a chosen layout: tests read the browser's packed one natively.
    pub fn from_safetensors_in(st: &SafeTensors, cfg: &Config, packed: bool) -> Result<Self, LoadError> {
        // Layers the config does not know of mean config and checkpoint disagree.
        for name in st.tensors.keys() {
            let layer = name.strip_prefix("model.layers.").and_then(|r| r.split('.').next()?.parse::<usize>().ok());
            if let Some(l) = layer.filter(|&l| l >= cfg.num_hidden_layers) {
                return Err(LoadError::Config(format!(
                    "num_hidden_layers = {} but the checkpoint has a layer {l}",
                    cfg.num_hidden_layers
                )));
            }
        }
        // Every tensor the config calls for exists with its shape and holds only finite numbers
        // before anything is allocated from the config's sizes (as GPT-2's loader does).
        for (name, shape) in Weights::expected(cfg) {
            let info = st.checked(&name, &shape)?;
            if let Some((index, nan)) = st.first_non_finite(info) {
                let what = if nan { "a NaN" } else { "an infinity" };
                return Err(LoadError::NotFinite { tensor: name, index, what });
            }
        }
        let (c, v) = (cfg.hidden_size, cfg.vocab_size);
        let embed_tokens = st.matrix("model.embed_tokens.weight", v, c)?;
        let lm_head = if cfg.tie_word_embeddings {
            if let Some(head) = st.tensors.get("lm_head.weight") {
                if head.shape != [v, c] || st.to_f32(head) != embed_tokens.as_slice().expect("standard layout") {
                    return Err(LoadError::Checkpoint(
                        "lm_head.weight differs from model.embed_tokens.weight, but tie_word_embeddings is true".into(),
                    ));
                }
            }
            None
        } else {
            Some(st.matrix("lm_head.weight", v, c)?)
        };
        let (qw, kvw, f) = (cfg.q_width(), cfg.kv_width(), cfg.intermediate_size);
        let lin = |name: String, n_out: usize, n_in: usize| -> Result<Linear, LoadError> {
            Ok(Linear::with_layout(st.matrix(&format!("{name}.weight"), n_out, n_in)?, packed))
        };
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for l in 0..cfg.num_hidden_layers {
            let p = format!("model.layers.{l}");
            layers.push(Layer {
                input_layernorm: st.vector(&format!("{p}.input_layernorm.weight"), c)?,
                self_attn: Attn {
                    q_proj: lin(format!("{p}.self_attn.q_proj"), qw, c)?,
                    k_proj: lin(format!("{p}.self_attn.k_proj"), kvw, c)?,
                    v_proj: lin(format!("{p}.self_attn.v_proj"), kvw, c)?,
                    o_proj: lin(format!("{p}.self_attn.o_proj"), c, qw)?,
                },
                post_attention_layernorm: st.vector(&format!("{p}.post_attention_layernorm.weight"), c)?,
                mlp: Mlp {
                    gate_proj: lin(format!("{p}.mlp.gate_proj"), f, c)?,
                    up_proj: lin(format!("{p}.mlp.up_proj"), f, c)?,
                    down_proj: lin(format!("{p}.mlp.down_proj"), c, f)?,
                },
            });
        }
        Ok(Weights { embed_tokens, layers, norm: st.vector("model.norm.weight", c)?, lm_head })
    }

    /// The tensors a config calls for, with their shapes, in the checkpoint's names.
    pub fn expected(cfg: &Config) -> Vec<(String, Vec<usize>)> {
        let (c, v, f) = (cfg.hidden_size, cfg.vocab_size, cfg.intermediate_size);
        let (qw, kvw) = (cfg.q_width(), cfg.kv_width());
        let mut out = vec![("model.embed_tokens.weight".to_string(), vec![v, c])];
        for l in 0..cfg.num_hidden_layers {
            let p = format!("model.layers.{l}");
            out.push((format!("{p}.input_layernorm.weight"), vec![c]));
            out.push((format!("{p}.post_attention_layernorm.weight"), vec![c]));
            for (name, n_out, n_in) in [
                ("self_attn.q_proj", qw, c),
                ("self_attn.k_proj", kvw, c),
                ("self_attn.v_proj", kvw, c),
                ("self_attn.o_proj", c, qw),
                ("mlp.gate_proj", f, c),
                ("mlp.up_proj", f, c),
                ("mlp.down_proj", c, f),
            ] {
                out.push((format!("{p}.{name}.weight"), vec![n_out, n_in]));
            }
        }
        out.push(("model.norm.weight".into(), vec![c]));
        if !cfg.tie_word_embeddings {
            out.push(("lm_head.weight".into(), vec![v, c]));
        }
        out
    }

    /// The same weights with every projection in the chosen layout (`Linear::with_layout`):
    /// the native tests run the browser's packed kernel with it.
    pub fn with_layout(&self, packed: bool) -> Weights {
        let re = |l: &Linear| Linear::with_layout(l.weight(), packed);
        let layers = self
            .layers
            .iter()
            .map(|b| Layer {
                input_layernorm: b.input_layernorm.clone(),
                self_attn: Attn {
                    q_proj: re(&b.self_attn.q_proj),
                    k_proj: re(&b.self_attn.k_proj),
                    v_proj: re(&b.self_attn.v_proj),
                    o_proj: re(&b.self_attn.o_proj),
                },
                post_attention_layernorm: b.post_attention_layernorm.clone(),
                mlp: Mlp {
                    gate_proj: re(&b.mlp.gate_proj),
                    up_proj: re(&b.mlp.up_proj),
                    down_proj: re(&b.mlp.down_proj),
                },
            })
            .collect();
        Weights { layers, ..self.clone() }
    }

    /// Random weights in `LlamaConfig`'s initialisation (normal, std 0.02; RMSNorm gains 1), for
    /// benchmarks and download tests of any shape (SmolLM2-135M's) without the real file.
    pub fn random(cfg: &Config, seed: u64) -> Self {
        let mut rng = crate::numerics::rng::Rng::new(seed);
        let mut m = |r: usize, c: usize| Array2::from_shape_fn((r, c), |_| (rng.normal() * 0.02) as f32);
        let (c, v, f) = (cfg.hidden_size, cfg.vocab_size, cfg.intermediate_size);
        let (qw, kvw) = (cfg.q_width(), cfg.kv_width());
        let embed_tokens = m(v, c);
        let mut lin = |n_out: usize, n_in: usize| Linear::with_layout(m(n_out, n_in), PACK_WEIGHTS);
        let layers = (0..cfg.num_hidden_layers)
            .map(|_| Layer {
                input_layernorm: Array1::ones(c),
                self_attn: Attn { q_proj: lin(qw, c), k_proj: lin(kvw, c), v_proj: lin(kvw, c), o_proj: lin(c, qw) },
                post_attention_layernorm: Array1::ones(c),
                mlp: Mlp { gate_proj: lin(f, c), up_proj: lin(f, c), down_proj: lin(c, f) },
            })
            .collect();
        let lm_head = (!cfg.tie_word_embeddings).then(|| m(v, c));
        Weights { embed_tokens, layers, norm: Array1::ones(c), lm_head }
    }

    /// The tensors under their checkpoint names, e.g. to write a checkpoint (`safetensors::write`).
    pub fn named(&self) -> Vec<(String, Vec<usize>, Vec<f32>)> {
        fn m(name: String, a: &Array2<f32>) -> (String, Vec<usize>, Vec<f32>) {
            (name, a.shape().to_vec(), a.iter().copied().collect())
        }
        fn v(name: String, a: &Array1<f32>) -> (String, Vec<usize>, Vec<f32>) {
            (name, vec![a.len()], a.to_vec())
        }
        let mut out = vec![m("model.embed_tokens.weight".into(), &self.embed_tokens)];
        for (l, b) in self.layers.iter().enumerate() {
            let p = format!("model.layers.{l}");
            out.push(v(format!("{p}.input_layernorm.weight"), &b.input_layernorm));
            out.push(v(format!("{p}.post_attention_layernorm.weight"), &b.post_attention_layernorm));
            let (a, f) = (&b.self_attn, &b.mlp);
            for (name, lin) in [
                ("self_attn.q_proj", &a.q_proj),
                ("self_attn.k_proj", &a.k_proj),
                ("self_attn.v_proj", &a.v_proj),
                ("self_attn.o_proj", &a.o_proj),
                ("mlp.gate_proj", &f.gate_proj),
                ("mlp.up_proj", &f.up_proj),
                ("mlp.down_proj", &f.down_proj),
            ] {
                out.push(m(format!("{p}.{name}.weight"), &lin.weight()));
            }
        }
        out.push(v("model.norm.weight".into(), &self.norm));
        if let Some(head) = &self.lm_head {
            out.push(m("lm_head.weight".into(), head));
        }
        out
    }

    /// The output layer (vocab, C): `lm_head`, or the embeddings when tied.
    pub fn output(&self) -> &Array2<f32> {
        self.lm_head.as_ref().unwrap_or(&self.embed_tokens)
    }
}
