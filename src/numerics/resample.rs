//! Resizing an 8-bit RGB image as Pillow's `Image.resize` does it (`libImaging/Resample.c`), so
//! that a picture reaches a vision model with the pixels `transformers`' image processors give it
//! (their PIL backend). A separable convolution, horizontal pass first: each output pixel is a
//! weighted sum of the input pixels under a filter centred on it, the filter stretched by the
//! scale when shrinking (so shrinking averages, antialiased); weights normalised to sum to 1,
//! then in fixed point with 22 fractional bits, each pass rounded and clipped to 0..255.

use ndarray::{Array3, ArrayView3};

/// Pillow's fixed point: 32 bits less 8 for the pixel, less 2 for the sign and the sum's headroom.
const PRECISION_BITS: u32 = 32 - 8 - 2;

/// The resampling filters transformers' processors use (`resample` 2 and 3 in their configs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// The triangle, support 1 (Pillow's BILINEAR).
    Bilinear,
    /// Keys' cubic with a = −0.5, support 2 (Pillow's BICUBIC).
    Bicubic,
}

impl Filter {
    fn support(self) -> f64 {
        match self {
            Filter::Bilinear => 1.0,
            Filter::Bicubic => 2.0,
        }
    }

    fn weight(self, x: f64) -> f64 {
        let x = x.abs();
        match self {
            Filter::Bilinear if x < 1.0 => 1.0 - x,
            Filter::Bicubic if x < 1.0 => (1.5 * x - 2.5) * x * x + 1.0,
            Filter::Bicubic if x < 2.0 => (((x - 5.0) * x + 8.0) * x - 4.0) * -0.5,
            _ => 0.0,
        }
    }
}

/// For each output pixel along one axis: the first input pixel read and its fixed-point weights
/// (Pillow's `precompute_coeffs` and `normalize_coeffs_8bpc`).
fn coefficients(in_size: usize, out_size: usize, filter: Filter) -> Vec<(usize, Vec<i32>)> {
    let scale = in_size as f64 / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = filter.support() * filterscale;
    (0..out_size)
        .map(|xx| {
            let center = (xx as f64 + 0.5) * scale;
            // C's (int) truncates toward zero.
            let xmin = ((center - support + 0.5) as i64).max(0) as usize;
            let xmax = ((center + support + 0.5) as i64).min(in_size as i64) as usize;
            let w: Vec<f64> =
                (xmin..xmax.max(xmin)).map(|x| filter.weight((x as f64 - center + 0.5) / filterscale)).collect();
            let sum: f64 = w.iter().sum();
            let fixed = w
                .iter()
                .map(|&k| {
                    let k = if sum != 0.0 { k / sum } else { k };
                    let v = k * f64::from(1u32 << PRECISION_BITS);
                    (if v < 0.0 { v - 0.5 } else { v + 0.5 }) as i32
                })
                .collect();
            (xmin, fixed)
        })
        .collect()
}

/// A weighted sum in fixed point back to a byte (Pillow's `clip8`).
fn clip8(sum: i64) -> u8 {
    (sum >> PRECISION_BITS).clamp(0, 255) as u8
}

/// Resizes an (H, W, channels) image to (height, width), as Pillow does.
pub fn resize(image: ArrayView3<u8>, (height, width): (usize, usize), filter: Filter) -> Array3<u8> {
    let (h, w, ch) = image.dim();
    let round = 1i64 << (PRECISION_BITS - 1);
    // Horizontal pass (when the width changes): (H, W, ch) -> (H, width, ch)
    let horizontal = if width != w {
        let k = coefficients(w, width, filter);
        Array3::from_shape_fn((h, width, ch), |(y, xx, c)| {
            let (x0, ref ks) = k[xx];
            clip8(
                ks.iter().enumerate().map(|(i, &kk)| i64::from(image[[y, x0 + i, c]]) * i64::from(kk)).sum::<i64>()
                    + round,
            )
        })
    } else {
        image.to_owned()
    };
    if height == h {
        return horizontal;
    }
    // Vertical pass: (H, width, ch) -> (height, width, ch)
    let k = coefficients(h, height, filter);
    Array3::from_shape_fn((height, width, ch), |(yy, x, c)| {
        let (y0, ref ks) = k[yy];
        clip8(
            ks.iter().enumerate().map(|(i, &kk)| i64::from(horizontal[[y0 + i, x, c]]) * i64::from(kk)).sum::<i64>()
                + round,
        )
    })
}
