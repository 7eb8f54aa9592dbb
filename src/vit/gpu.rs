//! The Vision Transformer's forward pass on the GPU: the same computation as `vit::model`, the
//! weights uploaded once, one image's pass recorded into one batch (one submission, one readback)
//! with the kernels the translation model uses (`Kernel::Attend` writes every attention's weights
//! out, as the page draws them). What runs on the host: cutting the image into patches (a
//! rearrangement), the class token and positions of the first rows, and the classifier on the
//! class token's final row (a few hundred numbers, read back).
//!
//! The patch embedding is one product over all N rows: the patches' pixels, with zero rows for the
//! class (and distillation) token, added into x, which the host filled with the tokens and
//! positions (less the product's bias on the token rows, which the product then adds back).
//!
//! F32 weights only. Tested against the `transformers` fixtures in `tests/gpu/vit_gpu.rs`.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use ndarray::{s, Array2, Array3, ArrayView3};

use super::model::{Options, Output, Vit};
use crate::gpu::kernels::{self, Batch, Kernel};
use crate::gpu::{params, Gpu, GpuError};
use crate::model::dense::{Dense, LayerNorm};
use crate::model::gpu_dense::{GpuDense, GpuNorm};
use crate::model::RunError;

struct GpuLayer {
    layernorm_before: GpuNorm,
    /// C → 3C: [query | key | value]
    qkv: GpuDense,
    attention_output: GpuDense,
    layernorm_after: GpuNorm,
    intermediate: GpuDense,
    output: GpuDense,
}

pub struct GpuVit {
    pub gpu: Rc<Gpu>,
    /// The model this one was uploaded from: the host's part of the pass reads it.
    pub model: Arc<Vit>,
    patch: GpuDense,
    layers: Vec<GpuLayer>,
    layernorm: GpuNorm,
    /// Set by `fail_next`: the next pass records an invalid shader.
    fault: Cell<bool>,
}

impl GpuVit {
    /// Uploads the CPU model's weights (f32). Fails, without uploading, when a tensor exceeds the
    /// adapter's limits or the heads are outside what the attention kernel takes (d ≤ 64, 32
    /// heads).
    pub async fn upload(gpu: Rc<Gpu>, model: Arc<Vit>) -> Result<GpuVit, GpuError> {
        let cfg = &model.config;
        crate::gpu::head_size(cfg.hidden_size, cfg.num_attention_heads)?;
        if cfg.num_attention_heads > 32 {
            let heads = cfg.num_attention_heads;
            return Err(GpuError::Unsupported(format!("{heads} heads (the attention kernel takes 32)")));
        }
        let (c, f) = (cfg.hidden_size, cfg.intermediate_size);
        gpu.check_size("the q, k and v projections", (c * 3 * c * 4) as u64)?;
        gpu.check_size("the MLP weights", (c * f * 4) as u64)?;
        let g = &gpu;
        let w = &model.weights;
        let (patch, layers, layernorm) = gpu
            .checked(|| {
                let dense = |name: &str, parts: &[&Dense]| GpuDense::upload(g, name, parts);
                let norm = |name: &str, ln: &LayerNorm| GpuNorm::upload(g, name, ln);
                let layers = w
                    .layers
                    .iter()
                    .map(|l| GpuLayer {
                        layernorm_before: norm("layernorm_before", &l.layernorm_before),
                        qkv: dense("qkv", &[&l.query, &l.key, &l.value]),
                        attention_output: dense("attention.output", &[&l.attention_output]),
                        layernorm_after: norm("layernorm_after", &l.layernorm_after),
                        intermediate: dense("intermediate", &[&l.intermediate]),
                        output: dense("output", &[&l.output]),
                    })
                    .collect::<Vec<_>>();
                (dense("patch_embeddings", &[&w.patch]), layers, norm("layernorm", &w.layernorm))
            })
            .await?;
        Ok(GpuVit { gpu, model, patch, layers, layernorm, fault: Cell::new(false) })
    }

    /// Makes the next pass fail with a real device error (a shader that does not compile), so
    /// that tests and the page can show the fallback to the CPU.
    pub fn fail_next(&self) {
        self.fault.set(true);
    }

    /// Runs the model on preprocessed pixels (channels, height, width), as `Vit::forward`. An
    /// image of the wrong shape is refused (`GpuError::Unsupported` with `RunError`'s words).
    pub async fn forward(&self, pixels: ArrayView3<'_, f32>, opts: &Options) -> Result<Output, GpuError> {
        let m = &self.model;
        let cfg = &m.config;
        let want = (cfg.num_channels, cfg.image_size, cfg.image_size);
        if pixels.dim() != want {
            return Err(GpuError::Unsupported(RunError::ImageShape { got: pixels.dim(), want }.to_string()));
        }
        let (n, c, heads, extra) = (cfg.tokens(), cfg.hidden_size, cfg.num_attention_heads, cfg.extra_tokens());
        // At most 32 heads × 4096² tokens (`MAX_TOKENS`): in u64, no product overflows.
        self.gpu.check_size("the attention weights of one layer", heads as u64 * (n * n) as u64 * 4)?;
        // (N, channels · p · p): the patches' pixels, zero rows for the extra tokens.
        let patches = m.patches(pixels);
        let mut rows = Array2::<f32>::zeros((n, patches.ncols()));
        rows.slice_mut(s![extra.., ..]).assign(&patches);
        // (N, C): the tokens and positions, less the patch product's bias on the token rows.
        let mut x0 = m.weights.position_embeddings.clone();
        x0.row_mut(0).scaled_add(1.0, &(&m.weights.cls_token - &m.weights.patch.bias));
        if let Some(d) = &m.weights.distillation_token {
            x0.row_mut(1).scaled_add(1.0, &(d - &m.weights.patch.bias));
        }
        let gpu = &self.gpu;
        let f = cfg.intermediate_size;
        let (readback, at) = gpu
            .checked(|| {
                if self.fault.take() {
                    gpu.record_fault();
                }
                let buf = |name: &str, len: usize| gpu.buffer(name, len);
                let (x, h, qkv, y) = (buf("x", n * c), buf("h", n * c), buf("qkv", n * 3 * c), buf("y", n * c));
                let (k, v, a, w) = (buf("k", n * c), buf("v", n * c), buf("a", n * f), buf("w", heads * n * n));
                let pix = gpu.upload("patches", rows.as_slice().expect("standard layout"));
                gpu.write(&x, 0, bytemuck::cast_slice(x0.as_slice().expect("standard layout")));
                let mut b = Batch::new(gpu);
                let mut at = Reads::default();
                // x += patches W + b: (N, ch·p·p) x (ch·p·p, C) -> (N, C)
                self.patch.record(&mut b, &pix, &x, n, true);
                if opts.hidden_states {
                    at.hidden.push(b.read(&x, 0, n * c));
                }
                for (l, layer) in self.layers.iter().enumerate() {
                    // x += attn(LayerNorm(x)): (N, C) -> (N, 3C) = [Q | K | V] -> (N, C)
                    self.norm(&mut b, &x, &layer.layernorm_before, &h, n);
                    layer.qkv.record(&mut b, &h, &qkv, n, false);
                    let p = params::KvAppend { t: n as u32, c: c as u32, past: 0, row0: 0 };
                    b.add(Kernel::KvAppend, &p, &[&qkv, &k, &v], [kernels::groups_for(n * c, 256), 1, 1]);
                    let hd = c / heads;
                    let ablate =
                        opts.knock_out.iter().filter(|(kl, kh)| *kl == l && *kh < 32).fold(0, |m, (_, h)| m | 1 << h);
                    let p = params::Attend {
                        t: n as u32,
                        s: n as u32,
                        hd: hd as u32,
                        q_stride: 3 * c as u32,
                        row0: 0,
                        causal: 0,
                        ablate,
                        scale: 1.0 / (hd as f32).sqrt(),
                    };
                    kernels::attend(&mut b, p, heads, (&qkv, &k, &v), (&y, &w));
                    if opts.attentions {
                        at.attentions.push(b.read(&w, 0, heads * n * n));
                    }
                    layer.attention_output.record(&mut b, &y, &x, n, true);
                    // x += mlp(LayerNorm(x)): (N, C) -> (N, F) -> (N, C)
                    self.norm(&mut b, &x, &layer.layernorm_after, &h, n);
                    layer.intermediate.record(&mut b, &h, &a, n, false);
                    kernels::activation(&mut b, &a, n * f, cfg.hidden_act.kernel());
                    layer.output.record(&mut b, &a, &x, n, true);
                    if opts.hidden_states {
                        at.hidden.push(b.read(&x, 0, n * c));
                    }
                }
                // The final norm of the extra tokens' rows, which the classifiers read.
                self.norm(&mut b, &x, &self.layernorm, &h, extra);
                at.heads = b.read(&h, 0, extra * c);
                (b.submit(), at)
            })
            .await?;
        let all = match readback {
            Some(r) => r.values(gpu).await?,
            None => Vec::new(),
        };
        let part = |at: usize, len: usize| all[at..at + len].to_vec();
        let shape =
            |v: Vec<f32>, rows| Array2::from_shape_vec((rows, c), v).expect("the readback holds what was recorded");
        let normed = shape(part(at.heads, extra * c), extra);
        let head = |d: &Dense, row: usize| d.apply(normed.slice(s![row..row + 1, ..])).row(0).to_owned();
        let logits = match &m.weights.distillation_classifier {
            Some(d) => (head(&m.weights.classifier, 0) + head(d, 1)) / 2.0,
            None => head(&m.weights.classifier, 0),
        };
        if logits.iter().any(|v| !v.is_finite()) {
            return Err(GpuError::Unsupported(RunError::NotFinite.to_string()));
        }
        Ok(Output {
            logits,
            hidden_states: at.hidden.iter().map(|&o| shape(part(o, n * c), n)).collect(),
            attentions: at
                .attentions
                .iter()
                .map(|&o| Array3::from_shape_vec((heads, n, n), part(o, heads * n * n)).expect("recorded"))
                .collect(),
        })
    }

    /// y ← LayerNorm(x) for the first `rows` rows.
    fn norm(&self, b: &mut Batch, x: &wgpu::Buffer, ln: &GpuNorm, y: &wgpu::Buffer, rows: usize) {
        let cfg = &self.model.config;
        let p = params::Norm { rows: rows as u32, n: cfg.hidden_size as u32, eps: cfg.layer_norm_eps as f32, row0: 0 };
        b.add(Kernel::LayerNorm, &p, &[x, &ln.weight, &ln.bias, y], [rows as u32, 1, 1]);
    }
}

/// Where each value read back starts in the readback.
#[derive(Default)]
struct Reads {
    /// The final norm's rows of the extra tokens.
    heads: usize,
    hidden: Vec<usize>,
    attentions: Vec<usize>,
}
