//! A projection with a bias and a layer norm, as `nn.Linear` and `nn.LayerNorm` hold them: the
//! pieces the encoder-style engines (`marian`, `vit`) build their blocks from.

use ndarray::{Array1, Array2, ArrayView2};

use super::linear::Linear;

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
