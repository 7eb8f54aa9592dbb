//! The checkpoint's tensors, under the names Hugging Face gives them.
//!
//! Conv1D layout: a linear layer's weight is stored (in, out), so y = x W + b.
//! Accepted layouts: names with or without the `transformer.` prefix; `h.N.attn.bias` and
//! `h.N.attn.masked_bias` (causal-mask buffers in the original checkpoint) are skipped;
//! `lm_head.weight`, when present, must equal `wte` (GPT-2 ties them).

use std::borrow::Cow;

use ndarray::{Array1, Array2};

use super::{Config, LoadError};
use crate::formats::safetensors::{SafeTensors, TensorInfo};
use crate::numerics::packed::PackedMatrix;

#[derive(Debug, Clone)]
pub struct Linear {
    /// (in, out)
    pub weight: LinearWeight,
    /// (out,)
    pub bias: Array1<f32>,
}

/// A linear layer's weight (in, out), stored the way the CPU kernel that multiplies by it
/// reads fastest: row-major natively (ndarray's matrix product), packed in column panels in
/// the browser (`packed`). Only one copy is kept: GPT-2 small's are 340 MB in f32.
#[derive(Debug, Clone, PartialEq)]
pub enum LinearWeight {
    Plain(Array2<f32>),
    Packed(PackedMatrix),
}

pub use crate::model::stream::PACK_WEIGHTS;

impl Linear {
    /// A layer in this build's layout (`PACK_WEIGHTS`).
    pub fn new(weight: Array2<f32>, bias: Array1<f32>) -> Linear {
        Linear::with_layout(weight, bias, PACK_WEIGHTS)
    }

    /// A layer in a chosen layout: tests run the browser's packed kernel natively with it.
    pub fn with_layout(weight: Array2<f32>, bias: Array1<f32>, packed: bool) -> Linear {
        let weight =
            if packed { LinearWeight::Packed(PackedMatrix::pack(weight.view())) } else { LinearWeight::Plain(weight) };
        Linear { weight, bias }
    }

    /// (in, out)
    pub fn dim(&self) -> (usize, usize) {
        match &self.weight {
            LinearWeight::Plain(w) => w.dim(),
            LinearWeight::Packed(p) => p.dim(),
        }
    }

    /// W (in, out), row-major: borrowed natively, unpacked into a copy in the browser (for
    /// the GPU upload and the checkpoint writer, which want the checkpoint's layout).
    pub fn weight(&self) -> Cow<'_, Array2<f32>> {
        match &self.weight {
            LinearWeight::Plain(w) => Cow::Borrowed(w),
            LinearWeight::Packed(p) => Cow::Owned(p.unpack()),
        }
    }

    /// Every stored weight value, in storage order (packed panels may end in padding zeros).
    pub fn stored_weights(&self) -> &[f32] {
        match &self.weight {
            LinearWeight::Plain(w) => w.as_slice().expect("weights are in standard layout"),
            LinearWeight::Packed(p) => p.stored(),
        }
    }

    /// The same layer, in the same layout, with f applied to every weight (not the bias).
    pub fn map_weights(&self, f: impl Fn(f32) -> f32) -> Linear {
        Linear::with_layout(self.weight().mapv(f), self.bias.clone(), matches!(self.weight, LinearWeight::Packed(_)))
    }
}

#[derive(Debug, Clone)]
pub struct LayerNorm {
    pub weight: Array1<f32>,
    pub bias: Array1<f32>,
}

#[derive(Debug, Clone)]
pub struct Attn {
    /// (C, 3C): the query, key and value projections side by side.
    pub c_attn: Linear,
    /// (C, C): the output projection W_O.
    pub c_proj: Linear,
}

#[derive(Debug, Clone)]
pub struct Mlp {
    /// (C, 4C)
    pub c_fc: Linear,
    /// (4C, C)
    pub c_proj: Linear,
}

#[derive(Debug, Clone)]
pub struct Block {
    pub ln_1: LayerNorm,
    pub attn: Attn,
    pub ln_2: LayerNorm,
    pub mlp: Mlp,
}

#[derive(Debug, Clone)]
pub struct Weights {
    /// (vocab, C): token embeddings, also the output layer.
    pub wte: Array2<f32>,
    /// (n_positions, C): learned position embeddings.
    pub wpe: Array2<f32>,
    pub h: Vec<Block>,
    pub ln_f: LayerNorm,
}

struct Reader<'a, 'b> {
    st: &'b SafeTensors<'a>,
    prefix: &'static str,
    /// Lay the linear layers' weights out packed (`LinearWeight::Packed`).
    packed: bool,
}

impl Reader<'_, '_> {
    fn info(&self, name: &str, shape: &[usize]) -> Result<&TensorInfo, LoadError> {
        let full = format!("{}{name}", self.prefix);
        let info = self
            .st
            .tensors
            .get(&full)
            .or_else(|| self.st.tensors.get(name))
            .ok_or_else(|| LoadError::Missing(name.to_string()))?;
        if info.shape != shape {
            return Err(LoadError::Shape {
                tensor: name.to_string(),
                expected: shape.to_vec(),
                found: info.shape.clone(),
            });
        }
        Ok(info)
    }
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, LoadError> {
        Ok(self.st.to_f32(self.info(name, shape)?))
    }
    fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<Array2<f32>, LoadError> {
        let v = self.get(name, &[rows, cols])?;
        Ok(Array2::from_shape_vec((rows, cols), v).expect("shape checked"))
    }
    fn vector(&self, name: &str, n: usize) -> Result<Array1<f32>, LoadError> {
        Ok(Array1::from(self.get(name, &[n])?))
    }
    fn linear(&self, name: &str, n_in: usize, n_out: usize) -> Result<Linear, LoadError> {
        let (wname, bias) = (format!("{name}.weight"), self.vector(&format!("{name}.bias"), n_out)?);
        if !self.packed {
            return Ok(Linear::with_layout(self.matrix(&wname, n_in, n_out)?, bias, false));
        }
        // Packed straight from the file: a row-major copy first would, per matrix, allocate and
        // free as much again, and leave the browser's never-shrinking memory fragmented.
        let info = self.info(&wname, &[n_in, n_out])?;
        let packed = PackedMatrix::from_rows(n_in, n_out, |f| self.st.for_each_row_f32(info, f));
        Ok(Linear { weight: LinearWeight::Packed(packed), bias })
    }
    fn layer_norm(&self, name: &str, c: usize) -> Result<LayerNorm, LoadError> {
        Ok(LayerNorm {
            weight: self.vector(&format!("{name}.weight"), c)?,
            bias: self.vector(&format!("{name}.bias"), c)?,
        })
    }
}

impl Weights {
    /// Reads every tensor the config calls for, checking names and shapes, in this build's
    /// layout (`PACK_WEIGHTS`).
    pub fn from_safetensors(st: &SafeTensors, cfg: &Config) -> Result<Self, LoadError> {
        Weights::from_safetensors_in(st, cfg, PACK_WEIGHTS)
    }

    /// `from_safetensors` in a chosen layout: tests read the browser's packed one natively.
    pub fn from_safetensors_in(st: &SafeTensors, cfg: &Config, packed: bool) -> Result<Self, LoadError> {
        let prefix = if st.tensors.keys().any(|k| k.starts_with("transformer.")) { "transformer." } else { "" };
        let r = Reader { st, prefix, packed };
        let (c, f) = (cfg.n_embd, cfg.n_inner);
        // Tensors the config does not know of mean config and checkpoint disagree (e.g. more layers).
        for name in st.tensors.keys() {
            let bare = name.strip_prefix("transformer.").unwrap_or(name);
            if let Some(rest) = bare.strip_prefix("h.") {
                let layer: Option<usize> = rest.split('.').next().and_then(|s| s.parse().ok());
                if let Some(l) = layer.filter(|&l| l >= cfg.n_layer) {
                    return Err(LoadError::Config(format!(
                        "n_layer = {} but the checkpoint has a layer {l}",
                        cfg.n_layer
                    )));
                }
            }
        }
        // Every tensor the config calls for exists with its shape and holds only finite numbers,
        // before anything is allocated from the config's sizes: a config cannot make the loader
        // reserve what the file does not hold. A NaN or an infinity would turn every output into
        // NaN; one pass over the weights finds it (see `first_non_finite` for its cost).
        for (name, shape) in Weights::expected(cfg) {
            let info = r.info(&name, &shape)?;
            if let Some((index, nan)) = st.first_non_finite(info) {
                let what = if nan { "a NaN" } else { "an infinity" };
                return Err(LoadError::NotFinite { tensor: name, index, what });
            }
        }
        let wte = r.matrix("wte.weight", cfg.vocab_size, c)?;
        if let Some(info) = st.tensors.get("lm_head.weight") {
            if info.shape != [cfg.vocab_size, c] {
                return Err(LoadError::Shape {
                    tensor: "lm_head.weight".into(),
                    expected: vec![cfg.vocab_size, c],
                    found: info.shape.clone(),
                });
            }
            if st.to_f32(info) != wte.as_slice().expect("standard layout") {
                return Err(LoadError::Checkpoint("lm_head.weight differs from wte.weight; GPT-2 ties them".into()));
            }
        }
        let mut h = Vec::with_capacity(cfg.n_layer);
        for l in 0..cfg.n_layer {
            let p = format!("h.{l}");
            h.push(Block {
                ln_1: r.layer_norm(&format!("{p}.ln_1"), c)?,
                attn: Attn {
                    c_attn: r.linear(&format!("{p}.attn.c_attn"), c, 3 * c)?,
                    c_proj: r.linear(&format!("{p}.attn.c_proj"), c, c)?,
                },
                ln_2: r.layer_norm(&format!("{p}.ln_2"), c)?,
                mlp: Mlp {
                    c_fc: r.linear(&format!("{p}.mlp.c_fc"), c, f)?,
                    c_proj: r.linear(&format!("{p}.mlp.c_proj"), f, c)?,
                },
            });
        }
        Ok(Weights { wte, wpe: r.matrix("wpe.weight", cfg.n_positions, c)?, h, ln_f: r.layer_norm("ln_f", c)? })
    }

    /// The tensors a config calls for, with their shapes, in the checkpoint's order (`named`).
    pub fn expected(cfg: &Config) -> Vec<(String, Vec<usize>)> {
        let (c, f) = (cfg.n_embd, cfg.n_inner);
        let mut out =
            vec![("wte.weight".into(), vec![cfg.vocab_size, c]), ("wpe.weight".into(), vec![cfg.n_positions, c])];
        for l in 0..cfg.n_layer {
            let p = format!("h.{l}");
            for ln in ["ln_1", "ln_2"] {
                out.push((format!("{p}.{ln}.weight"), vec![c]));
                out.push((format!("{p}.{ln}.bias"), vec![c]));
            }
            for (name, n_in, n_out) in
                [("attn.c_attn", c, 3 * c), ("attn.c_proj", c, c), ("mlp.c_fc", c, f), ("mlp.c_proj", f, c)]
            {
                out.push((format!("{p}.{name}.weight"), vec![n_in, n_out]));
                out.push((format!("{p}.{name}.bias"), vec![n_out]));
            }
        }
        out.push(("ln_f.weight".into(), vec![c]));
        out.push(("ln_f.bias".into(), vec![c]));
        out
    }

    /// Random weights in GPT-2's initialisation (normal, std 0.02; layer norms γ = 1, β = 0),
    /// for benchmarks of any size without a download.
    pub fn random(cfg: &Config, seed: u64) -> Self {
        let mut rng = crate::numerics::rng::Rng::new(seed);
        let mut m = |r: usize, c: usize| Array2::from_shape_fn((r, c), |_| (rng.normal() * 0.02) as f32);
        let (c, f) = (cfg.n_embd, cfg.n_inner);
        let ln = || LayerNorm { weight: Array1::ones(c), bias: Array1::zeros(c) };
        let wte = m(cfg.vocab_size, c);
        let wpe = m(cfg.n_positions, c);
        let h = (0..cfg.n_layer)
            .map(|_| Block {
                ln_1: ln(),
                attn: Attn {
                    c_attn: Linear::new(m(c, 3 * c), Array1::zeros(3 * c)),
                    c_proj: Linear::new(m(c, c), Array1::zeros(c)),
                },
                ln_2: ln(),
                mlp: Mlp {
                    c_fc: Linear::new(m(c, f), Array1::zeros(f)),
                    c_proj: Linear::new(m(f, c), Array1::zeros(c)),
                },
            })
            .collect();
        Weights { wte, wpe, h, ln_f: ln() }
    }

    /// The same weights with every linear layer in the chosen layout (`Linear::with_layout`):
    /// the native tests run the browser's packed kernels with it.
    pub fn with_layout(&self, packed: bool) -> Weights {
        let relay = |l: &Linear| Linear::with_layout(l.weight().into_owned(), l.bias.clone(), packed);
        let h = self
            .h
            .iter()
            .map(|b| Block {
                ln_1: b.ln_1.clone(),
                attn: Attn { c_attn: relay(&b.attn.c_attn), c_proj: relay(&b.attn.c_proj) },
                ln_2: b.ln_2.clone(),
                mlp: Mlp { c_fc: relay(&b.mlp.c_fc), c_proj: relay(&b.mlp.c_proj) },
            })
            .collect();
        Weights { wte: self.wte.clone(), wpe: self.wpe.clone(), h, ln_f: self.ln_f.clone() }
    }

    /// The tensors under their checkpoint names (no prefix), e.g. to write a checkpoint.
    pub fn named(&self) -> Vec<(String, Vec<usize>, Vec<f32>)> {
        fn m(name: String, a: &Array2<f32>) -> (String, Vec<usize>, Vec<f32>) {
            (name, a.shape().to_vec(), a.iter().copied().collect())
        }
        fn v(name: String, a: &Array1<f32>) -> (String, Vec<usize>, Vec<f32>) {
            (name, vec![a.len()], a.to_vec())
        }
        let mut out = vec![m("wte.weight".into(), &self.wte), m("wpe.weight".into(), &self.wpe)];
        for (l, b) in self.h.iter().enumerate() {
            let p = format!("h.{l}");
            for (name, ln) in [("ln_1", &b.ln_1), ("ln_2", &b.ln_2)] {
                out.push(v(format!("{p}.{name}.weight"), &ln.weight));
                out.push(v(format!("{p}.{name}.bias"), &ln.bias));
            }
            for (name, lin) in [
                ("attn.c_attn", &b.attn.c_attn),
                ("attn.c_proj", &b.attn.c_proj),
                ("mlp.c_fc", &b.mlp.c_fc),
                ("mlp.c_proj", &b.mlp.c_proj),
            ] {
                out.push(m(format!("{p}.{name}.weight"), &lin.weight()));
                out.push(v(format!("{p}.{name}.bias"), &lin.bias));
            }
        }
        out.push(v("ln_f.weight".into(), &self.ln_f.weight));
        out.push(v("ln_f.bias".into(), &self.ln_f.bias));
        out
    }
}
