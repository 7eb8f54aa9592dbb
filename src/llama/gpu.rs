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

use std::cell::RefCell;
use std::rc::Rc;

use ndarray::{concatenate, Array2, Array3, Axis};

use super::ops::Rope;
use super::weights::Linear;
use super::{Config, ForwardOptions, ForwardOutput, Llama};
use crate::gpu::kernels::{self, groups_for, Batch, Kernel};
use crate::gpu::{Gpu, GpuError, Precision, Weight};

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

/// Rows v0 .. v0 + rows of a (vocab, C) table.
struct TableChunk {
    buf: wgpu::Buffer,
    v0: usize,
    rows: usize,
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
}

/// Keys (already turned by RoPE) and values on the GPU: per layer, (capacity, KV·D) each, the
/// KV heads side by side, as the CPU's `KvCache`.
pub struct GpuKvCache {
    k: Vec<wgpu::Buffer>,
    v: Vec<wgpu::Buffer>,
    capacity: usize,
    len: usize,
    /// 2 (K and V) · layers · KV·D · 4 bytes (f32)
    bytes_per_position: usize,
}

impl GpuKvCache {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    /// The bytes the cached positions take (as `KvCache::bytes`; the buffers hold `capacity`).
    pub fn bytes(&self) -> usize {
        self.len * self.bytes_per_position
    }
    /// Forgets every position (the buffers are kept and overwritten).
    pub fn clear(&mut self) {
        self.len = 0;
    }
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
        let rows = rows_per_chunk(&gpu, cfg.vocab_size, c, max_rows)?;
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
                let embed_tokens = chunks(g, "embed_tokens", &w.embed_tokens, rows);
                let lm_head = w.lm_head.as_ref().map(|t| chunks(g, "lm_head", t, rows));
                let widest = qkv_width.max(2 * f).max(c);
                (embed_tokens, lm_head, layers, g.upload("norm", &w.norm.to_vec()), g.buffer("zeros", widest))
            })
            .await?;
        Ok(GpuLlama { gpu, config: cfg, embed_tokens, lm_head, layers, norm, zeros, scratch: RefCell::new(None) })
    }

    /// The precision the weights of the matrix products ended up in.
    pub fn precision(&self) -> Precision {
        self.layers.first().map_or(Precision::F32, |l| l.qkv_proj.weight.precision)
    }

    /// A KV cache for `capacity` positions (at most the model's window).
    pub fn new_cache(&self, capacity: usize) -> GpuKvCache {
        let cfg = &self.config;
        let capacity = capacity.clamp(1, cfg.max_position_embeddings);
        let kvw = cfg.kv_width();
        let make = |name: &str| (0..cfg.num_hidden_layers).map(|_| self.gpu.buffer(name, capacity * kvw)).collect();
        let bytes_per_position = 2 * cfg.num_hidden_layers * kvw * 4;
        GpuKvCache { k: make("k_cache"), v: make("v_cache"), capacity, len: 0, bytes_per_position }
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

/// Rows per chunk of a (vocab, C) table: as few chunks of at most `max_rows` as the adapter's
/// binding limit allows, of about equal size.
fn rows_per_chunk(gpu: &Gpu, vocab: usize, c: usize, max_rows: usize) -> Result<usize, GpuError> {
    let row_bytes = (c * 4) as u64;
    let limit = gpu.limits.max_storage_buffer_binding_size.min(gpu.limits.max_buffer_size);
    let rows = ((limit / row_bytes) as usize).min(vocab).min(max_rows);
    if rows == 0 {
        return Err(GpuError::TooBig { what: "one row of the embedding table".into(), bytes: row_bytes, limit });
    }
    Ok(vocab.div_ceil(vocab.div_ceil(rows)))
}

fn chunks(gpu: &Gpu, name: &str, table: &Array2<f32>, rows: usize) -> Vec<TableChunk> {
    let (v, c) = table.dim();
    let data = table.as_slice().expect("standard layout");
    (0..v.div_ceil(rows))
        .map(|i| {
            let v0 = i * rows;
            let n = rows.min(v - v0);
            TableChunk { buf: gpu.upload(name, &data[v0 * c..(v0 + n) * c]), v0, rows: n }
        })
        .collect()
}

impl GpuLlama {
    /// Runs `tokens` after what `cache` holds. The caller has checked the tokens
    /// (`Llama::check_input`); here only the cache's capacity is checked.
    pub async fn forward(
        &self,
        tokens: &[u32],
        cache: &mut GpuKvCache,
        opts: &ForwardOptions,
    ) -> Result<ForwardOutput, GpuError> {
        let cfg = &self.config;
        let (t, c, past) = (tokens.len(), cfg.hidden_size, cache.len);
        if t == 0 || past + t > cache.capacity {
            return Err(GpuError::Unsupported(format!("{} positions in a KV cache of {}", past + t, cache.capacity)));
        }
        let (n_head, n_kv, d) = (cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim);
        let (qw, qkv_width, f, s_len) =
            (cfg.q_width(), cfg.q_width() + 2 * cfg.kv_width(), cfg.intermediate_size, past + t);
        let logit_rows = if opts.all_logits { t } else { 1 };
        let wants = |l: usize| opts.capture.wants(l);
        let need_weights = (0..cfg.num_hidden_layers).any(wants);
        if need_weights {
            self.gpu.check_size("the attention weights of one layer", (n_head * t * s_len * 4) as u64)?;
        }
        self.gpu.check_size("the logits", (logit_rows * cfg.vocab_size * 4) as u64)?;
        let sc = self.scratch(t);
        let gpu = &self.gpu;
        let logits_buf =
            if logit_rows == 1 { sc.logits.clone() } else { gpu.buffer("logits", logit_rows * cfg.vocab_size) };
        // The turns of positions past .. past + T, shared by every layer: (T, D) = [cos | sin].
        let rope = Rope::new(d, cfg.rope_theta, past, t).table();
        // Everything is recorded into one batch: one submission, and one readback that holds the
        // logits and whatever else was asked for, each at its offset (`Batch::read`).
        let (readback, at) = gpu
            .checked(|| {
                let mut b = Batch::new(gpu);
                let mut at = Offsets::default();
                gpu.write(&sc.ids, 0, bytemuck::cast_slice(tokens));
                gpu.write(&sc.rope, 0, bytemuck::cast_slice(rope.as_slice().expect("standard layout")));
                // x₀ = embed_tokens[token]: (T, C), one dispatch per chunk, no positions added
                for ch in &self.embed_tokens {
                    b.add(
                        Kernel::Embed,
                        &[t as u32, c as u32, past as u32, ch.v0 as u32, ch.rows as u32, 1],
                        &[&sc.ids, &ch.buf, &self.zeros, &sc.x],
                        [groups_for(t * c, 256), 1, 1],
                    );
                }
                if opts.hidden_states {
                    at.hidden.push(b.read(&sc.x, 0, t * c));
                }
                let weights = need_weights.then(|| gpu.buffer("attention weights", n_head * t * s_len));
                let scale = (1.0 / (d as f32).sqrt()).to_bits();
                let (heads, shape) = ([n_head as u32, d as u32, qw as u32], [t as u32, past as u32]);
                for (l, layer) in self.layers.iter().enumerate() {
                    // h = rms_norm(x), then (T, C) x (C, H·D + 2·KV·D) -> (T, H·D + 2·KV·D) = [Q | K | V]
                    self.rms_norm(&mut b, &sc.x, 0, &layer.input_layernorm, &sc.h, t);
                    self.linear(&mut b, &sc.h, &layer.qkv_proj, &sc.qkv, t, false);
                    // RoPE turns the H query heads and the KV key heads in place (not the values).
                    let pairs = t * (n_head + n_kv) * d / 2;
                    b.add(
                        Kernel::Rope,
                        &[t as u32, qkv_width as u32, (n_head + n_kv) as u32, d as u32],
                        &[&sc.rope, &sc.qkv],
                        [groups_for(pairs, 256), 1, 1],
                    );
                    let ablate =
                        opts.ablate.iter().filter(|(al, ah)| *al == l && *ah < 32).fold(0u32, |m, (_, h)| m | 1 << h);
                    // Grouped-query attention over all S positions: (T, H·D), query head h reading
                    // KV head h / (H / KV); it also appends the new keys and values to the cache.
                    b.add(
                        Kernel::Attention,
                        &[shape[0], shape[1], heads[0], heads[1], heads[2], ablate, scale, n_kv as u32],
                        &[&sc.qkv, &cache.k[l], &cache.v[l], &sc.y],
                        [t as u32, n_head as u32, 1],
                    );
                    if let (Some(w), true) = (&weights, wants(l)) {
                        // Only when asked: the (H, T, S) weights, explicitly.
                        b.add(
                            Kernel::Scores,
                            &[shape[0], shape[1], heads[0], heads[1], heads[2], s_len as u32, scale, n_kv as u32],
                            &[&sc.qkv, &cache.k[l], w],
                            [t as u32, n_head as u32, 1],
                        );
                        b.add(
                            Kernel::Softmax,
                            &[(n_head * t) as u32, s_len as u32, t as u32, past as u32, 1, 0, 0, 0],
                            &[w],
                            [(n_head * t) as u32, 1, 1],
                        );
                        at.captured.push((l, b.read(w, 0, n_head * t * s_len)));
                    }
                    // x ← x + y W_oᵀ: (T, H·D) x (H·D, C) -> (T, C), added into x
                    self.linear(&mut b, &sc.y, &layer.o_proj, &sc.x, t, true);
                    // MLP: h = rms_norm(x), (T, C) x (C, 2F) -> (T, 2F) = [gate | up]
                    self.rms_norm(&mut b, &sc.x, 0, &layer.post_attention_layernorm, &sc.h, t);
                    self.linear(&mut b, &sc.h, &layer.gate_up_proj, &sc.gu, t, false);
                    // a = silu(gate) ⊙ up: (T, F)
                    b.add(
                        Kernel::Swiglu,
                        &[t as u32, f as u32, 0, 0],
                        &[&sc.gu, &sc.a],
                        [groups_for(t * f, 256), 1, 1],
                    );
                    // x ← x + a W_downᵀ: (T, F) x (F, C) -> (T, C), added into x
                    self.linear(&mut b, &sc.a, &layer.down_proj, &sc.x, t, true);
                    if opts.hidden_states {
                        at.hidden.push(b.read(&sc.x, 0, t * c));
                    }
                }
                // Only the rows whose logits are wanted go through the final norm and the output layer.
                self.rms_norm(&mut b, &sc.x, t - logit_rows, &self.norm, &sc.h, logit_rows);
                // (rows, C) x (C, vocab) -> (rows, vocab), against lm_head (vocab, C) or the tied table
                for ch in self.lm_head.as_ref().unwrap_or(&self.embed_tokens) {
                    b.add(
                        Kernel::Logits,
                        &[logit_rows as u32, cfg.vocab_size as u32, c as u32, ch.v0 as u32, ch.rows as u32],
                        &[&sc.h, &ch.buf, &logits_buf],
                        [groups_for(ch.rows, 8), logit_rows as u32, 1],
                    );
                }
                at.logits = b.read(&logits_buf, 0, logit_rows * cfg.vocab_size);
                (b.submit(), at)
            })
            .await?;
        cache.len = past + t;
        let all = match readback {
            Some(r) => r.values(gpu).await?,
            None => Vec::new(),
        };
        let slice = |from: usize, len: usize| {
            all.get(from..from + len).map(<[f32]>::to_vec).ok_or_else(|| GpuError::Failed("a short readback".into()))
        };
        let v = cfg.vocab_size;
        let logits = Array2::from_shape_vec((logit_rows, v), slice(at.logits, logit_rows * v)?).map_err(shape_err)?;
        let mut attentions: Vec<Option<Array3<f32>>> = (0..cfg.num_hidden_layers).map(|_| None).collect();
        for (l, from) in at.captured {
            let w = slice(from, n_head * t * s_len)?;
            attentions[l] = Some(Array3::from_shape_vec((n_head, t, s_len), w).map_err(shape_err)?);
        }
        let hidden_states = at
            .hidden
            .iter()
            .map(|&from| Array2::from_shape_vec((t, c), slice(from, t * c)?).map_err(shape_err))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ForwardOutput { logits, attentions, hidden_states })
    }

    /// Greedy decoding with the KV cache on the GPU: the prompt once, then one token per step,
    /// each step reading back one row of logits (as `Llama::greedy`).
    pub async fn greedy(&self, prompt: &[u32], steps: usize) -> Result<Vec<u32>, GpuError> {
        let mut cache = self.new_cache(prompt.len() + steps);
        let opts = ForwardOptions::default();
        let mut out = Vec::with_capacity(steps);
        let mut logits = self.forward(prompt, &mut cache, &opts).await?.logits;
        for step in 0..steps {
            let next = crate::numerics::softmax::argmax(logits.row(0));
            out.push(next);
            if step + 1 < steps {
                logits = self.forward(&[next], &mut cache, &opts).await?.logits;
            }
        }
        Ok(out)
    }

    /// y ← rms_norm(x[row0 .. row0 + rows]) with gain `weight`: (rows, C).
    fn rms_norm(
        &self,
        b: &mut Batch,
        x: &wgpu::Buffer,
        row0: usize,
        weight: &wgpu::Buffer,
        y: &wgpu::Buffer,
        rows: usize,
    ) {
        let eps = self.config.rms_norm_eps.to_bits();
        b.add(
            Kernel::RmsNorm,
            &[rows as u32, self.config.hidden_size as u32, eps, row0 as u32],
            &[x, weight, y],
            [rows as u32, 1, 1],
        );
    }

    /// y ← x W (or y += x W with `accumulate`: the residual connection): (rows, in) -> (rows, out).
    fn linear(
        &self,
        b: &mut Batch,
        x: &wgpu::Buffer,
        lin: &GpuLinear,
        y: &wgpu::Buffer,
        rows: usize,
        accumulate: bool,
    ) {
        kernels::linear(b, x, &lin.weight, &self.zeros, y, rows, lin.n_in, lin.n_out, accumulate);
    }
}

/// Where each result starts in a forward pass's readback (in f32).
#[derive(Default)]
struct Offsets {
    logits: usize,
    /// (layer, offset) of each captured layer's (H, T, S) weights.
    captured: Vec<(usize, usize)>,
    /// The residual stream after the embeddings and after each layer, (T, C) each.
    hidden: Vec<usize>,
}

fn shape_err(e: ndarray::ShapeError) -> GpuError {
    GpuError::Failed(format!("read back the wrong size: {e}"))
}
