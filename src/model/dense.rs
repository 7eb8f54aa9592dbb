//! A projection with a bias, a layer norm and an MLP's activation, as `nn.Linear`, `nn.LayerNorm`
//! and `ACT2FN` give them: the pieces the encoder-style engines (`marian`, `vit`) build their
//! blocks from; `gpu_dense` holds the same on the GPU.

use ndarray::{Array1, Array2, ArrayView2};

use super::linear::Linear;
use crate::gpu::kernels::Act;

/// An MLP's activation, by the name a config gives it (`activation_function`, `hidden_act`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// x · σ(x) ("swish", "silu"): OPUS-MT's.
    Swish,
    Relu,
    /// The exact GELU, with erf ("gelu"): ViT's.
    Gelu,
    /// GELU's tanh approximation ("gelu_new", "gelu_pytorch_tanh").
    GeluTanh,
}

impl Activation {
    pub fn from_name(name: &str) -> Option<Activation> {
        Some(match name {
            "swish" | "silu" => Activation::Swish,
            "relu" => Activation::Relu,
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" => Activation::GeluTanh,
            _ => return None,
        })
    }

    /// The activation of one value.
    pub fn apply(self, x: f32) -> f32 {
        match self {
            Activation::Swish => crate::numerics::silu::silu(x),
            Activation::Relu => x.max(0.0),
            Activation::Gelu => 0.5 * x * (1.0 + libm::erff(x / std::f32::consts::SQRT_2)),
            Activation::GeluTanh => crate::numerics::gelu::gelu_new(x),
        }
    }

    /// The GPU kernel's twin (`wgsl/activation.wgsl`).
    pub fn kernel(self) -> Act {
        match self {
            Activation::Swish => Act::Silu,
            Activation::Relu => Act::Relu,
            Activation::Gelu => Act::Gelu,
            Activation::GeluTanh => Act::GeluNew,
        }
    }
}

/// A projection with a bias: y = x Wᵀ + b, W stored (out, in).
#[derive(Debug, Clone)]
pub struct Dense {
    pub weight: Linear,
    /// (out,)
    pub bias: Array1<f32>,
}

impl Dense {
    /// (T, in) -> (T, out)
    pub fn apply(&self, x: ArrayView2<f32>) -> Array2<f32> {
        self.weight.apply(x) + &self.bias
    }
}

/// A layer norm's gain and shift, as `nn.LayerNorm` holds them (its ε is the caller's).
#[derive(Debug, Clone)]
pub struct LayerNorm {
    /// (C,)
    pub weight: Array1<f32>,
    /// (C,)
    pub bias: Array1<f32>,
}

impl LayerNorm {
    /// Each row: γ ⊙ (x − μ) / √(σ² + ε) + β, the mean and the (biased, as PyTorch) variance in
    /// f64. (T, C) -> (T, C)
    pub fn apply(&self, x: ArrayView2<f32>, eps: f64) -> Array2<f32> {
        let mut out = x.to_owned();
        for mut row in out.rows_mut() {
            let n = row.len() as f64;
            let mean = row.iter().map(|&v| v as f64).sum::<f64>() / n;
            let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, &g), &b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = ((*v as f64 - mean) * inv) as f32 * g + b;
            }
        }
        out
    }
}
