//! The checkpoint's tensors, under the names `MarianMTModel` gives them.
//!
//! nn.Linear layout: a projection's weight is stored (out, in), with a bias, so y = x Wᵀ + b.
//! Names: `model.shared.weight` (the token embeddings of source and target); per encoder layer N,
//! `model.encoder.layers.N.self_attn.{q,k,v,out}_proj`, `self_attn_layer_norm`, `fc1`, `fc2`,
//! `final_layer_norm`; per decoder layer, the same and `encoder_attn.{q,k,v,out}_proj` with
//! `encoder_attn_layer_norm`; `final_logits_bias` (1, vocab). When the config ties the output
//! layer, the file's copies of the shared table (`model.encoder.embed_tokens.weight`,
//! `model.decoder.embed_tokens.weight`, `lm_head.weight`) must equal it; untied, the encoder and
//! the decoder read their own tables and the output layer is `lm_head.weight`. The sinusoidal
//! positions (`*.embed_positions.weight`) are computed, not read.

use ndarray::{Array1, Array2};

use super::Config;
use crate::formats::safetensors::SafeTensors;
use crate::formats::LoadError;
use crate::model::linear::Linear;
use crate::model::stream::PACK_WEIGHTS;

pub use crate::model::dense::{Dense, LayerNorm};

/// One attention: queries from one sequence, keys and values from the same one (self-attention)
/// or from the encoder's output (cross-attention). Each C → C.
#[derive(Debug, Clone)]
pub struct Attention {
    pub q_proj: Dense,
    pub k_proj: Dense,
    pub v_proj: Dense,
    pub out_proj: Dense,
}

#[derive(Debug, Clone)]
pub struct EncoderLayer {
    pub self_attn: Attention,
    pub self_attn_layer_norm: LayerNorm,
    /// C → F
    pub fc1: Dense,
    /// F → C
    pub fc2: Dense,
    pub final_layer_norm: LayerNorm,
}

#[derive(Debug, Clone)]
pub struct DecoderLayer {
    /// Masked: a target position sees itself and the positions before it.
    pub self_attn: Attention,
    pub self_attn_layer_norm: LayerNorm,
    /// Queries from the target, keys and values from the encoder's output.
    pub encoder_attn: Attention,
    pub encoder_attn_layer_norm: LayerNorm,
    pub fc1: Dense,
    pub fc2: Dense,
    pub final_layer_norm: LayerNorm,
}

#[derive(Debug, Clone)]
pub struct Weights {
    /// (vocab, C): the encoder's token embeddings (the shared table when tied).
    pub encoder_embed: Array2<f32>,
    /// (vocab, C): the decoder's, None when it is the encoder's (tied).
    pub decoder_embed: Option<Array2<f32>>,
    pub encoder: Vec<EncoderLayer>,
    pub decoder: Vec<DecoderLayer>,
    /// (vocab, C): the output layer, None when it is the decoder's embeddings (tied).
    pub lm_head: Option<Array2<f32>>,
    /// (vocab,): added to every logit.
    pub final_logits_bias: Array1<f32>,
}

impl Weights {
    /// Reads every tensor the config calls for, checking names, shapes and values, in this
    /// build's layout (`PACK_WEIGHTS`).
    pub fn from_safetensors(st: &SafeTensors, cfg: &Config) -> Result<Self, LoadError> {
        Weights::from_safetensors_in(st, cfg, PACK_WEIGHTS)
    }

    /// `from_safetensors` in a chosen layout: tests read the browser's packed one natively.
    pub fn from_safetensors_in(st: &SafeTensors, cfg: &Config, packed: bool) -> Result<Self, LoadError> {
        for name in st.tensors.keys() {
            for (part, n) in
                [("model.encoder.layers.", cfg.encoder_layers), ("model.decoder.layers.", cfg.decoder_layers)]
            {
                let layer = name.strip_prefix(part).and_then(|r| r.split('.').next()?.parse::<usize>().ok());
                if let Some(l) = layer.filter(|&l| l >= n) {
                    let key = if part.contains("encoder") { "encoder_layers" } else { "decoder_layers" };
                    return Err(LoadError::Config(format!("{key} = {n} but the checkpoint has a layer {l}")));
                }
            }
        }
        // Every tensor the config calls for exists with its shape and holds only finite numbers
        // before anything is allocated from the config's sizes.
        for (name, shape) in Weights::expected(cfg, st) {
            let info = st.checked(&name, &shape)?;
            if let Some((index, nan)) = st.first_non_finite(info) {
                let what = if nan { "a NaN" } else { "an infinity" };
                return Err(LoadError::NotFinite { tensor: name, index, what });
            }
        }
        let (c, v) = (cfg.d_model, cfg.vocab_size);
        let table = |name: &str| st.matrix(name, v, c);
        let (encoder_embed, decoder_embed, lm_head) = if cfg.tie_word_embeddings {
            let shared = table("model.shared.weight")?;
            for copy in ["model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight"] {
                if let Some(info) = st.tensors.get(copy) {
                    if info.shape != [v, c] || st.to_f32(info) != shared.as_slice().expect("standard layout") {
                        return Err(LoadError::Checkpoint(format!(
                            "{copy} differs from model.shared.weight, but tie_word_embeddings is true"
                        )));
                    }
                }
            }
            (shared, None, None)
        } else {
            // Each side's own table, or the shared one (then one table serves both: `decoder_embed` None).
            let own = |name: &'static str| if st.tensors.contains_key(name) { name } else { "model.shared.weight" };
            let (enc, dec) = (own("model.encoder.embed_tokens.weight"), own("model.decoder.embed_tokens.weight"));
            let decoder = if dec == enc { None } else { Some(table(dec)?) };
            (table(enc)?, decoder, Some(table("lm_head.weight")?))
        };
        let dense = |name: String, n_out: usize, n_in: usize| -> Result<Dense, LoadError> {
            let w = st.matrix(&format!("{name}.weight"), n_out, n_in)?;
            Ok(Dense { weight: Linear::with_layout(w, packed), bias: st.vector(&format!("{name}.bias"), n_out)? })
        };
        let attention = |p: String| -> Result<Attention, LoadError> {
            Ok(Attention {
                q_proj: dense(format!("{p}.q_proj"), c, c)?,
                k_proj: dense(format!("{p}.k_proj"), c, c)?,
                v_proj: dense(format!("{p}.v_proj"), c, c)?,
                out_proj: dense(format!("{p}.out_proj"), c, c)?,
            })
        };
        let norm = |p: String| -> Result<LayerNorm, LoadError> {
            Ok(LayerNorm { weight: st.vector(&format!("{p}.weight"), c)?, bias: st.vector(&format!("{p}.bias"), c)? })
        };
        let mut encoder = Vec::with_capacity(cfg.encoder_layers);
        for l in 0..cfg.encoder_layers {
            let p = format!("model.encoder.layers.{l}");
            let f = cfg.encoder_ffn_dim;
            encoder.push(EncoderLayer {
                self_attn: attention(format!("{p}.self_attn"))?,
                self_attn_layer_norm: norm(format!("{p}.self_attn_layer_norm"))?,
                fc1: dense(format!("{p}.fc1"), f, c)?,
                fc2: dense(format!("{p}.fc2"), c, f)?,
                final_layer_norm: norm(format!("{p}.final_layer_norm"))?,
            });
        }
        let mut decoder = Vec::with_capacity(cfg.decoder_layers);
        for l in 0..cfg.decoder_layers {
            let p = format!("model.decoder.layers.{l}");
            let f = cfg.decoder_ffn_dim;
            decoder.push(DecoderLayer {
                self_attn: attention(format!("{p}.self_attn"))?,
                self_attn_layer_norm: norm(format!("{p}.self_attn_layer_norm"))?,
                encoder_attn: attention(format!("{p}.encoder_attn"))?,
                encoder_attn_layer_norm: norm(format!("{p}.encoder_attn_layer_norm"))?,
                fc1: dense(format!("{p}.fc1"), f, c)?,
                fc2: dense(format!("{p}.fc2"), c, f)?,
                final_layer_norm: norm(format!("{p}.final_layer_norm"))?,
            });
        }
        let bias = st.to_f32(st.checked("final_logits_bias", &[1, v])?);
        Ok(Weights { encoder_embed, decoder_embed, encoder, decoder, lm_head, final_logits_bias: Array1::from(bias) })
    }

    /// The tensors a config calls for in `st`, with their shapes, in the checkpoint's names (an
    /// untied model's own tables where the file has them).
    pub fn expected(cfg: &Config, st: &SafeTensors) -> Vec<(String, Vec<usize>)> {
        let (c, v) = (cfg.d_model, cfg.vocab_size);
        let mut out = Vec::new();
        let tables = ["model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"];
        if cfg.tie_word_embeddings || tables.iter().any(|t| !st.tensors.contains_key(*t)) {
            out.push(("model.shared.weight".to_string(), vec![v, c]));
        }
        if !cfg.tie_word_embeddings {
            out.extend(tables.iter().filter(|t| st.tensors.contains_key(**t)).map(|t| (t.to_string(), vec![v, c])));
            out.push(("lm_head.weight".into(), vec![v, c]));
        }
        let linear = |out: &mut Vec<(String, Vec<usize>)>, name: String, n_out: usize, n_in: usize| {
            out.push((format!("{name}.weight"), vec![n_out, n_in]));
            out.push((format!("{name}.bias"), vec![n_out]));
        };
        let norm = |out: &mut Vec<(String, Vec<usize>)>, name: String| {
            out.push((format!("{name}.weight"), vec![c]));
            out.push((format!("{name}.bias"), vec![c]));
        };
        for (side, layers, f) in
            [("encoder", cfg.encoder_layers, cfg.encoder_ffn_dim), ("decoder", cfg.decoder_layers, cfg.decoder_ffn_dim)]
        {
            let attns: &[&str] = if side == "encoder" { &["self_attn"] } else { &["self_attn", "encoder_attn"] };
            for l in 0..layers {
                let p = format!("model.{side}.layers.{l}");
                for a in attns {
                    for proj in ["q_proj", "k_proj", "v_proj", "out_proj"] {
                        linear(&mut out, format!("{p}.{a}.{proj}"), c, c);
                    }
                    norm(&mut out, format!("{p}.{a}_layer_norm"));
                }
                linear(&mut out, format!("{p}.fc1"), f, c);
                linear(&mut out, format!("{p}.fc2"), c, f);
                norm(&mut out, format!("{p}.final_layer_norm"));
            }
        }
        out.push(("final_logits_bias".into(), vec![1, v]));
        out
    }

    /// Random weights in `MarianConfig`'s initialisation (normal, std 0.02; biases 0; layer norms
    /// 1 and 0), for benchmarks and download tests of any shape (`Config::opus_mt_en_de`) without
    /// the real file.
    pub fn random(cfg: &Config, seed: u64) -> Weights {
        use crate::numerics::rng::Rng;
        fn m(rng: &mut Rng, r: usize, k: usize) -> Array2<f32> {
            Array2::from_shape_fn((r, k), |_| (rng.normal() * 0.02) as f32)
        }
        fn dense(rng: &mut Rng, n_out: usize, n_in: usize) -> Dense {
            Dense { weight: Linear::with_layout(m(rng, n_out, n_in), PACK_WEIGHTS), bias: Array1::zeros(n_out) }
        }
        fn attention(rng: &mut Rng, c: usize) -> Attention {
            Attention {
                q_proj: dense(rng, c, c),
                k_proj: dense(rng, c, c),
                v_proj: dense(rng, c, c),
                out_proj: dense(rng, c, c),
            }
        }
        let mut rng = Rng::new(seed);
        let (c, v) = (cfg.d_model, cfg.vocab_size);
        let norm = || LayerNorm { weight: Array1::ones(c), bias: Array1::zeros(c) };
        let table = m(&mut rng, v, c);
        let encoder = (0..cfg.encoder_layers)
            .map(|_| EncoderLayer {
                self_attn: attention(&mut rng, c),
                self_attn_layer_norm: norm(),
                fc1: dense(&mut rng, cfg.encoder_ffn_dim, c),
                fc2: dense(&mut rng, c, cfg.encoder_ffn_dim),
                final_layer_norm: norm(),
            })
            .collect();
        let decoder = (0..cfg.decoder_layers)
            .map(|_| DecoderLayer {
                self_attn: attention(&mut rng, c),
                self_attn_layer_norm: norm(),
                encoder_attn: attention(&mut rng, c),
                encoder_attn_layer_norm: norm(),
                fc1: dense(&mut rng, cfg.decoder_ffn_dim, c),
                fc2: dense(&mut rng, c, cfg.decoder_ffn_dim),
                final_layer_norm: norm(),
            })
            .collect();
        let lm_head = (!cfg.tie_word_embeddings).then(|| m(&mut rng, v, c));
        Weights {
            encoder_embed: table,
            decoder_embed: None,
            encoder,
            decoder,
            lm_head,
            final_logits_bias: Array1::zeros(v),
        }
    }

    /// The tensors under their checkpoint names, weights as stored (out, in) whatever the layout:
    /// to compare two loads, or to write a checkpoint (`safetensors::write`).
    pub fn named(&self) -> Vec<(String, Vec<usize>, Vec<f32>)> {
        fn m(name: String, a: &Array2<f32>) -> (String, Vec<usize>, Vec<f32>) {
            (name, a.shape().to_vec(), a.iter().copied().collect())
        }
        fn v(name: String, a: &Array1<f32>) -> (String, Vec<usize>, Vec<f32>) {
            (name, vec![a.len()], a.to_vec())
        }
        let mut out = vec![m("model.shared.weight".into(), &self.encoder_embed)];
        if let Some(d) = &self.decoder_embed {
            out.push(m("model.encoder.embed_tokens.weight".into(), &self.encoder_embed));
            out.push(m("model.decoder.embed_tokens.weight".into(), d));
        }
        if let Some(head) = &self.lm_head {
            out.push(m("lm_head.weight".into(), head));
        }
        let dense = |out: &mut Vec<_>, name: String, d: &Dense| {
            out.push(m(format!("{name}.weight"), &d.weight.weight()));
            out.push(v(format!("{name}.bias"), &d.bias));
        };
        let attention = |out: &mut Vec<_>, p: String, a: &Attention| {
            for (proj, d) in
                [("q_proj", &a.q_proj), ("k_proj", &a.k_proj), ("v_proj", &a.v_proj), ("out_proj", &a.out_proj)]
            {
                dense(out, format!("{p}.{proj}"), d);
            }
        };
        let norm = |out: &mut Vec<_>, p: String, n: &LayerNorm| {
            out.push(v(format!("{p}.weight"), &n.weight));
            out.push(v(format!("{p}.bias"), &n.bias));
        };
        for (l, layer) in self.encoder.iter().enumerate() {
            let p = format!("model.encoder.layers.{l}");
            attention(&mut out, format!("{p}.self_attn"), &layer.self_attn);
            norm(&mut out, format!("{p}.self_attn_layer_norm"), &layer.self_attn_layer_norm);
            dense(&mut out, format!("{p}.fc1"), &layer.fc1);
            dense(&mut out, format!("{p}.fc2"), &layer.fc2);
            norm(&mut out, format!("{p}.final_layer_norm"), &layer.final_layer_norm);
        }
        for (l, layer) in self.decoder.iter().enumerate() {
            let p = format!("model.decoder.layers.{l}");
            attention(&mut out, format!("{p}.self_attn"), &layer.self_attn);
            norm(&mut out, format!("{p}.self_attn_layer_norm"), &layer.self_attn_layer_norm);
            attention(&mut out, format!("{p}.encoder_attn"), &layer.encoder_attn);
            norm(&mut out, format!("{p}.encoder_attn_layer_norm"), &layer.encoder_attn_layer_norm);
            dense(&mut out, format!("{p}.fc1"), &layer.fc1);
            dense(&mut out, format!("{p}.fc2"), &layer.fc2);
            norm(&mut out, format!("{p}.final_layer_norm"), &layer.final_layer_norm);
        }
        let bias = &self.final_logits_bias;
        out.push(("final_logits_bias".into(), vec![1, bias.len()], bias.to_vec()));
        out
    }

    /// The decoder's token embeddings (vocab, C).
    pub fn decoder_embed(&self) -> &Array2<f32> {
        self.decoder_embed.as_ref().unwrap_or(&self.encoder_embed)
    }

    /// The output layer (vocab, C): `lm_head`, or the decoder's embeddings when tied.
    pub fn output(&self) -> &Array2<f32> {
        self.lm_head.as_ref().unwrap_or(self.decoder_embed())
    }
}
