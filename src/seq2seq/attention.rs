//! The scoring functions of the seq2seq models: how decoder state s scores encoder state hⱼ.
//!
//! - Bahdanau (additive): e_j = v_aᵀ tanh(W_a s + U_a hⱼ), with s the *previous* decoder state;
//! - Luong dot: sᵀhⱼ; general: sᵀ W hⱼ; concat: vᵀ tanh(W [s; hⱼ]), with s the *current* state;
//! - Luong local-p: a predicted centre p = S·σ(v_pᵀ tanh(W_p s)), general scores softmaxed
//!   over the window |j − p| ≤ D, then multiplied by a Gaussian exp(−(j − p)²/(2σ²)), σ = D/2.

use ndarray::{concatenate, Array1, Array2, ArrayView1, ArrayView2, Axis};

#[derive(Debug, Clone)]
pub enum Score {
    Bahdanau { w_a: Array2<f32>, u_a: Array2<f32>, v_a: Array1<f32> },
    Dot,
    General { w: Array2<f32> },
    Concat { w: Array2<f32>, v: Array1<f32> },
}

impl Score {
    /// Scores of state s (H,) against every encoder state: (S, H) -> (S,).
    pub fn scores(&self, s: ArrayView1<f32>, hs: ArrayView2<f32>) -> Array1<f32> {
        match self {
            // (A, H) x (H,) -> (A,), broadcast against (S, H) x (H, A) -> (S, A); tanh; x (A,) -> (S,)
            Score::Bahdanau { w_a, u_a, v_a } => {
                let ws = w_a.dot(&s);
                let mut e = hs.dot(&u_a.t());
                e += &ws;
                e.mapv_inplace(f32::tanh);
                e.dot(v_a)
            }
            // (S, H) x (H,) -> (S,)
            Score::Dot => hs.dot(&s),
            // sᵀ W hⱼ = (Wᵀ s) · hⱼ: (H, H)ᵀ x (H,) -> (H,); (S, H) x (H,) -> (S,)
            Score::General { w } => hs.dot(&w.t().dot(&s)),
            // W [s; hⱼ] = W_s s + W_h hⱼ with W = [W_s | W_h]: (A, 2H) split in two (A, H)
            Score::Concat { w, v } => {
                let n_h = s.len();
                let ws = w.slice(ndarray::s![.., ..n_h]).dot(&s);
                let mut e = hs.dot(&w.slice(ndarray::s![.., n_h..]).t());
                e += &ws;
                e.mapv_inplace(f32::tanh);
                e.dot(v)
            }
        }
    }
}

/// Local-p attention's position predictor and window.
#[derive(Debug, Clone)]
pub struct Local {
    /// (H, H)
    pub w_p: Array2<f32>,
    /// (H,)
    pub v_p: Array1<f32>,
    /// Window half-width D.
    pub d: usize,
}

impl Local {
    /// The predicted centre p ∈ [0, S] for state s.
    pub fn centre(&self, s: ArrayView1<f32>, len: usize) -> f32 {
        let x = self.v_p.dot(&self.w_p.dot(&s).mapv(f32::tanh));
        len as f32 / (1.0 + (-x).exp())
    }

    /// Weights from scores: softmax over the window |j − p| ≤ D (keys outside get −∞, so
    /// exactly 0), times the Gaussian. Not renormalised, as in Luong et al.
    pub fn weights(&self, scores: ArrayView1<f32>, p: f32) -> Array1<f32> {
        let d = self.d as f32;
        let sigma = d / 2.0;
        let inside = |j: usize| (j as f32 - p).abs() <= d;
        let m = scores.iter().enumerate().filter(|(j, _)| inside(*j)).fold(f32::NEG_INFINITY, |a, (_, &b)| a.max(b));
        if m == f32::NEG_INFINITY {
            return Array1::zeros(scores.len()); // no key in the window: no context
        }
        let e: Array1<f32> =
            scores.iter().enumerate().map(|(j, &x)| if inside(j) { (x - m).exp() } else { 0.0 }).collect();
        let z = e.sum();
        e.iter().enumerate().map(|(j, &x)| x / z * (-(j as f32 - p).powi(2) / (2.0 * sigma * sigma)).exp()).collect()
    }
}

/// softmax over a row: subtract the maximum first, so exp never overflows.
pub fn softmax(x: ArrayView1<f32>) -> Array1<f32> {
    let m = x.fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let e = x.mapv(|v| (v - m).exp());
    let z = e.sum();
    e / z
}

/// [a; b] for two vectors.
pub fn cat(a: ArrayView1<f32>, b: ArrayView1<f32>) -> Array1<f32> {
    concatenate(Axis(0), &[a, b]).expect("vectors")
}
