//! One GRU cell, with PyTorch's `nn.GRUCell` layout and gate order (r, z, n):
//!
//! r = σ(W_ir x + b_ir + W_hr h + b_hr)
//! z = σ(W_iz x + b_iz + W_hz h + b_hz)
//! n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
//! h′ = (1 − z) ⊙ n + z ⊙ h

use ndarray::{s, Array1, Array2, ArrayView1};

#[derive(Debug, Clone)]
pub struct GruCell {
    /// (3H, in), rows [r; z; n]
    pub weight_ih: Array2<f32>,
    /// (3H, H)
    pub weight_hh: Array2<f32>,
    /// (3H,)
    pub bias_ih: Array1<f32>,
    pub bias_hh: Array1<f32>,
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

impl GruCell {
    pub fn hidden(&self) -> usize {
        self.weight_hh.ncols()
    }

    /// One step: input x (in,), state h (H,) -> new state (H,).
    pub fn step(&self, x: ArrayView1<f32>, h: ArrayView1<f32>) -> Array1<f32> {
        let n_h = self.hidden();
        // (3H, in) x (in,) and (3H, H) x (H,) -> (3H,) each
        let gi = self.weight_ih.dot(&x) + &self.bias_ih;
        let gh = self.weight_hh.dot(&h) + &self.bias_hh;
        let (i_r, i_z, i_n) = (gi.slice(s![..n_h]), gi.slice(s![n_h..2 * n_h]), gi.slice(s![2 * n_h..]));
        let (h_r, h_z, h_n) = (gh.slice(s![..n_h]), gh.slice(s![n_h..2 * n_h]), gh.slice(s![2 * n_h..]));
        Array1::from_shape_fn(n_h, |k| {
            let r = sigmoid(i_r[k] + h_r[k]);
            let z = sigmoid(i_z[k] + h_z[k]);
            let n = (i_n[k] + r * h_n[k]).tanh();
            (1.0 - z) * n + z * h[k]
        })
    }
}
