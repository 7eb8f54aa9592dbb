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

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};

use super::packed::matmul;

/// What the online softmax holds after one tile of keys, for the step-through demo.
#[derive(Debug, Clone, Copy)]
pub struct TileStep<'a> {
    /// The keys of this tile: j0 .. j1.
    pub keys: (usize, usize),
    /// Their scores qᵀkⱼ/√d.
    pub scores: &'a [f32],
    /// The running maximum before and after the tile.
    pub m_before: f32,
    pub m_after: f32,
    /// exp(m_before − m_after): what ℓ and acc were multiplied by (0 on the first tile).
    pub rescale: f32,
    pub l: f32,
    pub acc: &'a Array1<f32>,
}

/// One query row against keys 0 .. visible, tile by tile; `on_tile` sees the state after each
/// tile (the benchmark passes a closure that does nothing, which compiles away).
pub fn online_row(
    qi: ArrayView1<f32>,
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    visible: usize,
    tile: usize,
    mut on_tile: impl FnMut(&TileStep),
) -> Array1<f32> {
    let scale = 1.0 / (qi.len() as f32).sqrt();
    let tile = tile.max(1);
    let mut scores = vec![0.0f32; tile];
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
        on_tile(&TileStep {
            keys: (j0, j1),
            scores: &scores[..j1 - j0],
            m_before: m,
            m_after: m_new,
            rescale,
            l,
            acc: &acc,
        });
        m = m_new;
    }
    acc / l
}

/// softmax(Q Kᵀ / √d, causal mask) V computed tile by tile: (n_q, d) for keys and values (n_k, d).
/// With `causal`, query i (of the last n_q positions of n_k) sees keys 0 ..= n_k − n_q + i.
pub fn tiled_attention(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    causal: bool,
    tile: usize,
) -> Array2<f32> {
    let (n_q, n_k) = (q.nrows(), k.nrows());
    let mut out = Array2::zeros((n_q, v.ncols()));
    for (i, (qi, mut oi)) in q.rows().into_iter().zip(out.rows_mut()).enumerate() {
        let visible = if causal { n_k - n_q + i + 1 } else { n_k };
        oi.assign(&online_row(qi, k, v, visible, tile, |_| {}));
    }
    out
}

/// The same attention the naive way, storing the (n_q, n_k) weights: the reference and the
/// "naive CPU" column of the benchmark.
pub fn naive_attention(q: ArrayView2<f32>, k: ArrayView2<f32>, v: ArrayView2<f32>, causal: bool) -> Array2<f32> {
    let past = if causal { k.nrows() - q.nrows() } else { 0 };
    if causal {
        return causal_attention(q, k, v, past).0;
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

/// Elements moved between the GPU's main memory and the chip for one head of n × n attention
/// with head size d (reads and writes counted alike):
/// - naive, as FlashAttention's paper lists it (its Algorithm 0): read Q, K (2nd); write S (n²);
///   read S, write P (2n²); read P and V (n² + nd); write O (nd): 4n² + 4nd;
/// - tiled, in blocks of `block` query rows: read each block of Q once (nd in all), stream all
///   of K and V past every block (2nd per block), write O (nd): 2nd + 2nd·⌈n/block⌉.
pub fn memory_traffic(n: usize, d: usize, block: usize) -> (u64, u64) {
    let (n, d, blocks) = (n as u64, d as u64, n.div_ceil(block.max(1)) as u64);
    (4 * n * n + 4 * n * d, 2 * n * d + 2 * n * d * blocks)
}

/// Causal attention of one head.
///
/// `q` holds the T new queries, whose absolute positions are `past .. past + T`; `k` and `v`
/// hold every key and value so far (S = past + T rows). Query i may attend to keys 0 ..= past + i.
/// Returns the head's output (T, d) and its weights (T, S), where masked entries are exactly 0.
pub fn causal_attention(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    past: usize,
) -> (Array2<f32>, Array2<f32>) {
    masked_attention(q, k, v, |i| past + i + 1)
}

/// Attention of one head without a mask: every query sees all S keys (an encoder's
/// self-attention, a decoder's cross-attention). Returns the output (T, d) and the weights (T, S).
pub fn full_attention(q: ArrayView2<f32>, k: ArrayView2<f32>, v: ArrayView2<f32>) -> (Array2<f32>, Array2<f32>) {
    let s = k.nrows();
    masked_attention(q, k, v, |_| s)
}

/// Query i attends to keys 0 .. visible(i).
fn masked_attention(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    visible: impl Fn(usize) -> usize,
) -> (Array2<f32>, Array2<f32>) {
    let d = q.ncols();
    let scale = 1.0 / (d as f32).sqrt();
    // (T, d) x (d, S) -> (T, S)
    let mut w = matmul(q, k.t()) * scale;
    for (i, mut row) in w.axis_iter_mut(Axis(0)).enumerate() {
        let visible = visible(i);
        // Masking: future keys get weight exactly 0. Setting them to −∞ before exp does the same;
        // here we simply skip them. The row max is subtracted before exp so no score overflows.
        let max = row.slice(s![..visible]).fold(f32::NEG_INFINITY, |m, &x| m.max(x));
        let mut sum = 0.0f32;
        for x in row.slice_mut(s![..visible]).iter_mut() {
            *x = (*x - max).exp();
            sum += *x;
        }
        row.slice_mut(s![..visible]).mapv_inplace(|x| x / sum);
        row.slice_mut(s![visible..]).fill(0.0);
    }
    // (T, S) x (S, d) -> (T, d)
    (matmul(w.view(), v), w)
}
