//! The checkpoint's tensors, under the names `ViTForImageClassification` and DeiT's models give
//! them (`vit.` or `deit.` in front):
//! `embeddings.patch_embeddings.projection` (a convolution (C, channels, p, p) with a bias, read
//! as one (C, channels · p · p) product over a patch's pixels), `embeddings.cls_token` and DeiT's
//! `embeddings.distillation_token` (1, 1, C), `embeddings.position_embeddings` (1, tokens, C); per
//! layer N, `encoder.layer.N.attention.attention.{query,key,value}`,
//! `encoder.layer.N.attention.output.dense`, `layernorm_before`, `layernorm_after`,
//! `intermediate.dense` and `output.dense`; the final `layernorm`; then the head: `classifier`, or
//! DeiT with its teacher's `cls_classifier` and `distillation_classifier`.

use ndarray::{Array1, Array2};

use super::config::{Config, Family};
use std::collections::BTreeMap;

use crate::formats::safetensors::{SafeTensors, TensorInfo};
use crate::formats::LoadError;
use crate::model::dense::{Dense, LayerNorm};
use crate::model::linear::Linear;
use crate::model::stream::PACK_WEIGHTS;

/// One pre-norm encoder block.
#[derive(Debug, Clone)]
pub struct Layer {
    pub layernorm_before: LayerNorm,
    /// C → C each (zero biases without `qkv_bias`).
    pub query: Dense,
    pub key: Dense,
    pub value: Dense,
    /// The attention's output projection, C → C (`attention.output.dense`).
    pub attention_output: Dense,
    pub layernorm_after: LayerNorm,
    /// C → F (`intermediate.dense`).
    pub intermediate: Dense,
    /// F → C (`output.dense`).
    pub output: Dense,
}

#[derive(Debug, Clone)]
pub struct Weights {
    /// (C, channels · p · p): the patch embedding, a patch's pixels in (channel, row, column) order.
    pub patch: Dense,
    /// (C,)
    pub cls_token: Array1<f32>,
    /// (C,): DeiT's.
    pub distillation_token: Option<Array1<f32>>,
    /// (tokens, C)
    pub position_embeddings: Array2<f32>,
    pub layers: Vec<Layer>,
    pub layernorm: LayerNorm,
    /// On the class token: (classes, C).
    pub classifier: Dense,
    /// DeiT with its teacher: on the distillation token, its logits averaged with the class token's.
    pub distillation_classifier: Option<Dense>,
}

impl Weights {
    /// Reads every tensor the config calls for, checking names, shapes and values, in this
    /// build's layout (`PACK_WEIGHTS`).
    pub fn from_safetensors(st: &SafeTensors, cfg: &Config) -> Result<Self, LoadError> {
        Weights::from_safetensors_in(st, cfg, PACK_WEIGHTS)
    }

    /// `from_safetensors` in a chosen layout: tests read the browser's packed one natively.
    pub fn from_safetensors_in(st: &SafeTensors, cfg: &Config, packed: bool) -> Result<Self, LoadError> {
        Weights::check_header(cfg, &st.tensors)?;
        let pre = prefix(cfg);
        let layers_at = format!("{pre}.encoder.layer.");
        let positions = format!("{pre}.embeddings.position_embeddings");
        // Every tensor the config calls for exists with its shape and holds only finite numbers
        // before anything is allocated from the config's sizes.
        for (name, shape) in Weights::expected(cfg, &st.tensors) {
            let info = st.checked(&name, &shape)?;
            if let Some((index, nan)) = st.first_non_finite(info) {
                let what = if nan { "a NaN" } else { "an infinity" };
                return Err(LoadError::NotFinite { tensor: name, index, what });
            }
        }
        let (c, f, k) = (cfg.hidden_size, cfg.intermediate_size, cfg.labels.len());
        let dense = |name: &str, n_out: usize, n_in: usize, bias: bool| -> Result<Dense, LoadError> {
            let w = st.matrix(&format!("{name}.weight"), n_out, n_in)?;
            let bias = if bias { st.vector(&format!("{name}.bias"), n_out)? } else { Array1::zeros(n_out) };
            Ok(Dense { weight: Linear::with_layout(w, packed), bias })
        };
        let norm = |p: String| -> Result<LayerNorm, LoadError> {
            Ok(LayerNorm { weight: st.vector(&format!("{p}.weight"), c)?, bias: st.vector(&format!("{p}.bias"), c)? })
        };
        let tensor = |name: &str, shape: &[usize]| st.checked(name, shape).map(|info| st.to_f32(info));
        let pixels = cfg.num_channels * cfg.patch_size * cfg.patch_size;
        let projection = format!("{pre}.embeddings.patch_embeddings.projection");
        let conv = tensor(&format!("{projection}.weight"), &[c, cfg.num_channels, cfg.patch_size, cfg.patch_size])?;
        let patch = Dense {
            weight: Linear::with_layout(Array2::from_shape_vec((c, pixels), conv).expect("checked shape"), packed),
            bias: st.vector(&format!("{projection}.bias"), c)?,
        };
        let token = |name: &str| tensor(&format!("{pre}.embeddings.{name}"), &[1, 1, c]).map(Array1::from);
        let n = cfg.tokens();
        let position_embeddings =
            Array2::from_shape_vec((n, c), tensor(&positions, &[1, n, c])?).expect("checked shape");
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for l in 0..cfg.num_hidden_layers {
            let p = format!("{layers_at}{l}");
            let a = format!("{p}.attention.attention");
            layers.push(Layer {
                layernorm_before: norm(format!("{p}.layernorm_before"))?,
                query: dense(&format!("{a}.query"), c, c, cfg.qkv_bias)?,
                key: dense(&format!("{a}.key"), c, c, cfg.qkv_bias)?,
                value: dense(&format!("{a}.value"), c, c, cfg.qkv_bias)?,
                attention_output: dense(&format!("{p}.attention.output.dense"), c, c, true)?,
                layernorm_after: norm(format!("{p}.layernorm_after"))?,
                intermediate: dense(&format!("{p}.intermediate.dense"), f, c, true)?,
                output: dense(&format!("{p}.output.dense"), c, f, true)?,
            });
        }
        let (classifier, distillation_classifier) = if st.tensors.contains_key("cls_classifier.weight") {
            (dense("cls_classifier", k, c, true)?, Some(dense("distillation_classifier", k, c, true)?))
        } else {
            (dense("classifier", k, c, true)?, None)
        };
        Ok(Weights {
            patch,
            cls_token: token("cls_token")?,
            distillation_token: (cfg.family == Family::Deit).then(|| token("distillation_token")).transpose()?,
            position_embeddings,
            layers,
            layernorm: norm(format!("{pre}.layernorm"))?,
            classifier,
            distillation_classifier,
        })
    }

    /// The refusals that need only the tensors' names and shapes: a layer past
    /// `num_hidden_layers`, and position embeddings for another number of patches.
    pub fn check_header(cfg: &Config, tensors: &BTreeMap<String, TensorInfo>) -> Result<(), LoadError> {
        let pre = prefix(cfg);
        let layers_at = format!("{pre}.encoder.layer.");
        for name in tensors.keys() {
            let layer = name.strip_prefix(&layers_at).and_then(|r| r.split('.').next()?.parse::<usize>().ok());
            if let Some(l) = layer.filter(|&l| l >= cfg.num_hidden_layers) {
                return Err(LoadError::Config(format!(
                    "num_hidden_layers = {} but the checkpoint has a layer {l}",
                    cfg.num_hidden_layers
                )));
            }
        }
        let positions = format!("{pre}.embeddings.position_embeddings");
        if let Some(info) = tensors.get(&positions) {
            let n = cfg.tokens();
            if info.shape.len() == 3 && info.shape[1] != n {
                return Err(LoadError::Config(format!(
                    "{positions} holds {} positions, but image_size {} in patches of {} makes {n} tokens: \
                     positions for another image size are not interpolated",
                    info.shape[1], cfg.image_size, cfg.patch_size
                )));
            }
        }
        Ok(())
    }

    /// The tensors a config calls for, with their shapes, in the checkpoint's names (`tensors`, the
    /// file's, says whether DeiT's teacher head is there).
    pub fn expected(cfg: &Config, tensors: &BTreeMap<String, TensorInfo>) -> Vec<(String, Vec<usize>)> {
        let (pre, c, f, k) = (prefix(cfg), cfg.hidden_size, cfg.intermediate_size, cfg.labels.len());
        let mut out = vec![
            (
                format!("{pre}.embeddings.patch_embeddings.projection.weight"),
                vec![c, cfg.num_channels, cfg.patch_size, cfg.patch_size],
            ),
            (format!("{pre}.embeddings.patch_embeddings.projection.bias"), vec![c]),
            (format!("{pre}.embeddings.cls_token"), vec![1, 1, c]),
            (format!("{pre}.embeddings.position_embeddings"), vec![1, cfg.tokens(), c]),
            (format!("{pre}.layernorm.weight"), vec![c]),
            (format!("{pre}.layernorm.bias"), vec![c]),
        ];
        if cfg.family == Family::Deit {
            out.push((format!("{pre}.embeddings.distillation_token"), vec![1, 1, c]));
        }
        for l in 0..cfg.num_hidden_layers {
            let p = format!("{pre}.encoder.layer.{l}");
            for (name, shape) in [
                ("attention.attention.query", [c, c]),
                ("attention.attention.key", [c, c]),
                ("attention.attention.value", [c, c]),
                ("attention.output.dense", [c, c]),
                ("intermediate.dense", [f, c]),
                ("output.dense", [c, f]),
            ] {
                out.push((format!("{p}.{name}.weight"), shape.to_vec()));
                if cfg.qkv_bias || !name.starts_with("attention.attention") {
                    out.push((format!("{p}.{name}.bias"), vec![shape[0]]));
                }
            }
            for norm in ["layernorm_before", "layernorm_after"] {
                out.push((format!("{p}.{norm}.weight"), vec![c]));
                out.push((format!("{p}.{norm}.bias"), vec![c]));
            }
        }
        let heads: &[&str] = if tensors.contains_key("cls_classifier.weight") {
            &["cls_classifier", "distillation_classifier"]
        } else {
            &["classifier"]
        };
        for h in heads {
            out.push((format!("{h}.weight"), vec![k, c]));
            out.push((format!("{h}.bias"), vec![k]));
        }
        out
    }
}

/// The checkpoint's prefix of the encoder's tensors.
pub fn prefix(cfg: &Config) -> &'static str {
    match cfg.family {
        Family::Vit => "vit",
        Family::Deit => "deit",
    }
}
