//! `dense`'s projections and layer norms on the GPU, for the encoder-style engines' GPU passes
//! (`marian::gpu`, `vit::gpu`): uploaded once, recorded into a batch.

use super::dense::{Dense, LayerNorm};
use crate::gpu::kernels::{self, Batch};
use crate::gpu::{Gpu, Precision, Weight};

/// y = x W + b with W (n_in, n_out) on the GPU.
pub struct GpuDense {
    pub weight: Weight,
    pub bias: wgpu::Buffer,
    pub n_in: usize,
    pub n_out: usize,
}

impl GpuDense {
    /// Several projections of one input side by side, as one: W (in, Σ out), the biases
    /// concatenated (a self-attention's q, k and v make one (C, 3C) product whose rows are
    /// [Q | K | V]). The product kernels take W as (in, out): the checkpoint's (out, in) matrices
    /// are uploaded transposed. Call inside `Gpu::checked`.
    pub fn upload(gpu: &Gpu, name: &str, parts: &[&Dense]) -> GpuDense {
        let ws: Vec<ndarray::Array2<f32>> = parts.iter().map(|d| d.weight.weight()).collect();
        let views: Vec<_> = ws.iter().map(|w| w.view()).collect();
        let wt = ndarray::concatenate(ndarray::Axis(0), &views).expect("the projections share their input width");
        let wt = wt.reversed_axes().as_standard_layout().into_owned();
        let bias: Vec<f32> = parts.iter().flat_map(|d| d.bias.iter().copied()).collect();
        GpuDense {
            n_in: wt.nrows(),
            n_out: wt.ncols(),
            weight: gpu.upload_weight(name, wt.as_slice().expect("standard layout"), Precision::F32),
            bias: gpu.upload(name, &bias),
        }
    }

    /// Records y = x W + b (y += … with `accumulate`: a residual connection): (rows, in) -> (rows, out).
    pub fn record(&self, b: &mut Batch, x: &wgpu::Buffer, y: &wgpu::Buffer, rows: usize, accumulate: bool) {
        kernels::linear(b, x, &self.weight, &self.bias, y, rows, self.n_in, self.n_out, accumulate);
    }
}

/// A layer norm's gain and shift on the GPU.
pub struct GpuNorm {
    pub weight: wgpu::Buffer,
    pub bias: wgpu::Buffer,
}

impl GpuNorm {
    /// Call inside `Gpu::checked`.
    pub fn upload(gpu: &Gpu, name: &str, ln: &LayerNorm) -> GpuNorm {
        GpuNorm { weight: gpu.upload(name, &ln.weight.to_vec()), bias: gpu.upload(name, &ln.bias.to_vec()) }
    }
}
