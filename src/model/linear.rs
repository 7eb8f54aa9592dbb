//! A linear layer's weight in nn.Linear's layout, for every family that stores its projections
//! (out, in) (the Llama family, Marian): y = x Wᵀ, stored the way the CPU kernel reads fastest. A
//! bias, where the family has one, is the family's to add.

use ndarray::{Array2, ArrayView2};

use crate::numerics::packed::PackedMatrix;

/// A projection without bias, y = x Wᵀ, stored the way its CPU kernel reads fastest.
#[derive(Debug, Clone, PartialEq)]
pub enum Linear {
    /// W as the checkpoint stores it, (out, in), row-major: natively, where ndarray multiplies
    /// by the transposed view directly, and a decoding step (one row) takes one dot product
    /// per contiguous row of W.
    Plain(Array2<f32>),
    /// Wᵀ (in, out) packed in column panels for the browser's kernel (`numerics::packed`).
    Packed(PackedMatrix),
}

impl Linear {
    /// A layer from W (out, in), in the chosen layout.
    pub fn with_layout(w: Array2<f32>, packed: bool) -> Linear {
        if packed {
            Linear::Packed(PackedMatrix::pack(w.t()))
        } else {
            Linear::Plain(w)
        }
    }

    /// (in, out)
    pub fn dim(&self) -> (usize, usize) {
        match self {
            Linear::Plain(w) => (w.ncols(), w.nrows()),
            Linear::Packed(p) => p.dim(),
        }
    }

    /// W (out, in), the checkpoint's layout (a copy when packed).
    pub fn weight(&self) -> Array2<f32> {
        match self {
            Linear::Plain(w) => w.clone(),
            Linear::Packed(p) => p.unpack().reversed_axes().as_standard_layout().into_owned(),
        }
    }

    /// Every stored weight value, in memory order (packed panels may end in padding zeros).
    pub fn stored(&self) -> &[f32] {
        match self {
            Linear::Plain(w) => w.as_slice_memory_order().expect("a weight is one contiguous array"),
            Linear::Packed(p) => p.stored(),
        }
    }

    /// y = x Wᵀ: (T, in) x (in, out) -> (T, out).
    pub fn apply(&self, x: ArrayView2<f32>) -> Array2<f32> {
        let w = match self {
            Linear::Packed(p) => return p.matmul(x),
            Linear::Plain(w) => w,
        };
        if x.nrows() > 1 {
            // ndarray's (matrixmultiply's) kernel reads the transposed view without a copy, and W
            // once for all the rows (beam search's beams are a few rows).
            return x.dot(&w.t());
        }
        // One row (a decoding step): one dot product per row of W, each read once in order.
        let mut y = Array2::zeros((x.nrows(), w.nrows()));
        for (xr, mut yr) in x.rows().into_iter().zip(y.rows_mut()) {
            // (out, in) x (in,) -> (out,)
            yr.assign(&w.dot(&xr));
        }
        y
    }
}
