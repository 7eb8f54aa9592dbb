//! A Llama-family forward pass on the GPU: the same computation as `llama::model::Llama::forward`
//! (RMSNorm, RoPE, grouped-query attention, SwiGLU), with the weights uploaded once, the KV cache
//! (per KV head) and the activations kept in GPU buffers that are reused from token to token,
//! and only what the caller asks for read back (the logits; attention weights and hidden states
//! when requested). Its structure follows GPT-2's (`gpt2::gpu`).
//!
//! Two products each do the work of several of the checkpoint's: a layer's q, k and v
//! projections are one (C, H·D + 2·KV·D) matrix whose output rows are [Q | K | V] (what the
//! attention kernel reads, as GPT-2's `c_attn`), and gate and up one (C, 2F) whose output rows
//! are [gate | up] (what the SwiGLU kernel reads). The product kernels take W as (in, out): the
//! checkpoint's (out, in) matrices are uploaded transposed. Llama has no biases; the kernels'
//! bias is a buffer of zeros.
//!
//! Here the weights, the cache and the scratch buffers; the forward pass in `forward`.

mod forward;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use ndarray::{concatenate, Array2, Axis};

use super::weights::Linear;
use super::{Config, Llama};
use crate::gpu::table::{self, TableChunk};
use crate::gpu::{Gpu, GpuError, Precision, Weight};
pub use crate::model::engine::GpuKvCache;

/// y = x W with W (n_in, n_out) on the GPU.
struct GpuLinear {
    weight: Weight,
    n_in: usize,
    n_out: usize,
}

/// One decoder layer's weights.
struct GpuLayer {
    /// (C,): RMSNorm's gain before attention.
    input_layernorm: wgpu::Buffer,
    /// C → H·D + 2·KV·D: [q_proj | k_proj | v_proj]
    qkv_proj: GpuLinear,
    /// H·D → C
    o_proj: GpuLinear,
    /// (C,): RMSNorm's gain before the MLP.
    post_attention_layernorm: wgpu::Buffer,
    /// C → 2F: [gate_proj | up_proj]
    gate_up_proj: GpuLinear,
    /// F → C
    down_proj: GpuLinear,
}

/// Activations for up to `rows` new tokens, reused across calls (clones share the buffers).
#[derive(Clone)]
struct Scratch {
    rows: usize,
    /// (T, C): the residual stream.
    x: wgpu::Buffer,
    /// (T, C): a normalised copy of it.
    h: wgpu::Buffer,
    /// (T, H·D + 2·KV·D)
    qkv: wgpu::Buffer,
    /// (T, H·D): the heads' outputs side by side.
    y: wgpu::Buffer,
    /// (T, 2F)
    gu: wgpu::Buffer,
    /// (T, F)
    a: wgpu::Buffer,
    /// (T, D): RoPE's cos and sin of the new positions (`Rope::table`).
    rope: wgpu::Buffer,
    /// (1, vocab); more rows only with `all_logits`.
    logits: wgpu::Buffer,
    ids: wgpu::Buffer,
}

pub struct GpuLlama {
    pub gpu: Rc<Gpu>,
    pub config: Config,
    /// (vocab, C) in chunks of rows, each within the adapter's binding limit.
    embed_tokens: Vec<TableChunk>,
    /// (vocab, C), chunked likewise; None when tied to the embeddings.
    lm_head: Option<Vec<TableChunk>>,
    layers: Vec<GpuLayer>,
    /// (C,): the final RMSNorm's gain.
    norm: wgpu::Buffer,
    /// Zeros as wide as the widest product's output: the products' bias, and the position table
    /// the embedding kernel is told not to read.
    zeros: wgpu::Buffer,
    scratch: RefCell<Option<Scratch>>,
    /// Set by `fail_next`: the next forward pass records an invalid shader.
    fault: Cell<bool>,
}

/// W (out, in) of each projection, stacked along `out` and transposed: (in, Σ out).
fn stacked(parts: &[&Linear]) -> Array2<f32> {
    let ws: Vec<Array2<f32>> = parts.iter().map(|l| l.weight()).collect();
    let views: Vec<_> = ws.iter().map(|w| w.view()).collect();
    let w = concatenate(Axis(0), &views).expect("the projections share their input width");
    w.reversed_axes().as_standard_layout().into_owned()
}

impl GpuLlama {
    /// Uploads the CPU model's weights (f32). Fails, without uploading, when a tensor exceeds the
    /// adapter's buffer limits or the heads are outside what the attention kernels take.
    pub async fn upload(gpu: Rc<Gpu>, model: &Llama) -> Result<GpuLlama, GpuError> {
        Self::upload_with(gpu, model, Precision::F32).await
    }

    /// `upload` with the weights of the matrix products stored in `precision` (f16 where the
    /// device has `shader-f16`, else f32). Norms, embeddings and the output layer stay f32.
    pub async fn upload_with(gpu: Rc<Gpu>, model: &Llama, precision: Precision) -> Result<GpuLlama, GpuError> {
        Self::upload_in_chunks(gpu, model, usize::MAX, precision).await
    }

    /// `upload_with` with the embedding table and the output layer in chunks of at most
    /// `max_rows` rows (fewer if the adapter's limit asks): tests use it to run the chunked path
    /// on a small model.
    pub async fn upload_in_chunks(
        gpu: Rc<Gpu>,
        model: &Llama,
        max_rows: usize,
        precision: Precision,
    ) -> Result<GpuLlama, GpuError> {
        let cfg = model.config.clone();
        let (n_head, n_kv, d) = (cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim);
        if d > 64 || !d.is_multiple_of(2) {
            return Err(GpuError::Unsupported(format!("heads of size {d} (the attention kernels take up to 64)")));
        }
        if n_head > 32 || n_kv == 0 || !n_head.is_multiple_of(n_kv) {
            return Err(GpuError::Unsupported(format!("{n_head} heads in {n_kv} groups (the kernels take 32 heads)")));
        }
        let (c, f) = (cfg.hidden_size, cfg.intermediate_size);
        let qkv_width = cfg.q_width() + 2 * cfg.kv_width();
        gpu.check_size("the q, k and v projections", (c * qkv_width * 4) as u64)?;
        gpu.check_size("the gate and up projections", (c * 2 * f * 4) as u64)?;
        let rows = table::rows_per_chunk(&gpu, cfg.vocab_size, c, max_rows)?;
        let w = &model.weights;
        let g = &gpu;
        let (embed_tokens, lm_head, layers, norm, zeros) = gpu
            .checked(|| {
                let lin = |name: &str, wt: Array2<f32>| GpuLinear {
                    n_in: wt.nrows(),
                    n_out: wt.ncols(),
                    weight: g.upload_weight(name, wt.as_slice().expect("standard layout"), precision),
                };
                let layers = w
                    .layers
                    .iter()
                    .map(|l| {
                        let (a, m) = (&l.self_attn, &l.mlp);
                        GpuLayer {
                            input_layernorm: g.upload("input_layernorm", &l.input_layernorm.to_vec()),
                            qkv_proj: lin("qkv_proj", stacked(&[&a.q_proj, &a.k_proj, &a.v_proj])),
                            o_proj: lin("o_proj", stacked(&[&a.o_proj])),
                            post_attention_layernorm: g
                                .upload("post_attention_layernorm", &l.post_attention_layernorm.to_vec()),
                            gate_up_proj: lin("gate_up_proj", stacked(&[&m.gate_proj, &m.up_proj])),
                            down_proj: lin("down_proj", stacked(&[&m.down_proj])),
                        }
                    })
                    .collect::<Vec<_>>();
                let embed_tokens = table::upload(g, "embed_tokens", &w.embed_tokens, rows);
                let lm_head = w.lm_head.as_ref().map(|t| table::upload(g, "lm_head", t, rows));
                let widest = qkv_width.max(2 * f).max(c);
                (embed_tokens, lm_head, layers, g.upload("norm", &w.norm.to_vec()), g.buffer("zeros", widest))
            })
            .await?;
        let scratch = RefCell::new(None);
        Ok(GpuLlama { gpu, config: cfg, embed_tokens, lm_head, layers, norm, zeros, scratch, fault: Cell::new(false) })
    }

    /// The precision that stores `model` on `gpu` without changing a single weight: f16 when
    /// the device has `shader-f16` and every projection's weight is exactly an f16 value (a
    /// checkpoint shipped in F16), else f32 (as `GpuGpt2::lossless_precision`).
    pub fn lossless_precision(gpu: &Gpu, model: &Llama) -> Precision {
        let projections = model.weights.layers.iter().flat_map(|l| {
            let (a, m) = (&l.self_attn, &l.mlp);
            [&a.q_proj, &a.k_proj, &a.v_proj, &a.o_proj, &m.gate_proj, &m.up_proj, &m.down_proj]
        });
        crate::gpu::lossless_precision(gpu, projections.map(Linear::stored))
    }

    /// The precision the weights of the matrix products ended up in.
    pub fn precision(&self) -> Precision {
        self.layers.first().map_or(Precision::F32, |l| l.qkv_proj.weight.precision)
    }

    /// Makes the next forward pass fail with a real device error (a shader that does not
    /// compile), so that tests and the page can show the fallback to the CPU.
    pub fn fail_next(&self) {
        self.fault.set(true);
    }

    /// A KV cache for `capacity` positions (at most the model's window).
    pub fn new_cache(&self, capacity: usize) -> GpuKvCache {
        let cfg = &self.config;
        let capacity = capacity.clamp(1, cfg.max_position_embeddings);
        let kvw = cfg.kv_width();
        let make = |name: &str| (0..cfg.num_hidden_layers).map(|_| self.gpu.buffer(name, capacity * kvw)).collect();
        GpuKvCache { k: make("k_cache"), v: make("v_cache"), capacity, len: 0 }
    }

    fn scratch(&self, rows: usize) -> Scratch {
        let mut slot = self.scratch.borrow_mut();
        if let Some(s) = slot.as_ref().filter(|s| s.rows >= rows) {
            return s.clone();
        }
        let (cfg, g) = (&self.config, &self.gpu);
        let (c, f) = (cfg.hidden_size, cfg.intermediate_size);
        let s = Scratch {
            rows,
            x: g.buffer("x", rows * c),
            h: g.buffer("h", rows * c),
            qkv: g.buffer("qkv", rows * (cfg.q_width() + 2 * cfg.kv_width())),
            y: g.buffer("y", rows * cfg.q_width()),
            gu: g.buffer("gu", rows * 2 * f),
            a: g.buffer("a", rows * f),
            rope: g.buffer("rope", rows * cfg.head_dim),
            logits: g.buffer("logits", cfg.vocab_size),
            ids: g.buffer("ids", rows),
        };
        *slot = Some(s.clone());
        s
    }
}
