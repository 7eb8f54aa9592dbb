//! Positional encodings.
//!
//! Sinusoidal (Vaswani et al. 2017): PE(pos, 2i) = sin(pos / base^(2i/d)),
//! PE(pos, 2i+1) = cos(pos / base^(2i/d)).

use ndarray::Array2;

/// The (max_len, d) sinusoidal table. For odd d the last column is a sine.
pub fn sinusoidal(max_len: usize, d: usize, base: f64) -> Array2<f64> {
    Array2::from_shape_fn((max_len, d), |(pos, j)| {
        let i2 = (j - j % 2) as f64; // 2i
        let angle = pos as f64 / base.powf(i2 / d as f64);
        if j % 2 == 0 {
            angle.sin()
        } else {
            angle.cos()
        }
    })
}
