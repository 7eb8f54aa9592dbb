//! Scaled dot-product attention, step by step, with every intermediate kept so the page can
//! show it: Q, K, V, scores, scaled scores, masked scores, weights, output.
//!
//!   Attention(Q, K, V) = softmax(Q Kᵀ / √d_k + M) V
//!
//! where M is 0 where a query may look at a key and −∞ (or a large negative number) where it
//! may not.

use ndarray::{Array1, Array2, ArrayView2};

use super::softmax::masked_softmax;

/// How masked scores are filled before the softmax.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MaskFill {
    /// −∞: masked weights are exactly 0; a row with every key masked has no softmax (0/0).
    NegInf,
    /// A large negative number (e.g. −10⁶): masked weights underflow to 0 as long as one key
    /// is visible; a fully masked row becomes uniform over the masked keys.
    Value(f64),
}

impl MaskFill {
    pub fn value(self) -> f64 {
        match self {
            MaskFill::NegInf => f64::NEG_INFINITY,
            MaskFill::Value(v) => v,
        }
    }
}

/// Row-wise softmax of `scores` where `allowed[i][j]` is false for masked entries.
/// Returns the weights and, per row, whether the softmax exists (it does not for a fully
/// masked row filled with −∞); an undefined row is all zeros.
pub fn masked_softmax_rows(
    scores: ArrayView2<f64>,
    allowed: ArrayView2<bool>,
    fill: MaskFill,
) -> (Array2<f64>, Array2<f64>, Vec<bool>) {
    let masked =
        Array2::from_shape_fn(scores.dim(), |(i, j)| if allowed[[i, j]] { scores[[i, j]] } else { fill.value() });
    let mut w = Array2::zeros(scores.dim());
    let mut defined = vec![false; scores.nrows()];
    for (i, row) in masked.rows().into_iter().enumerate() {
        if let Some(r) = masked_softmax(row) {
            w.row_mut(i).assign(&r);
            defined[i] = true;
        }
    }
    (masked, w, defined)
}

/// A mask allowing the first `valid` keys of every row (padding after them is hidden).
pub fn valid_length_mask(n_q: usize, n_k: usize, valid: usize) -> Array2<bool> {
    Array2::from_shape_fn((n_q, n_k), |(_, j)| j < valid)
}

/// The causal (look-ahead) mask: query i may attend to keys 0..=i only.
pub fn causal_mask(n: usize) -> Array2<bool> {
    Array2::from_shape_fn((n, n), |(i, j)| j <= i)
}

/// Every intermediate of scaled dot-product attention.
#[derive(Debug, Clone, PartialEq)]
pub struct AttentionSteps {
    /// Q Kᵀ: (n_q, d_k) x (d_k, n_k) -> (n_q, n_k)
    pub scores: Array2<f64>,
    /// Q Kᵀ / √d_k
    pub scaled: Array2<f64>,
    /// scaled, with masked entries replaced by the fill value
    pub masked: Array2<f64>,
    /// softmax of each row: (n_q, n_k), rows sum to 1
    pub weights: Array2<f64>,
    /// weights V: (n_q, n_k) x (n_k, d_v) -> (n_q, d_v)
    pub output: Array2<f64>,
    /// false for rows where every key was masked with −∞
    pub defined: Vec<bool>,
}

/// softmax(Q Kᵀ / √d_k, masked) V. `mask = None` allows everything; `scale = false` skips √d_k.
pub fn attention(
    q: ArrayView2<f64>,
    k: ArrayView2<f64>,
    v: ArrayView2<f64>,
    mask: Option<ArrayView2<bool>>,
    fill: MaskFill,
    scale: bool,
) -> AttentionSteps {
    let d_k = q.ncols() as f64;
    let scores = q.dot(&k.t()); // (n_q, d_k) x (d_k, n_k) -> (n_q, n_k)
    let scaled = if scale { &scores / d_k.sqrt() } else { scores.clone() };
    let all = Array2::from_elem(scores.dim(), true);
    let (masked, weights, defined) = masked_softmax_rows(scaled.view(), mask.unwrap_or(all.view()), fill);
    let output = weights.dot(&v); // (n_q, n_k) x (n_k, d_v) -> (n_q, d_v)
    AttentionSteps { scores, scaled, masked, weights, output, defined }
}

/// Additive (Bahdanau) score: a(q, k) = w_vᵀ tanh(W_q q + W_k k).
/// q: (d_q,), k: (d_k,), W_q: (h, d_q), W_k: (h, d_k), w_v: (h,). q and k may differ in size.
pub fn additive_score(
    q: &Array1<f64>,
    k: &Array1<f64>,
    w_q: &Array2<f64>,
    w_k: &Array2<f64>,
    w_v: &Array1<f64>,
) -> f64 {
    // (h, d_q) x (d_q,) + (h, d_k) x (d_k,) -> (h,)
    let hidden = (w_q.dot(q) + w_k.dot(k)).mapv(f64::tanh);
    w_v.dot(&hidden)
}

/// Luong's "general" score: qᵀ W k, W: (d_q, d_k).
pub fn general_score(q: &Array1<f64>, k: &Array1<f64>, w: &Array2<f64>) -> f64 {
    q.dot(&w.dot(k)) // (d_q,) · ((d_q, d_k) x (d_k,)) -> scalar
}

/// Multi-head attention on X (n, d_model) with h heads of size d_model / h.
pub struct MultiHead {
    /// One (n, n) weight matrix per head.
    pub head_weights: Vec<Array2<f64>>,
    /// The heads' outputs side by side: (n, h · d_head) = (n, d_model)
    pub concat: Array2<f64>,
    /// concat W_O: (n, d_model) x (d_model, d_model) -> (n, d_model)
    pub output: Array2<f64>,
}

/// W_q, W_k, W_v, W_o are (d_model, d_model); head j uses columns j·d_head .. (j+1)·d_head of
/// the first three (the usual way one big projection is split into heads).
pub fn multi_head(
    x: ArrayView2<f64>,
    w_q: &Array2<f64>,
    w_k: &Array2<f64>,
    w_v: &Array2<f64>,
    w_o: &Array2<f64>,
    h: usize,
    causal: bool,
) -> MultiHead {
    let (n, d_model) = x.dim();
    let d_head = d_model / h;
    let q = x.dot(w_q); // (n, d_model) x (d_model, d_model) -> (n, d_model)
    let k = x.dot(w_k);
    let v = x.dot(w_v);
    let mask = causal_mask(n);
    let mut concat = Array2::zeros((n, d_model));
    let mut head_weights = Vec::with_capacity(h);
    for j in 0..h {
        let cols = ndarray::s![.., j * d_head..(j + 1) * d_head];
        let steps =
            attention(q.slice(cols), k.slice(cols), v.slice(cols), causal.then(|| mask.view()), MaskFill::NegInf, true);
        concat.slice_mut(cols).assign(&steps.output); // (n, d_head) into its block
        head_weights.push(steps.weights);
    }
    let output = concat.dot(w_o);
    MultiHead { head_weights, concat, output }
}

/// Multiply-adds of attention for n tokens: per head, Q Kᵀ costs n·n·d_head and weights·V
/// another n·n·d_head; in total over h heads that is 2·n²·d_model, whatever h is.
pub fn attention_flops_per_head(n: usize, d_head: usize) -> usize {
    2 * n * n * d_head
}

/// A (T, S) matrix shrunk to at most n × n cells by [`max_pool_into`]: a head's thumbnail.
pub fn max_pool(m: ArrayView2<f32>, n: usize) -> Array2<f32> {
    let mut out = Array2::<f32>::zeros((m.nrows().min(n), m.ncols().min(n)));
    max_pool_into(m, out.view_mut());
    out
}

/// Shrinks a (T, S) matrix into `out` (rows ≤ T, cols ≤ S): each cell is the largest value of
/// its block, so a sharp weight stays visible in a small picture.
pub fn max_pool_into(m: ArrayView2<f32>, mut out: ndarray::ArrayViewMut2<f32>) {
    use ndarray::s;
    let ((t, s), (r, c)) = (m.dim(), out.dim());
    for a in 0..r {
        let (i0, i1) = (a * t / r, ((a + 1) * t / r).max(a * t / r + 1));
        for b in 0..c {
            let (j0, j1) = (b * s / c, ((b + 1) * s / c).max(b * s / c + 1));
            out[[a, b]] = m.slice(s![i0..i1, j0..j1]).fold(0.0f32, |acc, &v| acc.max(v));
        }
    }
}
