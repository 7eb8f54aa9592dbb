//! The CPU kernels of GPT-2's forward pass, in f32. Each is the CPU twin of a GPU kernel.

use ndarray::{Array2, ArrayView2};

pub use super::gelu::{gelu_in_place, gelu_new};
use super::weights::{LayerNorm, Linear, LinearWeight};
pub use crate::numerics::flash::causal_attention;
pub use crate::numerics::packed::matmul;

/// y = x W + b: (T, in) x (in, out) -> (T, out).
///
/// In the browser W was packed at load time and `PackedMatrix::matmul` does the work. Natively
/// W is row-major and ndarray multiplies; but for a few rows (decoding with the KV cache has
/// T = 1) a general matrix product would first copy ("pack") all of W, doubling the memory
/// traffic of a step that is bound by it. Instead each output row is accumulated as
/// b + Σᵢ xᵢ W[i, :], reading W once, row by row.
pub fn linear(x: ArrayView2<f32>, lin: &Linear) -> Array2<f32> {
    let w = match &lin.weight {
        // The browser's kernel (`packed`), whose weights were packed at load time.
        LinearWeight::Packed(p) => return p.matmul(x) + &lin.bias,
        LinearWeight::Plain(w) => w,
    };
    if x.nrows() > 4 {
        // Natively, ndarray's (matrixmultiply's) kernel, with hand-written SIMD for x86 and ARM.
        return x.dot(w) + &lin.bias;
    }
    let mut y = Array2::zeros((x.nrows(), w.ncols()));
    for (xr, mut yr) in x.rows().into_iter().zip(y.rows_mut()) {
        yr.assign(&lin.bias);
        for (&xi, wr) in xr.iter().zip(w.rows()) {
            yr.scaled_add(xi, &wr);
        }
    }
    y
}

/// x · y, four lanes at a time with SIMD128.
#[cfg(target_arch = "wasm32")]
#[target_feature(enable = "simd128")]
fn dot(x: &[f32], y: &[f32]) -> f32 {
    use core::arch::wasm32::{f32x4_add, f32x4_extract_lane, f32x4_mul, f32x4_splat, v128, v128_load};
    let n = x.len().min(y.len());
    let n4 = n / 4 * 4;
    // Two accumulators (even and odd groups of four) so each addition need not wait for the last.
    let (mut acc, mut odd) = (f32x4_splat(0.0), f32x4_splat(0.0));
    let load = |i: usize| {
        // SAFETY: callers pass i + 4 ≤ n4 ≤ the length of both slices; v128 loads need no alignment.
        unsafe { f32x4_mul(v128_load(x.as_ptr().add(i) as *const v128), v128_load(y.as_ptr().add(i) as *const v128)) }
    };
    let n8 = n / 8 * 8;
    for i in (0..n8).step_by(8) {
        (acc, odd) = (f32x4_add(acc, load(i)), f32x4_add(odd, load(i + 4)));
    }
    if n4 > n8 {
        acc = f32x4_add(acc, load(n8));
    }
    let acc = f32x4_add(acc, odd);
    let lanes = f32x4_extract_lane::<0>(acc)
        + f32x4_extract_lane::<1>(acc)
        + f32x4_extract_lane::<2>(acc)
        + f32x4_extract_lane::<3>(acc);
    lanes + x[n4..n].iter().zip(&y[n4..n]).map(|(a, b)| a * b).sum::<f32>()
}

/// out[r] = table[r, :] · h for every row r (one thread: a one-row product is bound by memory,
/// see `par::one_row_work`).
#[cfg(target_arch = "wasm32")]
#[target_feature(enable = "simd128")]
fn dot_kernel(table: &[f32], h: &[f32], out: &mut [f32]) {
    let c = h.len();
    for (r, o) in out.iter_mut().enumerate() {
        *o = dot(&table[r * c..(r + 1) * c], h);
    }
}

/// Logits against the tied embedding table: (T, C) x (C, vocab) -> (T, vocab), computed as one
/// dot product per vocabulary row so the (vocab, C) table is read in place, never transposed
/// or packed.
pub fn tied_logits(h: ArrayView2<f32>, wte: &Array2<f32>) -> Array2<f32> {
    if h.nrows() > 4 {
        return h.dot(&wte.t());
    }
    let mut out = Array2::zeros((h.nrows(), wte.nrows()));
    for (hr, mut or) in h.rows().into_iter().zip(out.rows_mut()) {
        // (vocab, C) x (C,) -> (vocab,)
        #[cfg(not(target_arch = "wasm32"))]
        or.assign(&wte.dot(&hr));
        #[cfg(target_arch = "wasm32")]
        {
            let table = wte.as_slice().expect("wte is in standard layout");
            let hr = hr.to_vec();
            // (On wasm, SIMD functions are safe to call: see `PackedMatrix::matmul`.)
            dot_kernel(table, &hr, or.as_slice_mut().expect("a fresh row is contiguous"));
        }
    }
    out
}

/// Layer norm of each row with GPT-2's affine parameters: γ ⊙ (x − μ) / √(σ² + ε) + β.
/// Mean and variance are accumulated in f64 so that wide rows lose no precision.
pub fn layer_norm(x: ArrayView2<f32>, ln: &LayerNorm, eps: f32) -> Array2<f32> {
    let mut out = x.to_owned();
    for mut row in out.rows_mut() {
        let n = row.len() as f64;
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / n;
        let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n; // biased, as PyTorch
        let inv = 1.0 / (var + eps as f64).sqrt();
        for ((v, &g), &b) in row.iter_mut().zip(&ln.weight).zip(&ln.bias) {
            *v = ((*v as f64 - mean) * inv) as f32 * g + b;
        }
    }
    out
}
