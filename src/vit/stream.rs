//! A ViT or DeiT checkpoint loaded while it downloads (`model::stream` does the bytes): where each
//! tensor goes, and the weights assembled from the filled buffers.
//!
//! The plan checks what `Weights::from_safetensors_in` checks, from the same list
//! (`Weights::expected`, whose order the slots keep) and the same header refusals
//! (`Weights::check_header`). The patch embedding's convolution, stored (C, channels, p, p), is
//! read as the (C, channels·p·p) matrix it is; projections, stored (out, in), are written
//! transposed into their packed matrices in the browser.

use super::config::{Config, Family};
use super::weights::{Layer, Weights};
use super::Vit;
use crate::formats::safetensors::Header;
use crate::formats::LoadError;
use crate::model::dense::{Dense, LayerNorm};
use crate::model::linear::Linear;
use crate::model::stream::{self, Buf, Plan, Slot, Slots, Store, Streamed};

/// A ViT checkpoint being loaded from chunks.
pub type StreamLoader = stream::StreamLoader<Vit>;

impl Streamed for Vit {
    type Config = Config;

    fn read_config(config_json: &str) -> Result<Config, LoadError> {
        Config::from_json(config_json)
    }

    fn plan(cfg: &Config, header: &Header, packed: bool) -> Result<Plan, LoadError> {
        Weights::check_header(cfg, &header.tensors)?;
        let projection = if packed { Store::PackedTransposed } else { Store::Plain };
        let mut slots = Vec::new();
        for (key, shape) in Weights::expected(cfg, &header.tensors) {
            let mut slot = Slot::checked(header, key.clone(), key, &shape, Store::Plain)?;
            if shape.len() == 4 {
                // the patch embedding: (C, channels, p, p) is the matrix (C, channels·p·p)
                slot.dim = (shape[0], shape[1..].iter().product());
                slot.store = projection;
            } else if shape.len() == 2 {
                slot.store = projection;
            }
            slots.push(slot);
        }
        Ok(Plan { slots, ties: Vec::new() })
    }

    /// The slots in `Weights::expected`'s order.
    fn assemble(cfg: Config, mut s: Slots) -> Vit {
        let (c, f, k) = (cfg.hidden_size, cfg.intermediate_size, cfg.labels.len());
        let pixels = cfg.num_channels * cfg.patch_size * cfg.patch_size;
        let weight = |s: &mut Slots, n_out: usize, n_in: usize| match s.next_buf() {
            Some(Buf::Packed(p)) => Linear::Packed(p),
            Some(Buf::Plain(w)) => Linear::Plain(ndarray::Array2::from_shape_vec((n_out, n_in), w).expect("sized")),
            None => Linear::Plain(ndarray::Array2::zeros((n_out, n_in))),
        };
        let dense = |s: &mut Slots, n_out: usize, n_in: usize, bias: bool| Dense {
            weight: weight(s, n_out, n_in),
            bias: if bias { s.vector(n_out) } else { ndarray::Array1::zeros(n_out) },
        };
        let norm = |s: &mut Slots| LayerNorm { weight: s.vector(c), bias: s.vector(c) };
        let patch = dense(&mut s, c, pixels, true);
        let cls_token = s.vector(c);
        let position_embeddings = s.matrix(cfg.tokens(), c);
        let layernorm = norm(&mut s);
        let distillation_token = (cfg.family == Family::Deit).then(|| s.vector(c));
        let layers = (0..cfg.num_hidden_layers)
            .map(|_| {
                let (query, key, value) = (
                    dense(&mut s, c, c, cfg.qkv_bias),
                    dense(&mut s, c, c, cfg.qkv_bias),
                    dense(&mut s, c, c, cfg.qkv_bias),
                );
                let attention_output = dense(&mut s, c, c, true);
                let (intermediate, output) = (dense(&mut s, f, c, true), dense(&mut s, c, f, true));
                let (layernorm_before, layernorm_after) = (norm(&mut s), norm(&mut s));
                Layer { layernorm_before, query, key, value, attention_output, layernorm_after, intermediate, output }
            })
            .collect();
        let classifier = dense(&mut s, k, c, true);
        // DeiT with its teacher: a second head, whose slots follow the first's.
        let distillation_classifier = s.next_buf().map(|first| {
            let weight = match first {
                Buf::Packed(p) => Linear::Packed(p),
                Buf::Plain(w) => Linear::Plain(ndarray::Array2::from_shape_vec((k, c), w).expect("sized")),
            };
            Dense { weight, bias: s.vector(k) }
        });
        let weights = Weights {
            patch,
            cls_token,
            distillation_token,
            position_embeddings,
            layers,
            layernorm,
            classifier,
            distillation_classifier,
        };
        Vit { config: cfg, weights }
    }
}
