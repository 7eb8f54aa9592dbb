//! The CPU kernels of GPT-2's forward pass, in f32. Each is the CPU twin of a GPU kernel.

use ndarray::{Array2, ArrayView2};

pub use super::gelu::{gelu_in_place, gelu_new};
use super::weights::{LayerNorm, Linear, LinearWeight};
pub use crate::numerics::flash::causal_attention;
pub use crate::numerics::packed::matmul;
/// The LM head, tied to the token embeddings wte (vocab, C): (T, C) x (C, vocab) -> (T, vocab).
pub use crate::numerics::packed::table_logits as tied_logits;
use crate::numerics::packed::Then;
use crate::numerics::par;

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
        LinearWeight::Packed(p) => return p.matmul_then(x, Then::Bias(bias(lin))),
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

/// gelu_new(x W + b), GPT-2's MLP up to its second product. The packed kernel adds the bias
/// and applies the GELU to each output as it is summed (on the thread that summed it).
pub fn linear_gelu(x: ArrayView2<f32>, lin: &Linear) -> Array2<f32> {
    if let LinearWeight::Packed(p) = &lin.weight {
        return p.matmul_then(x, Then::BiasGelu(bias(lin)));
    }
    let mut a = linear(x, lin);
    gelu_in_place(a.as_slice_mut().expect("a fresh array is contiguous"));
    a
}

fn bias(lin: &Linear) -> &[f32] {
    lin.bias.as_slice().expect("a bias is one contiguous array")
}

/// Layer norm of each row with GPT-2's affine parameters: γ ⊙ (x − μ) / √(σ² + ε) + β.
/// Mean and variance are accumulated in f64 so that wide rows lose no precision. Rows are
/// independent: on several threads each takes a run of them (`par::for_rows`).
pub fn layer_norm(x: ArrayView2<f32>, ln: &LayerNorm, eps: f32) -> Array2<f32> {
    // (T, C)
    let mut out = x.as_standard_layout().into_owned();
    let (c, work) = (out.ncols(), out.len().saturating_mul(par::ROW_PASS_WORK));
    par::for_rows(out.as_slice_mut().expect("standard layout"), c, work, |_, rows| {
        for row in rows.chunks_exact_mut(c) {
            let n = c as f64;
            let mean = row.iter().map(|&v| v as f64).sum::<f64>() / n;
            let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n; // biased, as PyTorch
            let inv = 1.0 / (var + eps as f64).sqrt();
            for ((v, &g), &b) in row.iter_mut().zip(&ln.weight).zip(&ln.bias) {
                *v = ((*v as f64 - mean) * inv) as f32 * g + b;
            }
        }
    });
    out
}
