//! Tiled attention with an online softmax (the idea of FlashAttention): the n × n matrix of
//! weights is never stored. This is the CPU twin of the GPU's fused kernel
//! (`gpu/wgsl/attention.wgsl`), which does the same per query row with 256-key tiles.
//!
//! For one query row, over key tiles it keeps
//!   m   = the largest score seen so far,
//!   l   = Σ exp(sⱼ − m) over the keys seen,
//!   acc = Σ exp(sⱼ − m) · vⱼ over the keys seen (a vector of size d).
//! When a tile brings a larger maximum m′, the old l and acc are multiplied by exp(m − m′): that
//! is what they would be had m′ been subtracted from the start. After the last tile,
//! acc / l = Σ softmax(s)ⱼ vⱼ, the same output as the naive formula, in O(n·d) memory instead
//! of O(n²).

use ndarray::{s, Array1, Array2, ArrayView2};

/// softmax(Q Kᵀ / √d, causal mask) V computed tile by tile: (n_q, d) for keys and values (n_k, d).
/// With `causal`, query i (of the last n_q positions of n_k) sees keys 0 ..= n_k − n_q + i.
pub fn tiled_attention(q: ArrayView2<f32>, k: ArrayView2<f32>, v: ArrayView2<f32>, causal: bool, tile: usize) -> Array2<f32> {
    let (n_q, d) = q.dim();
    let n_k = k.nrows();
    let scale = 1.0 / (d as f32).sqrt();
    let tile = tile.max(1);
    let mut out = Array2::zeros((n_q, v.ncols()));
    let mut scores = vec![0.0f32; tile];
    for (i, (qi, mut oi)) in q.rows().into_iter().zip(out.rows_mut()).enumerate() {
        let visible = if causal { n_k - n_q + i + 1 } else { n_k };
        let (mut m, mut l) = (f32::NEG_INFINITY, 0.0f32);
        let mut acc = Array1::<f32>::zeros(v.ncols());
        for j0 in (0..visible).step_by(tile) {
            let j1 = (j0 + tile).min(visible);
            // (1, d) x (d, tile) -> (1, tile)
            for (sj, kj) in scores.iter_mut().zip(k.slice(s![j0..j1, ..]).rows()) {
                *sj = qi.dot(&kj) * scale;
            }
            let tile_max = scores[..j1 - j0].iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
            let m_new = m.max(tile_max);
            // Rescale what was summed against the old maximum (exp(−∞) = 0 on the first tile).
            let rescale = (m - m_new).exp();
            l *= rescale;
            acc *= rescale;
            // (1, tile) x (tile, d) -> (1, d)
            for (&sj, vj) in scores[..j1 - j0].iter().zip(v.slice(s![j0..j1, ..]).rows()) {
                let p = (sj - m_new).exp();
                l += p;
                acc.scaled_add(p, &vj);
            }
            m = m_new;
        }
        oi.assign(&(acc / l));
    }
    out
}

/// The same attention the naive way, storing the (n_q, n_k) weights: the reference and the
/// "naive CPU" column of the benchmark.
pub fn naive_attention(q: ArrayView2<f32>, k: ArrayView2<f32>, v: ArrayView2<f32>, causal: bool) -> Array2<f32> {
    let past = if causal { k.nrows() - q.nrows() } else { 0 };
    if causal {
        return crate::gpt2::ops::causal_attention(q, k, v, past).0;
    }
    let scale = 1.0 / (q.ncols() as f32).sqrt();
    // (n_q, d) x (d, n_k) -> (n_q, n_k)
    let mut w = q.dot(&k.t()) * scale;
    for mut row in w.rows_mut() {
        let m = row.fold(f32::NEG_INFINITY, |a, &b| a.max(b));
        row.mapv_inplace(|x| (x - m).exp());
        let z = row.sum();
        row /= z;
    }
    // (n_q, n_k) x (n_k, d) -> (n_q, d)
    w.dot(&v)
}

/// Bytes of intermediate storage each method needs for one head (f32): naive keeps the
/// (n_q, n_k) weights; tiled keeps, per query row at a time, m, l, acc (d) and one tile of scores.
pub fn extra_bytes(n_q: usize, n_k: usize, d: usize, tile: usize) -> (usize, usize) {
    (4 * n_q * n_k, 4 * (2 + d + tile))
}
