//! The CPU kernels of a Llama-family forward pass, in f32: RMSNorm, RoPE, SiLU (`numerics::silu`),
//! the output layer. (Causal attention per head is `numerics::flash::causal_attention`, the projections
//! `weights::Linear::apply`.)

use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2};

use crate::numerics::par;

/// The output layer against the table (vocab, C) read in place: (T, C) x (C, vocab) -> (T, vocab).
pub use crate::numerics::packed::table_logits as logits;
pub use crate::numerics::silu::{silu, silu_mul_in_place};

/// RMSNorm of each row: x / √(mean(x²) + ε) ⊙ w (no centring, no bias), as `LlamaRMSNorm`.
/// The mean of squares is accumulated in f64 so wide rows lose no precision; the result is f32.
/// Rows are independent: on several threads each takes a run of them (`par::for_rows`).
pub fn rms_norm(x: ArrayView2<f32>, weight: &Array1<f32>, eps: f32) -> Array2<f32> {
    // (T, C)
    let mut out = x.as_standard_layout().into_owned();
    let (c, work) = (out.ncols(), out.len().saturating_mul(par::ROW_PASS_WORK));
    par::for_rows(out.as_slice_mut().expect("standard layout"), c, work, |_, rows| {
        for row in rows.chunks_exact_mut(c) {
            let ms = row.iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>() / c as f64;
            let inv = (1.0 / (ms + eps as f64).sqrt()) as f32;
            for (v, &g) in row.iter_mut().zip(weight) {
                *v = g * (*v * inv);
            }
        }
    });
    out
}

/// SwiGLU's gating on (T, F) arrays of the same layout, gate ← silu(gate) ⊙ up, its rows split
/// across threads (`par::for_rows`; each element's arithmetic is the same on any thread).
pub fn silu_mul_rows(gate: &mut [f32], up: &[f32], width: usize) {
    assert_eq!(gate.len(), up.len(), "gate and up differ in length");
    par::for_rows(gate, width, up.len().saturating_mul(par::ROW_PASS_WORK), |row0, rows| {
        silu_mul_in_place(rows, &up[row0 * width..][..rows.len()]);
    });
}

/// The rotation angles of RoPE for `len` positions from `start`: (len, D/2), row p holding
/// (start + p) · θᵢ with θᵢ = θ^(−2i/D), as cos and sin.
///
/// Hugging Face computes θᵢ and the product with the position in f32 (`LlamaRotaryEmbedding`):
/// the same f32 operations here give the same angles (to an ulp of θᵢ, whose power torch may
/// round differently), so positions in the thousands, where an f32 angle has lost a few digits,
/// rotate as in the reference. Only cos and sin are taken in f64, then rounded.
#[derive(Debug, Clone)]
pub struct Rope {
    /// (len, D/2)
    pub cos: Array2<f32>,
    /// (len, D/2)
    pub sin: Array2<f32>,
}

impl Rope {
    pub fn new(head_dim: usize, theta: f64, start: usize, len: usize) -> Rope {
        let half = head_dim / 2;
        // inv_freq = 1 / θ^(2i/D), with the exponent computed as torch does: (2i as f32) / D.
        let inv_freq: Vec<f32> =
            (0..half).map(|i| 1.0 / (theta as f32).powf((2 * i) as f32 / head_dim as f32)).collect();
        let angle = |p: usize, i: usize| ((start + p) as f32 * inv_freq[i]) as f64;
        Rope {
            cos: Array2::from_shape_fn((len, half), |(p, i)| angle(p, i).cos() as f32),
            sin: Array2::from_shape_fn((len, half), |(p, i)| angle(p, i).sin() as f32),
        }
    }

    /// (len, D): row p is [cos | sin] of position start + p, the table the GPU's RoPE kernel
    /// reads (`wgsl/rope.wgsl`), so both backends turn by the same f32 values.
    pub fn table(&self) -> Array2<f32> {
        // (concatenate! may lay the result out column by column: the kernel reads rows.)
        ndarray::concatenate![ndarray::Axis(1), self.cos, self.sin].as_standard_layout().into_owned()
    }

    /// Rotates the rows of x (T, n·D), n heads of width D side by side, row p by position
    /// start + p. Hugging Face's convention (`rotate_half`): dimension i of a head pairs with
    /// dimension i + D/2 (the two halves, not adjacent pairs), and
    ///   x′ᵢ       = xᵢ cos aᵢ − xᵢ₊D/2 sin aᵢ
    ///   x′ᵢ₊D/2 = xᵢ₊D/2 cos aᵢ + xᵢ sin aᵢ
    /// (the pair (xᵢ, xᵢ₊D/2) turned by the angle aᵢ = position · θᵢ).
    pub fn apply(&self, mut x: ArrayViewMut2<f32>, head_dim: usize) {
        let half = head_dim / 2;
        for (p, mut row) in x.rows_mut().into_iter().enumerate() {
            let (cos, sin) = (self.cos.row(p), self.sin.row(p));
            for h in 0..row.len() / head_dim {
                // Indexed, not sliced: any memory layout of x will do.
                for i in 0..half {
                    let (a, b) = (h * head_dim + i, h * head_dim + half + i);
                    let (x1, x2) = (row[a], row[b]);
                    row[a] = x1 * cos[i] - x2 * sin[i];
                    row[b] = x2 * cos[i] + x1 * sin[i];
                }
            }
        }
    }
}
