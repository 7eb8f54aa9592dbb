//! Positional encodings.
//!
//! Sinusoidal (Vaswani et al. 2017): PE(pos, 2i) = sin(pos / base^(2i/d)),
//! PE(pos, 2i+1) = cos(pos / base^(2i/d)).

use ndarray::Array2;

/// The (max_len, d) sinusoidal table. For odd d the last column is a sine.
pub fn sinusoidal(max_len: usize, d: usize, base: f64) -> Array2<f64> {
    // One frequency per pair (d/2 powf calls, not one per cell). Down each pair's columns, the
    // next position is the previous one rotated by ω (the relative-position identity below):
    //   (sin ω(p+1), cos ω(p+1)) = (s cos ω + c sin ω, c cos ω − s sin ω),  (s, c) = (sin ωp, cos ωp)
    // Each step adds about one rounding error, so every REANCHOR-th position is computed
    // afresh with sin_cos. The table stays within 1.1e-13 of sin/cos computed per cell, up to
    // 1024 positions (about the rounding of the angle pos·ω itself; tested to 1e-12), with 16
    // times fewer sin_cos calls (a 128 × 512 table is 32,768 pairs per slider move).
    const REANCHOR: usize = 16;
    let mut pe = Array2::zeros((max_len, d));
    for i in 0..d.div_ceil(2) {
        let w = frequency(i, d, base);
        let (sin_w, cos_w) = w.sin_cos();
        let (mut s, mut c) = (0.0, 1.0);
        for pos in 0..max_len {
            (s, c) = match pos % REANCHOR {
                0 => (pos as f64 * w).sin_cos(),
                _ => (s * cos_w + c * sin_w, c * cos_w - s * sin_w),
            };
            pe[[pos, 2 * i]] = s;
            if 2 * i + 1 < d {
                pe[[pos, 2 * i + 1]] = c;
            }
        }
    }
    pe
}

/// ω_i = 1 / base^(2i/d): the angular frequency of pair i (dimensions 2i and 2i + 1).
pub fn frequency(i: usize, d: usize, base: f64) -> f64 {
    1.0 / base.powf(2.0 * i as f64 / d as f64)
}

/// Relative positions as rotations: for each frequency pair,
///   (sin ω(p+k), cos ω(p+k)) = R(ωk) (sin ωp, cos ωp),  R(θ) = [[cos θ, sin θ], [−sin θ, cos θ]]
/// R depends on the offset k only, not on p. Returns the largest |PE(p+k) − R(k) PE(p)| over
/// all pairs (0 up to rounding).
pub fn shift_error(p: f64, k: f64, d: usize, base: f64) -> f64 {
    (0..d / 2)
        .map(|i| {
            let w = frequency(i, d, base);
            let (s, c) = ((w * p).sin(), (w * p).cos());
            let (ct, st) = ((w * k).cos(), (w * k).sin());
            let rotated = (ct * s + st * c, -st * s + ct * c);
            ((w * (p + k)).sin() - rotated.0).abs().max(((w * (p + k)).cos() - rotated.1).abs())
        })
        .fold(0.0, f64::max)
}

/// Rotary position embedding (RoPE, Su et al. 2021): rotates each pair (x_2i, x_2i+1) of x by
/// the angle pos·ω_i. Then (R_m q)·(R_n k) depends on m − n only.
pub fn rope(x: &[f64], pos: f64, base: f64) -> Vec<f64> {
    let d = x.len();
    let mut out = x.to_vec();
    for i in 0..d / 2 {
        let (s, c) = (pos * frequency(i, d, base)).sin_cos();
        let (a, b) = (x[2 * i], x[2 * i + 1]);
        out[2 * i] = a * c - b * s;
        out[2 * i + 1] = a * s + b * c;
    }
    out
}

pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Cosine similarity of every pair of rows: (P, d) -> (P, P). A zero row has similarity 0.
pub fn cosine_matrix(m: ndarray::ArrayView2<f64>) -> Array2<f64> {
    let norms: Vec<f64> = m.rows().into_iter().map(|r| r.dot(&r).sqrt()).collect();
    // (P, d) x (d, P) -> (P, P), then divide by the norms.
    let mut g = m.dot(&m.t());
    for ((i, j), v) in g.indexed_iter_mut() {
        let n = norms[i] * norms[j];
        *v = if n > 0.0 { *v / n } else { 0.0 };
    }
    g
}

/// Mean of a square matrix's k-th diagonal (entries (p, p + k)), for k = 0 .. P − 1: how
/// similar positions k apart are on average.
pub fn mean_by_offset(sim: &Array2<f64>) -> Vec<f64> {
    let p = sim.nrows();
    (0..p).map(|k| (0..p - k).map(|i| sim[[i, i + k]]).sum::<f64>() / (p - k) as f64).collect()
}
