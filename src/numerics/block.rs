//! The pieces of a transformer block besides attention: layer normalisation, the position-wise
//! feed-forward network with ReLU or GPT-2's GELU, residual connections; and the experiment
//! that shows why they are needed (stacked attention alone collapses the tokens together).

use ndarray::{Array1, Array2, Axis};

use super::attention::{attention, MaskFill};
use super::rng::normal_matrix;

/// Layer norm of each row: (x − mean) / sqrt(var + ε) (γ = 1, β = 0).
pub fn layer_norm(x: &Array2<f64>, eps: f64) -> Array2<f64> {
    let mut out = x.clone();
    for mut row in out.rows_mut() {
        let mean = row.mean().unwrap_or(0.0);
        let var = row.mapv(|v| (v - mean).powi(2)).mean().unwrap_or(0.0);
        row.mapv_inplace(|v| (v - mean) / (var + eps).sqrt());
    }
    out
}

pub fn relu(x: f64) -> f64 {
    x.max(0.0)
}

/// GELU, tanh form (as GPT-2): 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))).
pub fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh())
}

/// FFN(x) = W₂ act(W₁ x + b₁) + b₂ on every row: (n, d) x (d, h) -> (n, h) -> (n, d).
pub fn ffn(
    x: &Array2<f64>,
    w1: &Array2<f64>,
    b1: &Array1<f64>,
    w2: &Array2<f64>,
    b2: &Array1<f64>,
    act: fn(f64) -> f64,
) -> Array2<f64> {
    (x.dot(w1) + b1).mapv(act).dot(w2) + b2
}

/// How far the token rows are from all being the same vector: ‖X − 1 x̄ᵀ‖_F / ‖X‖_F
/// (0 when every row is identical, the "rank collapse" of Dong et al. 2021).
pub fn spread(x: &Array2<f64>) -> f64 {
    let mean = x.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(x.ncols()));
    let centred = x - &mean;
    let norm = x.mapv(|v| v * v).sum().sqrt();
    if norm == 0.0 {
        0.0
    } else {
        centred.mapv(|v| v * v).sum().sqrt() / norm
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockParts {
    pub residual: bool,
    pub ffn: bool,
    pub layer_norm: bool,
}

/// One layer's random weights: attention projections (d, d) and FFN matrices (d, 4d), (4d, d).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerWeights {
    pub wq: Array2<f64>,
    pub wk: Array2<f64>,
    pub wv: Array2<f64>,
    pub w1: Array2<f64>,
    pub w2: Array2<f64>,
}

/// A different random draw for every layer, all from `seed`.
pub fn random_layers(d: usize, layers: usize, seed: u64) -> Vec<LayerWeights> {
    let s = 1.0 / (d as f64).sqrt();
    (0..layers as u64)
        .map(|l| {
            let w = |k: u64, r: usize, c: usize, sc: f64| normal_matrix(r, c, seed ^ (l << 16) ^ (k << 40), sc);
            LayerWeights {
                wq: w(1, d, d, s),
                wk: w(2, d, d, s),
                wv: w(3, d, d, s),
                w1: w(4, d, 4 * d, s),
                w2: w(5, 4 * d, d, 1.0 / (4.0 * d as f64).sqrt()),
            }
        })
        .collect()
}

/// Stacks `layers` blocks with random weights (each layer its own) on a random X (n, d) and
/// returns the spread after each layer (index 0: the input). Pre-norm when layer norm is on:
///   X ← X + Attn(LN(X)),  X ← X + FFN(LN(X))   (without residual: X ← Attn(LN(X)), X ← FFN(LN(X)))
pub fn depth_experiment(n: usize, d: usize, layers: usize, parts: BlockParts, seed: u64) -> Vec<f64> {
    run_layers(&normal_matrix(n, d, seed, 1.0), &random_layers(d, layers, seed), parts).0
}

/// The stack on a given input with given weights: the spread after each layer, and the output.
pub fn run_layers(x0: &Array2<f64>, weights: &[LayerWeights], parts: BlockParts) -> (Vec<f64>, Array2<f64>) {
    let d = x0.ncols();
    let mut x = x0.clone();
    let mut out = vec![spread(&x)];
    let norm = |x: &Array2<f64>| if parts.layer_norm { layer_norm(x, 1e-5) } else { x.clone() };
    for w in weights {
        let h = norm(&x);
        let (q, k, v) = (h.dot(&w.wq), h.dot(&w.wk), h.dot(&w.wv)); // (n, d) x (d, d) -> (n, d)
        let a = attention(q.view(), k.view(), v.view(), None, MaskFill::NegInf, true).output;
        x = if parts.residual { &x + &a } else { a };
        if parts.ffn {
            let h = norm(&x);
            // (n, d) -> (n, 4d) -> (n, d)
            let f = ffn(&h, &w.w1, &Array1::zeros(4 * d), &w.w2, &Array1::zeros(d), gelu);
            x = if parts.residual { &x + &f } else { f };
        }
        out.push(spread(&x));
    }
    (out, x)
}
