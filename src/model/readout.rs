//! A GPU forward pass's results, read back in one buffer and cut into a [`ForwardOutput`]: where
//! each result starts (recorded while the pass is recorded, `Batch::read`) and the sizes that
//! give each its shape. The same for every family.

use ndarray::{Array2, Array3};

use super::ForwardOutput;
use crate::gpu::GpuError;

/// Where each result starts in a forward pass's readback (in f32).
#[derive(Debug, Default)]
pub struct Offsets {
    pub logits: usize,
    /// (layer, offset) of each captured layer's (H, T, S) weights.
    pub captured: Vec<(usize, usize)>,
    /// Every layer's thumbnails, (H, rows, cols) each, one after the other.
    pub thumbnails: Option<usize>,
    /// The residual stream after the embeddings and after each block, (T, C) each.
    pub hidden: Vec<usize>,
    /// Each layer's heads' output before the projection, (T, H·D) each.
    pub head_outputs: Vec<usize>,
}

/// The sizes of one pass's results.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub layers: usize,
    pub heads: usize,
    /// T, the new tokens; S, every position so far.
    pub t: usize,
    pub s: usize,
    /// C, the residual stream's width.
    pub width: usize,
    /// H·D, the heads' outputs side by side.
    pub heads_width: usize,
    pub vocab: usize,
    /// 1, or T with `all_logits`.
    pub logit_rows: usize,
    /// (rows, cols) of each head's thumbnail, when asked for.
    pub thumbs: Option<(usize, usize)>,
}

impl Offsets {
    /// Cuts `all` (the readback's values) into the output; a readback shorter than the offsets
    /// say is a GPU failure, never a panic.
    pub fn unpack(self, all: &[f32], z: Sizes) -> Result<ForwardOutput, GpuError> {
        let slice = |from: usize, len: usize| {
            all.get(from..from + len).map(<[f32]>::to_vec).ok_or_else(|| GpuError::Failed("a short readback".into()))
        };
        let shape_err = |e: ndarray::ShapeError| GpuError::Failed(format!("read back the wrong size: {e}"));
        let (h, t, s) = (z.heads, z.t, z.s);
        let logits = Array2::from_shape_vec((z.logit_rows, z.vocab), slice(self.logits, z.logit_rows * z.vocab)?)
            .map_err(shape_err)?;
        let mut attentions: Vec<Option<Array3<f32>>> = (0..z.layers).map(|_| None).collect();
        for (l, from) in self.captured {
            attentions[l] = Some(Array3::from_shape_vec((h, t, s), slice(from, h * t * s)?).map_err(shape_err)?);
        }
        let mut thumbnails = Vec::new();
        if let (Some(from), Some((r, k))) = (self.thumbnails, z.thumbs) {
            let n = h * r * k;
            for l in 0..z.layers {
                thumbnails.push(Array3::from_shape_vec((h, r, k), slice(from + l * n, n)?).map_err(shape_err)?);
            }
        }
        let hidden_states = self
            .hidden
            .iter()
            .map(|&from| Array2::from_shape_vec((t, z.width), slice(from, t * z.width)?).map_err(shape_err))
            .collect::<Result<Vec<_>, _>>()?;
        let rows =
            |from: usize, width: usize| Array2::from_shape_vec((t, width), slice(from, t * width)?).map_err(shape_err);
        let head_outputs = self.head_outputs.iter().map(|&from| rows(from, z.heads_width)).collect::<Result<_, _>>()?;
        Ok(ForwardOutput { logits, attentions, hidden_states, thumbnails, head_outputs })
    }
}
