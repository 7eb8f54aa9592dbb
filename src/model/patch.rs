//! Activation patching, the same for every decoder family and both backends: values written into
//! a forward pass in place of what it computed there (the clean run's activations written into
//! the corrupted run). Two places can be patched:
//!
//! - the residual stream at a boundary (0: after the embeddings; l + 1: after block l), one row
//!   of the new tokens, C floats;
//! - one head's output in one layer, before the output projection mixes the heads: its D columns
//!   of the concatenated heads, for every new token, (T, D) row-major.
//!
//! The CPU engines call [`Patches::residual_into`] and [`Patches::heads_into`]; the GPU engines
//! record the same writes as copies from one uploaded buffer ([`GpuPatches`]).

use ndarray::{s, ArrayViewMut2};

use super::{RunError, Shape};
use crate::gpu::kernels::Batch;
use crate::gpu::Gpu;

/// One row of the residual stream, replaced.
#[derive(Debug, Clone, PartialEq)]
pub struct ResidualPatch {
    /// 0: after the embeddings; l + 1: after block l.
    pub boundary: usize,
    /// The row among the pass's new tokens.
    pub row: usize,
    /// (C)
    pub value: Vec<f32>,
}

/// One head's output, replaced at every new token.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadPatch {
    pub layer: usize,
    pub head: usize,
    /// (T, D) row-major.
    pub value: Vec<f32>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Patches {
    pub residual: Vec<ResidualPatch>,
    pub heads: Vec<HeadPatch>,
}

impl Patches {
    pub fn is_empty(&self) -> bool {
        self.residual.is_empty() && self.heads.is_empty()
    }

    /// Whether every patch fits a pass of `t` new tokens on a model of this shape (a patch that
    /// does not is refused as the input is: never a panic, never a silent skip).
    pub fn check(&self, shape: &Shape, t: usize) -> Result<(), RunError> {
        let bad = |why: String| Err(RunError::Inside(why));
        for p in &self.residual {
            if p.boundary > shape.layers || p.row >= t || p.value.len() != shape.width {
                return bad(format!(
                    "a residual-stream patch at boundary {} row {} with {} values does not fit {} layers, {t} \
                     tokens and width {}",
                    p.boundary,
                    p.row,
                    p.value.len(),
                    shape.layers,
                    shape.width
                ));
            }
        }
        for p in &self.heads {
            if p.layer >= shape.layers || p.head >= shape.heads || p.value.len() != t * shape.head_dim {
                return bad(format!(
                    "a patch of head {}.{} with {} values does not fit {} layers of {} heads and {t} tokens × {}",
                    p.layer,
                    p.head,
                    p.value.len(),
                    shape.layers,
                    shape.heads,
                    shape.head_dim
                ));
            }
        }
        Ok(())
    }

    /// Writes the patches of `boundary` into the residual stream x: (T, C).
    pub fn residual_into(&self, boundary: usize, mut x: ArrayViewMut2<f32>) {
        for p in self.residual.iter().filter(|p| p.boundary == boundary) {
            if let Some(mut row) = x.rows_mut().into_iter().nth(p.row).filter(|r| r.len() == p.value.len()) {
                row.iter_mut().zip(&p.value).for_each(|(x, v)| *x = *v);
            }
        }
    }

    /// Writes the head patches of `layer` into the heads' concatenated output y: (T, H·D).
    pub fn heads_into(&self, layer: usize, mut y: ArrayViewMut2<f32>, d: usize) {
        let t = y.nrows();
        for p in self.heads.iter().filter(|p| p.layer == layer && p.value.len() == t * d) {
            if (p.head + 1) * d <= y.ncols() {
                let value = ndarray::ArrayView2::from_shape((t, d), &p.value).expect("checked length");
                y.slice_mut(s![.., p.head * d..(p.head + 1) * d]).assign(&value);
            }
        }
    }
}

/// The patches of one GPU pass: every value in one buffer, uploaded before the pass, and copied
/// into the residual stream or the heads' output where the pass is recorded.
pub struct GpuPatches<'p> {
    patches: &'p Patches,
    buf: Option<wgpu::Buffer>,
    /// Where each residual patch's, then each head patch's, values start in `buf` (f32).
    starts: Vec<usize>,
}

impl<'p> GpuPatches<'p> {
    pub fn new(gpu: &Gpu, patches: &'p Patches) -> Self {
        let values: Vec<&[f32]> =
            patches.residual.iter().map(|p| &p.value[..]).chain(patches.heads.iter().map(|p| &p.value[..])).collect();
        let mut starts = Vec::with_capacity(values.len());
        let mut all = Vec::new();
        for v in values {
            starts.push(all.len());
            all.extend_from_slice(v);
        }
        let buf = (!all.is_empty()).then(|| gpu.upload("patches", &all));
        GpuPatches { patches, buf, starts }
    }

    /// Records the copies of `boundary`'s patches into x: (T, C).
    pub fn residual(&self, b: &mut Batch, boundary: usize, x: &wgpu::Buffer, c: usize) {
        let Some(buf) = &self.buf else { return };
        for (p, &from) in self.patches.residual.iter().zip(&self.starts) {
            if p.boundary == boundary {
                b.copy(buf, from, x, p.row * c, c);
            }
        }
    }

    /// Records the copies of `layer`'s head patches into y: (T, width), head h in columns
    /// h·D .. (h + 1)·D, one copy per row.
    pub fn heads(&self, b: &mut Batch, layer: usize, y: &wgpu::Buffer, (t, width, d): (usize, usize, usize)) {
        let Some(buf) = &self.buf else { return };
        let heads = self.starts[self.patches.residual.len()..].iter();
        for (p, &from) in self.patches.heads.iter().zip(heads) {
            if p.layer == layer {
                for r in 0..t {
                    b.copy(buf, from + r * d, y, r * width + p.head * d, d);
                }
            }
        }
    }
}
