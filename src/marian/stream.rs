//! A Marian model loaded while it downloads (`model::stream` does the bytes): where each tensor of
//! the checkpoint goes, and the weights assembled from the filled buffers.
//!
//! The plan checks what `Weights::from_safetensors_in` checks: no layer past `encoder_layers` or
//! `decoder_layers`, every tensor the config calls for with its shape, and, when the output layer
//! is tied, each copy of the shared table the file has (`model.encoder.embed_tokens.weight`,
//! `model.decoder.embed_tokens.weight`, `lm_head.weight`) equal to it. The sinusoidal positions
//! are passed over (computed). A projection, stored (out, in), is written transposed into its
//! packed matrix in the browser.

use ndarray::{Array1, Array2};

use super::weights::{Attention, DecoderLayer, Dense, EncoderLayer, LayerNorm, Weights};
use super::{Config, Marian};
use crate::formats::safetensors::Header;
use crate::formats::LoadError;
use crate::model::linear::Linear;
use crate::model::stream::{self, check_layers, Buf, Plan, Slot, Slots, Store, Streamed, Tie};

/// A Marian checkpoint being loaded from chunks.
pub type StreamLoader = stream::StreamLoader<Marian>;

const SHARED: &str = "model.shared.weight";
const TABLES: [&str; 2] = ["model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"];

impl Streamed for Marian {
    type Config = Config;

    fn read_config(config_json: &str) -> Result<Config, LoadError> {
        Config::from_json(config_json)
    }

    fn plan(cfg: &Config, header: &Header, packed: bool) -> Result<Plan, LoadError> {
        let layer_of = |part: &'static str| move |key: &str| key.strip_prefix(part)?.split('.').next()?.parse().ok();
        check_layers(header, cfg.encoder_layers, "encoder_layers", layer_of("model.encoder.layers."))?;
        check_layers(header, cfg.decoder_layers, "decoder_layers", layer_of("model.decoder.layers."))?;
        let (c, v) = (cfg.d_model, cfg.vocab_size);
        let has = |key: &str| header.tensors.contains_key(key);
        let slot = |key: &str, shape: &[usize], store| Slot::checked(header, key.into(), key.into(), shape, store);
        let mut slots = Vec::new();
        let mut ties = Vec::new();
        if cfg.tie_word_embeddings {
            slots.push(slot(SHARED, &[v, c], Store::Plain)?);
            for copy in [TABLES[0], TABLES[1], "lm_head.weight"] {
                let refusal = format!("{copy} differs from {SHARED}, but tie_word_embeddings is true");
                if header.tensors.get(copy).is_some_and(|info| info.shape != [v, c]) {
                    return Err(LoadError::Checkpoint(refusal));
                }
                ties.push(Tie { key: copy.into(), slot: 0, refusal });
            }
        } else {
            // Each side's own table, or the shared one; a second slot of the same key is never filled,
            // which `assemble` reads as "the encoder's table".
            for table in TABLES {
                slots.push(slot(if has(table) { table } else { SHARED }, &[v, c], Store::Plain)?);
            }
            slots.push(slot("lm_head.weight", &[v, c], Store::Plain)?);
        }
        let projection = if packed { Store::PackedTransposed } else { Store::Plain };
        for (side, layers, f) in
            [("encoder", cfg.encoder_layers, cfg.encoder_ffn_dim), ("decoder", cfg.decoder_layers, cfg.decoder_ffn_dim)]
        {
            let attns: &[&str] = if side == "encoder" { &["self_attn"] } else { &["self_attn", "encoder_attn"] };
            for l in 0..layers {
                let p = format!("model.{side}.layers.{l}");
                let mut dense = |name: String, n_out: usize, n_in: usize| -> Result<(), LoadError> {
                    slots.push(slot(&format!("{name}.weight"), &[n_out, n_in], projection)?);
                    slots.push(slot(&format!("{name}.bias"), &[n_out], Store::Plain)?);
                    Ok(())
                };
                for a in attns {
                    for proj in ["q_proj", "k_proj", "v_proj", "out_proj"] {
                        dense(format!("{p}.{a}.{proj}"), c, c)?;
                    }
                }
                dense(format!("{p}.fc1"), f, c)?;
                dense(format!("{p}.fc2"), c, f)?;
                for a in attns {
                    for part in ["weight", "bias"] {
                        slots.push(slot(&format!("{p}.{a}_layer_norm.{part}"), &[c], Store::Plain)?);
                    }
                }
                for part in ["weight", "bias"] {
                    slots.push(slot(&format!("{p}.final_layer_norm.{part}"), &[c], Store::Plain)?);
                }
            }
        }
        slots.push(slot("final_logits_bias", &[1, v], Store::Plain)?);
        Ok(Plan { slots, ties })
    }

    /// The plan's order: the tables, then per encoder layer the attention's four projections,
    /// fc1, fc2 and the two norms, per decoder layer the two attentions' eight projections, fc1,
    /// fc2 and the three norms, then the final bias.
    fn assemble(cfg: Config, mut s: Slots) -> Marian {
        let (c, v) = (cfg.d_model, cfg.vocab_size);
        let (encoder_embed, decoder_embed, lm_head) = if cfg.tie_word_embeddings {
            (s.matrix(v, c), None, None)
        } else {
            let encoder = s.matrix(v, c);
            let decoder = match s.next_buf() {
                Some(Buf::Plain(t)) => Some(Array2::from_shape_vec((v, c), t).expect("sized")),
                _ => None,
            };
            (encoder, decoder, Some(s.matrix(v, c)))
        };
        let dense = |s: &mut Slots, n_out: usize, n_in: usize| {
            let weight = match s.next_buf() {
                Some(Buf::Packed(p)) => Linear::Packed(p),
                Some(Buf::Plain(w)) => Linear::Plain(Array2::from_shape_vec((n_out, n_in), w).expect("sized")),
                None => Linear::Plain(Array2::zeros((n_out, n_in))),
            };
            Dense { weight, bias: s.vector(n_out) }
        };
        let attention = |s: &mut Slots| Attention {
            q_proj: dense(s, c, c),
            k_proj: dense(s, c, c),
            v_proj: dense(s, c, c),
            out_proj: dense(s, c, c),
        };
        let norm = |s: &mut Slots| LayerNorm { weight: s.vector(c), bias: s.vector(c) };
        let f = cfg.encoder_ffn_dim;
        let encoder = (0..cfg.encoder_layers)
            .map(|_| {
                let self_attn = attention(&mut s);
                let (fc1, fc2) = (dense(&mut s, f, c), dense(&mut s, c, f));
                let (self_attn_layer_norm, final_layer_norm) = (norm(&mut s), norm(&mut s));
                EncoderLayer { self_attn, self_attn_layer_norm, fc1, fc2, final_layer_norm }
            })
            .collect();
        let f = cfg.decoder_ffn_dim;
        let decoder = (0..cfg.decoder_layers)
            .map(|_| {
                let (self_attn, encoder_attn) = (attention(&mut s), attention(&mut s));
                let (fc1, fc2) = (dense(&mut s, f, c), dense(&mut s, c, f));
                let (self_attn_layer_norm, encoder_attn_layer_norm) = (norm(&mut s), norm(&mut s));
                let final_layer_norm = norm(&mut s);
                DecoderLayer {
                    self_attn,
                    self_attn_layer_norm,
                    encoder_attn,
                    encoder_attn_layer_norm,
                    fc1,
                    fc2,
                    final_layer_norm,
                }
            })
            .collect();
        let final_logits_bias = Array1::from(s.plain(1, v));
        let weights = Weights { encoder_embed, decoder_embed, encoder, decoder, lm_head, final_logits_bias };
        Marian::new(cfg, weights)
    }
}
