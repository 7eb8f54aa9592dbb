//! GPT-2's forward pass on the GPU: the same computation as `gpt2::model::Gpt2::forward`, with
//! the weights uploaded once, the KV cache and the activations kept in GPU buffers that are
//! reused from token to token, and only what the caller asks for read back (the last row of
//! logits when decoding; attention weights and hidden states only when requested).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::gpt2::weights::{LayerNorm, Linear};
use crate::gpt2::{Config, ForwardOptions, ForwardOutput, Gpt2};
use crate::gpu::head_size;
use crate::gpu::kernels::{self, Batch, Epilogue, Kernel};
use crate::gpu::params;
use crate::gpu::table::{self, TableChunk};
use crate::gpu::{Gpu, GpuError, Precision, Weight};
pub use crate::model::engine::GpuKvCache;
use crate::model::patch::GpuPatches;
use crate::model::readout::{Offsets, Sizes};

struct GpuLinear {
    weight: Weight,
    bias: wgpu::Buffer,
    n_in: usize,
    n_out: usize,
}

struct GpuLayerNorm {
    weight: wgpu::Buffer,
    bias: wgpu::Buffer,
}

/// One transformer block's weights, under the checkpoint's names.
struct GpuBlock {
    ln_1: GpuLayerNorm,
    c_attn: GpuLinear,
    attn_c_proj: GpuLinear,
    ln_2: GpuLayerNorm,
    c_fc: GpuLinear,
    mlp_c_proj: GpuLinear,
}

/// Activations for up to `rows` new tokens, reused across calls (clones share the buffers).
#[derive(Clone)]
struct Scratch {
    rows: usize,
    x: wgpu::Buffer,
    h: wgpu::Buffer,
    qkv: wgpu::Buffer,
    y: wgpu::Buffer,
    a: wgpu::Buffer,
    logits: wgpu::Buffer,
    ids: wgpu::Buffer,
}

pub struct GpuGpt2 {
    pub gpu: Rc<Gpu>,
    pub config: Config,
    /// The token embedding table in chunks of rows, each within the adapter's binding limit.
    wte: Vec<TableChunk>,
    wpe: wgpu::Buffer,
    h: Vec<GpuBlock>,
    ln_f: GpuLayerNorm,
    scratch: RefCell<Option<Scratch>>,
    /// Set by `fail_next`: the next forward pass records an invalid shader.
    fault: Cell<bool>,
}

impl GpuGpt2 {
    /// Uploads the CPU model's weights (f32). Fails, without uploading, when a tensor exceeds the
    /// adapter's buffer limits or the heads are wider than the attention kernels take.
    pub async fn upload(gpu: Rc<Gpu>, model: &Gpt2) -> Result<GpuGpt2, GpuError> {
        Self::upload_in_chunks(gpu, model, usize::MAX, Precision::F32).await
    }

    /// `upload` with the weights of the matrix products (`c_attn`, `c_proj`, `c_fc`) stored in
    /// `precision`: f16 halves them where the device has `shader-f16` (else they stay f32; see
    /// `precision()`). Its CPU twin is the model with those weights rounded to f16.
    pub async fn upload_with(gpu: Rc<Gpu>, model: &Gpt2, precision: Precision) -> Result<GpuGpt2, GpuError> {
        Self::upload_in_chunks(gpu, model, usize::MAX, precision).await
    }

    /// The precision that stores `model` on `gpu` without changing a single weight: f16 when
    /// the device has `shader-f16` and every matrix-product weight is exactly an f16 value (a
    /// checkpoint shipped in F16, like the bundled models), else f32.
    pub fn lossless_precision(gpu: &Gpu, model: &Gpt2) -> Precision {
        let linears = model.weights.h.iter().flat_map(|b| [&b.attn.c_attn, &b.attn.c_proj, &b.mlp.c_fc, &b.mlp.c_proj]);
        crate::gpu::lossless_precision(gpu, linears.map(Linear::stored_weights))
    }

    /// The precision the weights of the matrix products ended up in.
    pub fn precision(&self) -> Precision {
        self.h.first().map_or(Precision::F32, |b| b.c_attn.weight.precision)
    }

    /// `upload` with the embedding table in chunks of at most `max_rows` rows (fewer if the
    /// adapter's limit asks): tests use it to run the chunked path on a small model.
    pub async fn upload_in_chunks(
        gpu: Rc<Gpu>,
        model: &Gpt2,
        max_rows: usize,
        precision: Precision,
    ) -> Result<GpuGpt2, GpuError> {
        let cfg = model.config.clone();
        head_size(cfg.n_embd, cfg.n_head)?;
        let w = &model.weights;
        // wte (154 MB in GPT-2 small) is split into as few chunks of rows as the limit allows.
        let rows_per_chunk = table::rows_per_chunk(&gpu, cfg.vocab_size, cfg.n_embd, max_rows)?;
        gpu.check_size("the MLP weights (c_fc)", (cfg.n_embd * cfg.n_inner * 4) as u64)?;
        let g = &gpu;
        let (wte, wpe, h, ln_f) = gpu
            .checked(|| {
                let lin = |name: &str, l: &Linear| GpuLinear {
                    weight: g.upload_weight(
                        name,
                        l.weight().as_slice().expect("weights are in standard layout"),
                        precision,
                    ),
                    bias: g.upload(name, &l.bias.to_vec()),
                    n_in: l.dim().0,
                    n_out: l.dim().1,
                };
                let ln = |name: &str, l: &LayerNorm| GpuLayerNorm {
                    weight: g.upload(name, &l.weight.to_vec()),
                    bias: g.upload(name, &l.bias.to_vec()),
                };
                let blocks =
                    w.h.iter()
                        .map(|b| GpuBlock {
                            ln_1: ln("ln_1", &b.ln_1),
                            c_attn: lin("attn.c_attn", &b.attn.c_attn),
                            attn_c_proj: lin("attn.c_proj", &b.attn.c_proj),
                            ln_2: ln("ln_2", &b.ln_2),
                            c_fc: lin("mlp.c_fc", &b.mlp.c_fc),
                            mlp_c_proj: lin("mlp.c_proj", &b.mlp.c_proj),
                        })
                        .collect::<Vec<_>>();
                let wte = table::upload(g, "wte", &w.wte, rows_per_chunk);
                let wpe = g.upload("wpe", w.wpe.as_slice().expect("standard layout"));
                (wte, wpe, blocks, ln("ln_f", &w.ln_f))
            })
            .await?;
        Ok(GpuGpt2 { gpu, config: cfg, wte, wpe, h, ln_f, scratch: RefCell::new(None), fault: Cell::new(false) })
    }

    /// Makes the next forward pass fail with a real device error (a shader that does not
    /// compile), so that tests and the page can show the fallback to the CPU.
    pub fn fail_next(&self) {
        self.fault.set(true);
    }

    /// A KV cache for `capacity` positions (at most the model's window).
    pub fn new_cache(&self, capacity: usize) -> GpuKvCache {
        let cfg = &self.config;
        let capacity = capacity.clamp(1, cfg.n_positions);
        let make = |name: &str| (0..cfg.n_layer).map(|_| self.gpu.buffer(name, capacity * cfg.n_embd)).collect();
        GpuKvCache { k: make("k_cache"), v: make("v_cache"), capacity, len: 0 }
    }

    fn scratch(&self, rows: usize) -> Scratch {
        let mut slot = self.scratch.borrow_mut();
        if let Some(s) = slot.as_ref().filter(|s| s.rows >= rows) {
            return s.clone();
        }
        let (c, g) = (self.config.n_embd, &self.gpu);
        let s = Scratch {
            rows,
            x: g.buffer("x", rows * c),
            h: g.buffer("h", rows * c),
            qkv: g.buffer("qkv", rows * 3 * c),
            y: g.buffer("y", rows * c),
            a: g.buffer("a", rows * self.config.n_inner),
            logits: g.buffer("logits", self.config.vocab_size), // one row; more only with all_logits
            ids: g.buffer("ids", rows),
        };
        *slot = Some(s.clone());
        s
    }

    /// Runs `tokens` after what `cache` holds. The caller has checked the tokens
    /// (`Gpt2::check_input`); here only the cache's capacity is checked.
    pub async fn forward(
        &self,
        tokens: &[u32],
        cache: &mut GpuKvCache,
        opts: &ForwardOptions,
    ) -> Result<ForwardOutput, GpuError> {
        let cfg = &self.config;
        let (t, c, past, n_head) = (tokens.len(), cfg.n_embd, cache.len, cfg.n_head);
        if t == 0 || past + t > cache.capacity {
            return Err(GpuError::Unsupported(format!("{} positions in a KV cache of {}", past + t, cache.capacity)));
        }
        let (s_len, hd) = (past + t, cfg.head_dim());
        let logit_rows = if opts.all_logits { t } else { 1 };
        let thumbs = opts.thumbnails.map(|n| (t.min(n), s_len.min(n)));
        let wants = |l: usize| opts.capture.wants(l);
        let need_weights = (0..cfg.n_layer).any(wants) || thumbs.is_some();
        if need_weights {
            self.gpu.check_size("the attention weights of one layer", (n_head * t * s_len * 4) as u64)?;
        }
        self.gpu.check_size("the logits", (logit_rows * cfg.vocab_size * 4) as u64)?;
        let sc = self.scratch(t);
        let gpu = &self.gpu;
        let patches = GpuPatches::new(gpu, &opts.patches);
        let logits_buf =
            if logit_rows == 1 { sc.logits.clone() } else { gpu.buffer("logits", logit_rows * cfg.vocab_size) };
        // Everything is recorded into one batch: one submission, and one readback that holds the
        // logits and whatever else was asked for, each at its offset (`Batch::read`).
        let (readback, at) = gpu
            .checked(|| {
                if self.fault.take() {
                    gpu.record_fault();
                }
                let mut b = Batch::new(gpu);
                let mut at = Offsets::default();
                gpu.write(&sc.ids, 0, bytemuck::cast_slice(tokens));
                // x₀ = wte[token] + wpe[position]: (T, C), one dispatch per chunk of the table
                table::embed(&mut b, &sc.ids, &self.wte, (&self.wpe, true), &sc.x, (t, c, past));
                patches.residual(&mut b, 0, &sc.x, c);
                if opts.hidden_states {
                    at.hidden.push(b.read(&sc.x, 0, t * c));
                }
                let weights = need_weights.then(|| gpu.buffer("attention weights", n_head * t * s_len));
                let thumb_buf = thumbs.map(|(r, k)| gpu.buffer("thumbnails", cfg.n_layer * n_head * r * k));
                let scale = 1.0 / (hd as f32).sqrt();
                for (l, blk) in self.h.iter().enumerate() {
                    // ln_1, then (T, C) x (C, 3C) -> (T, 3C) = [Q | K | V]
                    self.norm_linear(&mut b, &sc, &blk.ln_1, &blk.c_attn, &sc.qkv, t, Epilogue::Store);
                    let ablate =
                        opts.ablate.iter().filter(|(al, ah)| *al == l && *ah < 32).fold(0u32, |m, (_, h)| m | 1 << h);
                    // Fused causal attention over all S positions: (T, C); it also appends the
                    // new keys and values to the cache.
                    b.add(
                        Kernel::Attention,
                        &params::Attention {
                            t: t as u32,
                            past: past as u32,
                            n_head: n_head as u32,
                            hd: hd as u32,
                            c: c as u32,
                            ablate,
                            scale,
                            n_kv: 0,
                        },
                        &[&sc.qkv, &cache.k[l], &cache.v[l], &sc.y],
                        [t as u32, n_head as u32, 1],
                    );
                    if let Some(w) = &weights {
                        if wants(l) || thumb_buf.is_some() {
                            // Only when the page draws them: the (H, T, S) weights, explicitly.
                            let p = params::Scores {
                                t: t as u32,
                                past: past as u32,
                                n_head: n_head as u32,
                                hd: hd as u32,
                                c: c as u32,
                                s: s_len as u32,
                                scale,
                                n_kv: 0,
                            };
                            kernels::attention_weights(&mut b, p, &sc.qkv, &cache.k[l], w);
                        }
                        if wants(l) {
                            at.captured.push((l, b.read(w, 0, n_head * t * s_len)));
                        }
                        if let (Some(tb), Some(rk)) = (&thumb_buf, thumbs) {
                            kernels::pool(&mut b, w, tb, (n_head, t, s_len), rk, l);
                        }
                    }
                    patches.heads(&mut b, l, &sc.y, (t, c, hd));
                    if opts.head_outputs {
                        at.head_outputs.push(b.read(&sc.y, 0, t * c));
                    }
                    // x ← x + attn: (T, C) x (C, C) -> (T, C), added into x
                    self.linear(&mut b, &sc.y, &blk.attn_c_proj, &sc.x, t, Epilogue::Accumulate);
                    // MLP: x ← x + c_proj(GELU(c_fc(ln_2(x)))), the GELU in c_fc's epilogue
                    self.norm_linear(&mut b, &sc, &blk.ln_2, &blk.c_fc, &sc.a, t, Epilogue::Gelu);
                    self.linear(&mut b, &sc.a, &blk.mlp_c_proj, &sc.x, t, Epilogue::Accumulate);
                    patches.residual(&mut b, l + 1, &sc.x, c);
                    if opts.hidden_states {
                        at.hidden.push(b.read(&sc.x, 0, t * c));
                    }
                }
                // Only the rows whose logits are wanted go through ln_f and the LM head.
                self.layer_norm(&mut b, &sc.x, t - logit_rows, &self.ln_f, &sc.h, logit_rows);
                // (rows, C) x (C, vocab) -> (rows, vocab), against the tied table
                table::logits(&mut b, &sc.h, &self.wte, &logits_buf, (logit_rows, cfg.vocab_size, c));
                at.logits = b.read(&logits_buf, 0, logit_rows * cfg.vocab_size);
                if let (Some(tb), Some((r, k))) = (&thumb_buf, thumbs) {
                    at.thumbnails = Some(b.read(tb, 0, cfg.n_layer * n_head * r * k));
                }
                (b.submit(), at)
            })
            .await?;
        cache.len = past + t;
        let all = match readback {
            Some(r) => r.values(gpu).await?,
            None => Vec::new(),
        };
        let (layers, vocab) = (cfg.n_layer, cfg.vocab_size);
        let z = Sizes { layers, heads: n_head, t, s: s_len, width: c, heads_width: c, vocab, logit_rows, thumbs };
        at.unpack(&all, z)
    }

    /// y ← layer_norm(x[row0 .. row0 + rows]): (rows, C).
    fn layer_norm(
        &self,
        b: &mut Batch,
        x: &wgpu::Buffer,
        row0: usize,
        ln: &GpuLayerNorm,
        y: &wgpu::Buffer,
        rows: usize,
    ) {
        let eps = self.config.layer_norm_epsilon;
        b.add(
            Kernel::LayerNorm,
            &params::Norm { rows: rows as u32, n: self.config.n_embd as u32, eps, row0: row0 as u32 },
            &[x, &ln.weight, &ln.bias, y],
            [rows as u32, 1, 1],
        );
    }

    /// y ← f(layer_norm(x) W + b) for the T rows of `sc.x`: in one dispatch when decoding (a few
    /// rows, `kernels::norm_matvec`), else the layer norm into `sc.h` and the tiled product.
    #[allow(clippy::too_many_arguments)]
    fn norm_linear(
        &self,
        b: &mut Batch,
        sc: &Scratch,
        ln: &GpuLayerNorm,
        lin: &GpuLinear,
        y: &wgpu::Buffer,
        rows: usize,
        epilogue: Epilogue,
    ) {
        if rows <= kernels::MATVEC_MAX_ROWS {
            let eps = self.config.layer_norm_epsilon.to_bits();
            let ln = (&ln.weight, &ln.bias, eps);
            let shape = (rows, lin.n_in, lin.n_out);
            kernels::norm_matvec(b, &sc.x, ln, &lin.weight, &lin.bias, y, shape, epilogue);
        } else {
            self.layer_norm(b, &sc.x, 0, ln, &sc.h, rows);
            self.linear(b, &sc.h, lin, y, rows, epilogue);
        }
    }

    fn linear(
        &self,
        b: &mut Batch,
        x: &wgpu::Buffer,
        lin: &GpuLinear,
        y: &wgpu::Buffer,
        rows: usize,
        epilogue: Epilogue,
    ) {
        kernels::linear_with(b, x, &lin.weight, &lin.bias, y, rows, lin.n_in, lin.n_out, epilogue);
    }
}
