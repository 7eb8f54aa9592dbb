//! Marian's forward pass on the GPU: the same computation as `marian::model`, with the weights
//! uploaded once, each source's cross-attention keys and values and each target's self-attention
//! cache kept in GPU buffers, and only what the caller asks for read back (the logits; the
//! attentions and hidden states when requested). Every call records its dispatches into one batch:
//! one submission and one readback.
//!
//! - The q, k and v projections of a self-attention are one (C, 3C) product whose rows are
//!   [Q | K | V], as GPT-2's `c_attn`; cross-attention's query is its own (C, C) product and its
//!   keys and values are computed once per source (`encode`). The product kernels take W as
//!   (in, out): the checkpoint's (out, in) matrices are uploaded transposed.
//! - Every attention is `Kernel::Attend`, which writes its weights out (the page draws all three
//!   kinds), causal over the cache for the decoder's self-attention.
//! - Post-norm: x ← LayerNorm(x + sublayer(x)), the sublayer's last product added into x, the norm
//!   written beside it and copied back.
//! - The embeddings (scaled by √C when the config says so) and the sinusoidal positions of the new
//!   tokens are added on the host, from the CPU model this one was uploaded from: a few rows a
//!   step, written with the batch. Beams at one position are rows of one pass.
//! - Beam search is `beam::Search` driven by batched steps; a beam's cache is copied on the device
//!   when the search reorders them.
//!
//! F32 weights only. Tested against the `transformers` fixtures in `tests/gpu/marian_gpu.rs`.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use ndarray::Array2;

use super::beam::{BeamSettings, Search, Step};
use super::model::{Decoded, Encoded, Hypothesis, Kind, Marian, Options};
use super::weights::Attention;
use crate::gpu::kernels::{self, Batch};
use crate::gpu::table::{self, TableChunk};
use crate::gpu::{params, Gpu, GpuError};
use crate::model::engine::GpuKvCache;
use crate::model::gpu_dense::{GpuDense, GpuNorm};

struct GpuEncoderLayer {
    /// C → 3C: [q_proj | k_proj | v_proj]
    qkv: GpuDense,
    out_proj: GpuDense,
    self_attn_layer_norm: GpuNorm,
    fc1: GpuDense,
    fc2: GpuDense,
    final_layer_norm: GpuNorm,
}

struct GpuDecoderLayer {
    /// C → 3C: the masked self-attention's [q_proj | k_proj | v_proj]
    qkv: GpuDense,
    out_proj: GpuDense,
    self_attn_layer_norm: GpuNorm,
    /// The cross-attention's projections, C → C each.
    cross_q: GpuDense,
    cross_k: GpuDense,
    cross_v: GpuDense,
    cross_out: GpuDense,
    encoder_attn_layer_norm: GpuNorm,
    fc1: GpuDense,
    fc2: GpuDense,
    final_layer_norm: GpuNorm,
}

/// A target being decoded against one source on the GPU: its self-attention keys and values, and
/// each layer's cross-attention keys and values of the source, (S, C) each (shared by the beams).
pub struct GpuDecoderCache {
    pub own: GpuKvCache,
    cross: Rc<Vec<(wgpu::Buffer, wgpu::Buffer)>>,
    source_len: usize,
}

pub struct GpuMarian {
    pub gpu: Rc<Gpu>,
    /// The model this one was uploaded from: its embeddings and positions are added on the host.
    pub model: Arc<Marian>,
    encoder: Vec<GpuEncoderLayer>,
    decoder: Vec<GpuDecoderLayer>,
    /// (vocab, C): the output layer in chunks of rows, each within the adapter's binding limit.
    output: Vec<TableChunk>,
    /// Set by `fail_next`: the next encoder pass records an invalid shader.
    fault: Cell<bool>,
}

/// The bits of the heads of (kind, layer) that `opts` knocks out.
fn ablated(opts: &Options, kind: Kind, layer: usize) -> u32 {
    opts.knock_out.iter().filter(|(k, l, h)| *k == kind && *l == layer && *h < 32).fold(0, |m, (_, _, h)| m | 1 << h)
}

fn shaped<D: ndarray::Dimension>(values: &[f32], shape: impl ndarray::ShapeBuilder<Dim = D>) -> ndarray::Array<f32, D> {
    ndarray::Array::from_shape_vec(shape, values.to_vec()).expect("the readback holds what was recorded")
}

impl GpuMarian {
    /// Uploads the CPU model's weights (f32). Fails, without uploading, when a tensor exceeds the
    /// adapter's limits or the heads are outside what the attention kernel takes (d ≤ 64, 32
    /// heads).
    pub async fn upload(gpu: Rc<Gpu>, model: Arc<Marian>) -> Result<GpuMarian, GpuError> {
        let cfg = &model.config;
        for heads in [cfg.encoder_attention_heads, cfg.decoder_attention_heads] {
            crate::gpu::head_size(cfg.d_model, heads)?;
            if heads > 32 {
                return Err(GpuError::Unsupported(format!("{heads} heads (the attention kernel takes 32)")));
            }
        }
        let (c, f) = (cfg.d_model, cfg.encoder_ffn_dim.max(cfg.decoder_ffn_dim));
        gpu.check_size("the q, k and v projections", (c * 3 * c * 4) as u64)?;
        gpu.check_size("the MLP weights (fc1)", (c * f * 4) as u64)?;
        let rows = table::rows_per_chunk(&gpu, cfg.vocab_size, c, usize::MAX)?;
        let g = &gpu;
        let w = &model.weights;
        let (encoder, decoder, output) = gpu
            .checked(|| {
                let dense = |name: &str, parts: &[&crate::model::dense::Dense]| GpuDense::upload(g, name, parts);
                let norm = |name: &str, ln: &crate::model::dense::LayerNorm| GpuNorm::upload(g, name, ln);
                let qkv = |a: &Attention| dense("qkv", &[&a.q_proj, &a.k_proj, &a.v_proj]);
                let encoder = w
                    .encoder
                    .iter()
                    .map(|l| GpuEncoderLayer {
                        qkv: qkv(&l.self_attn),
                        out_proj: dense("out_proj", &[&l.self_attn.out_proj]),
                        self_attn_layer_norm: norm("self_attn_layer_norm", &l.self_attn_layer_norm),
                        fc1: dense("fc1", &[&l.fc1]),
                        fc2: dense("fc2", &[&l.fc2]),
                        final_layer_norm: norm("final_layer_norm", &l.final_layer_norm),
                    })
                    .collect::<Vec<_>>();
                let decoder = w
                    .decoder
                    .iter()
                    .map(|l| GpuDecoderLayer {
                        qkv: qkv(&l.self_attn),
                        out_proj: dense("out_proj", &[&l.self_attn.out_proj]),
                        self_attn_layer_norm: norm("self_attn_layer_norm", &l.self_attn_layer_norm),
                        cross_q: dense("encoder_attn.q_proj", &[&l.encoder_attn.q_proj]),
                        cross_k: dense("encoder_attn.k_proj", &[&l.encoder_attn.k_proj]),
                        cross_v: dense("encoder_attn.v_proj", &[&l.encoder_attn.v_proj]),
                        cross_out: dense("encoder_attn.out_proj", &[&l.encoder_attn.out_proj]),
                        encoder_attn_layer_norm: norm("encoder_attn_layer_norm", &l.encoder_attn_layer_norm),
                        fc1: dense("fc1", &[&l.fc1]),
                        fc2: dense("fc2", &[&l.fc2]),
                        final_layer_norm: norm("final_layer_norm", &l.final_layer_norm),
                    })
                    .collect::<Vec<_>>();
                (encoder, decoder, table::upload(g, "output", w.output(), rows))
            })
            .await?;
        Ok(GpuMarian { gpu, model, encoder, decoder, output, fault: Cell::new(false) })
    }

    /// Makes the next encoder pass fail with a real device error (a shader that does not
    /// compile), so that tests and the page can show the fallback to the CPU.
    pub fn fail_next(&self) {
        self.fault.set(true);
    }

    /// Runs the encoder over a source and computes each decoder layer's cross-attention keys and
    /// values from its output: what it read back (the output, and the attentions and hidden states
    /// `opts` asks for) and a decoder cache for up to `capacity` target tokens.
    pub async fn encode(
        &self,
        source: &[u32],
        opts: &Options,
        capacity: usize,
    ) -> Result<(Encoded, GpuDecoderCache), GpuError> {
        let cfg = &self.model.config;
        crate::model::RunError::check_input(source, 0, cfg.vocab_size, cfg.max_position_embeddings)
            .map_err(|e| GpuError::Unsupported(e.to_string()))?;
        let (s, c, heads) = (source.len(), cfg.d_model, cfg.encoder_attention_heads);
        let gpu = &self.gpu;
        // In u64: heads × S² can pass 32 bits (wasm's usize) before the adapter's limit refuses it.
        gpu.check_size("the encoder's attention weights", heads as u64 * (s as u64).pow(2) * 4)?;
        let x0 = self.model.embed(&self.model.weights.encoder_embed, source, 0);
        let (readback, at, cross) = gpu
            .checked(|| {
                if self.fault.take() {
                    gpu.record_fault();
                }
                let sc = Scratch::new(gpu, s, c, 3 * c, cfg.encoder_ffn_dim, heads * s * s);
                let (k, v) = (gpu.buffer("k", s * c), gpu.buffer("v", s * c));
                gpu.write(&sc.x, 0, bytemuck::cast_slice(x0.as_slice().expect("standard layout")));
                let mut b = Batch::new(gpu);
                let mut at = Reads::default();
                if opts.hidden_states {
                    at.hidden.push(b.read(&sc.x, 0, s * c));
                }
                for (l, layer) in self.encoder.iter().enumerate() {
                    // Bidirectional self-attention: (S, C) -> (S, 3C) = [Q | K | V] -> (S, C)
                    layer.qkv.record(&mut b, &sc.x, &sc.qkv, s, false);
                    let p = params::KvAppend { t: s as u32, c: c as u32, past: 0, row0: 0 };
                    b.add(kernels::Kernel::KvAppend, &p, &[&sc.qkv, &k, &v], [kernels::groups_for(s * c, 256), 1, 1]);
                    let attend = Attend { t: s, s, heads, q_stride: 3 * c, row0: 0, causal: false };
                    attend.record(&mut b, &sc.qkv, (&k, &v), &sc, ablated(opts, Kind::Encoder, l));
                    if opts.attentions {
                        at.attentions.push(b.read(&sc.w, 0, heads * s * s));
                    }
                    self.post_norm(&mut b, &sc, &layer.out_proj, &sc.y, &layer.self_attn_layer_norm, s);
                    self.mlp(&mut b, &sc, (&layer.fc1, &layer.fc2), s);
                    self.norm_into_x(&mut b, &sc, &layer.final_layer_norm, s);
                    if opts.hidden_states {
                        at.hidden.push(b.read(&sc.x, 0, s * c));
                    }
                }
                at.output = b.read(&sc.x, 0, s * c);
                // Each decoder layer's keys and values of the source: (S, C) x (C, C) -> (S, C).
                let cross: Vec<(wgpu::Buffer, wgpu::Buffer)> = self
                    .decoder
                    .iter()
                    .map(|layer| {
                        let (k, v) = (gpu.buffer("cross k", s * c), gpu.buffer("cross v", s * c));
                        layer.cross_k.record(&mut b, &sc.x, &k, s, false);
                        layer.cross_v.record(&mut b, &sc.x, &v, s, false);
                        (k, v)
                    })
                    .collect();
                (b.submit(), at, cross)
            })
            .await?;
        let all = match readback {
            Some(r) => r.values(gpu).await?,
            None => Vec::new(),
        };
        let part = |at: usize, n: usize| &all[at..at + n];
        let encoded = Encoded {
            output: shaped(part(at.output, s * c), (s, c)),
            hidden_states: at.hidden.iter().map(|&o| shaped(part(o, s * c), (s, c))).collect(),
            attentions: at.attentions.iter().map(|&o| shaped(part(o, heads * s * s), (heads, s, s))).collect(),
        };
        Ok((encoded, self.new_cache(Rc::new(cross), s, capacity)))
    }

    /// An empty self-attention cache of `capacity` positions (at most the model's window) beside
    /// the source's cross-attention keys and values.
    fn new_cache(
        &self,
        cross: Rc<Vec<(wgpu::Buffer, wgpu::Buffer)>>,
        source_len: usize,
        capacity: usize,
    ) -> GpuDecoderCache {
        let cfg = &self.model.config;
        let capacity = capacity.clamp(1, cfg.max_position_embeddings);
        let make =
            |name: &str| (0..cfg.decoder_layers).map(|_| self.gpu.buffer(name, capacity * cfg.d_model)).collect();
        GpuDecoderCache {
            own: GpuKvCache { k: make("k_cache"), v: make("v_cache"), capacity, len: 0 },
            cross,
            source_len,
        }
    }

    /// Runs the decoder: with one cache, over `tokens` after what it holds; with several (beam
    /// search's beams, all of one source and one length), over one token each, as rows of one
    /// pass. Appends the new keys and values to the caches. Attentions and hidden states are read
    /// back only for one cache.
    pub async fn decode(
        &self,
        tokens: &[u32],
        caches: &mut [GpuDecoderCache],
        opts: &Options,
    ) -> Result<Decoded, GpuError> {
        let cfg = &self.model.config;
        let past = caches.first().map_or(0, |c| c.own.len);
        let single = caches.len() == 1;
        let fits = (single || tokens.len() == caches.len())
            && caches.iter().all(|k| k.own.len == past && Rc::ptr_eq(&k.cross, &caches[0].cross));
        if !fits {
            return Err(GpuError::Unsupported("one cache, or one token a cache of one length and one source".into()));
        }
        // One cache: its tokens at past ..; several: each beam's one token at `past`.
        let input = if single { tokens } else { &tokens[..tokens.len().min(1)] };
        crate::model::RunError::check_input(input, past, cfg.vocab_size, cfg.max_position_embeddings)
            .map_err(|e| GpuError::Unsupported(e.to_string()))?;
        if let Some(&id) = tokens.iter().find(|&&id| id as usize >= cfg.vocab_size) {
            return Err(GpuError::Unsupported(
                crate::model::RunError::TokenOutOfRange { id, vocab: cfg.vocab_size }.to_string(),
            ));
        }
        let (rows, c, heads, vocab) = (tokens.len(), cfg.d_model, cfg.decoder_attention_heads, cfg.vocab_size);
        let t = if single { rows } else { 1 };
        if past + t > caches[0].own.capacity {
            let cap = caches[0].own.capacity;
            return Err(GpuError::Unsupported(format!("{} positions in a cache of {cap}", past + t)));
        }
        let s_src = caches[0].source_len;
        let (keep, all_logits) = (single && opts.attentions, opts.all_logits && single);
        let logit_rows = if all_logits || !single { rows } else { 1 };
        let w_len = heads as u64 * rows as u64 * (past + t).max(s_src) as u64;
        gpu_size(&self.gpu, w_len, (logit_rows * vocab) as u64)?;
        // Within the adapter's limit, so within usize.
        let w_len = w_len as usize;
        // (rows, C): each new token's embedding at its position (past + i; a beam's at past).
        let mut x0 = Array2::<f32>::zeros((rows, c));
        for (i, &tok) in tokens.iter().enumerate() {
            let at = if single { past + i } else { past };
            x0.row_mut(i).assign(&self.model.embed(self.model.weights.decoder_embed(), &[tok], at).row(0));
        }
        let gpu = &self.gpu;
        let (readback, at) = gpu
            .checked(|| {
                let sc = Scratch::new(gpu, rows, c, 3 * c, cfg.decoder_ffn_dim, w_len);
                let logits = gpu.buffer("logits", logit_rows * vocab);
                gpu.write(&sc.x, 0, bytemuck::cast_slice(x0.as_slice().expect("standard layout")));
                let mut b = Batch::new(gpu);
                let mut at = Reads::default();
                if opts.hidden_states && single {
                    at.hidden.push(b.read(&sc.x, 0, rows * c));
                }
                for (l, layer) in self.decoder.iter().enumerate() {
                    // Masked self-attention, each cache over its own keys: (rows, C) -> (rows, 3C)
                    layer.qkv.record(&mut b, &sc.x, &sc.qkv, rows, false);
                    for (i, cache) in caches.iter().enumerate() {
                        let (k, v) = (&cache.own.k[l], &cache.own.v[l]);
                        let row0 = if single { 0 } else { i };
                        let p = params::KvAppend { t: t as u32, c: c as u32, past: past as u32, row0: row0 as u32 };
                        let groups = [kernels::groups_for(t * c, 256), 1, 1];
                        b.add(kernels::Kernel::KvAppend, &p, &[&sc.qkv, k, v], groups);
                        let attend = Attend { t, s: past + t, heads, q_stride: 3 * c, row0, causal: true };
                        attend.record(&mut b, &sc.qkv, (k, v), &sc, ablated(opts, Kind::Decoder, l));
                    }
                    if keep {
                        at.attentions.push(b.read(&sc.w, 0, heads * t * (past + t)));
                    }
                    self.post_norm(&mut b, &sc, &layer.out_proj, &sc.y, &layer.self_attn_layer_norm, rows);
                    // Cross-attention: every row's query over the source's keys and values.
                    layer.cross_q.record(&mut b, &sc.x, &sc.q, rows, false);
                    let (k, v) = &caches[0].cross[l];
                    let attend = Attend { t: rows, s: s_src, heads, q_stride: c, row0: 0, causal: false };
                    attend.record(&mut b, &sc.q, (k, v), &sc, ablated(opts, Kind::Cross, l));
                    if keep {
                        at.cross.push(b.read(&sc.w, 0, heads * rows * s_src));
                    }
                    self.post_norm(&mut b, &sc, &layer.cross_out, &sc.y, &layer.encoder_attn_layer_norm, rows);
                    self.mlp(&mut b, &sc, (&layer.fc1, &layer.fc2), rows);
                    self.norm_into_x(&mut b, &sc, &layer.final_layer_norm, rows);
                    if opts.hidden_states && single {
                        at.hidden.push(b.read(&sc.x, 0, rows * c));
                    }
                }
                // (rows, C) x (C, vocab) -> (rows, vocab): the wanted rows, from the first one.
                let first = rows - logit_rows;
                b.copy(&sc.x, first * c, &sc.h, 0, logit_rows * c);
                table::logits(&mut b, &sc.h, &self.output, &logits, (logit_rows, vocab, c));
                at.output = b.read(&logits, 0, logit_rows * vocab);
                (b.submit(), at)
            })
            .await?;
        for cache in caches.iter_mut() {
            cache.own.len = past + t;
        }
        let all = match readback {
            Some(r) => r.values(gpu).await?,
            None => Vec::new(),
        };
        let part = |at: usize, n: usize| &all[at..at + n];
        let logits =
            shaped(part(at.output, logit_rows * vocab), (logit_rows, vocab)) + &self.model.weights.final_logits_bias;
        Ok(Decoded {
            logits,
            self_attentions: at
                .attentions
                .iter()
                .map(|&o| shaped(part(o, heads * t * (past + t)), (heads, t, past + t)))
                .collect(),
            cross_attentions: at
                .cross
                .iter()
                .map(|&o| shaped(part(o, heads * rows * s_src), (heads, rows, s_src)))
                .collect(),
            hidden_states: at.hidden.iter().map(|&o| shaped(part(o, rows * c), (rows, c))).collect(),
        })
    }

    /// Greedy decoding with the heads `opts.knock_out` names knocked out (as `Marian::greedy_with`).
    pub async fn greedy_with(&self, source: &[u32], max_new: usize, opts: &Options) -> Result<Vec<u32>, GpuError> {
        let opts = Options { knock_out: opts.knock_out.clone(), ..Default::default() };
        let cfg = &self.model.config;
        let (_, cache) = self.encode(source, &opts, max_new + 1).await?;
        let mut caches = [cache];
        let mut out = vec![cfg.decoder_start_token_id];
        let max_len = 1 + max_new;
        while out.len() < max_len {
            let next = *out.last().expect("the start token");
            let logits = self.decode(&[next], &mut caches, &opts).await?.logits;
            let lp = self.model.next_log_probs(logits.row(0), out.len(), max_len);
            let next = crate::numerics::softmax::argmax(lp.view());
            out.push(next);
            if next == cfg.eos_token_id {
                break;
            }
        }
        Ok(out)
    }

    /// Beam search with the heads `opts.knock_out` names knocked out (as `Marian::beam_search_with`):
    /// the beams' step as rows of one pass, their caches reordered on the device.
    pub async fn beam_search_with(
        &self,
        source: &[u32],
        set: BeamSettings,
        opts: &Options,
    ) -> Result<(Vec<Hypothesis>, Vec<Step>), GpuError> {
        let opts = Options { knock_out: opts.knock_out.clone(), ..Default::default() };
        let cfg = &self.model.config;
        let mut search = Search::new(cfg, set);
        let capacity = search.max_len();
        let (_, first) = self.encode(source, &opts, capacity).await?;
        let n = search.beams();
        // The first beam starts on the encoder's cache; the others, and a spare set to copy into
        // when the search reorders the beams, on empty ones beside the same source.
        let (cross, source_len) = (first.cross.clone(), first.source_len);
        let fresh = |_| self.new_cache(cross.clone(), source_len, capacity);
        let mut caches: Vec<_> = std::iter::once(first).chain((1..n).map(fresh)).collect();
        let mut spare: Vec<_> = (0..n).map(fresh).collect();
        loop {
            let logits = self.decode(&search.last_tokens(), &mut caches, &opts).await?.logits;
            let parents = search.advance(cfg, logits.view());
            if search.is_done() {
                return Ok(search.finish());
            }
            // Beam i continues beam parents[i]: its keys and values so far, copied on the device.
            let len = caches[0].own.len;
            self.gpu
                .checked(|| {
                    let mut b = Batch::new(&self.gpu);
                    for (to, &from) in spare.iter_mut().zip(&parents) {
                        let (src, n_f32) = (&caches[from].own, len * cfg.d_model);
                        for l in 0..cfg.decoder_layers {
                            b.copy(&src.k[l], 0, &to.own.k[l], 0, n_f32);
                            b.copy(&src.v[l], 0, &to.own.v[l], 0, n_f32);
                        }
                        to.own.len = len;
                    }
                    b.submit();
                })
                .await?;
            std::mem::swap(&mut caches, &mut spare);
        }
    }

    /// x ← LayerNorm(x + y W + b): the sublayer's output projection added into x, then the norm.
    fn post_norm(&self, b: &mut Batch, sc: &Scratch, out: &GpuDense, y: &wgpu::Buffer, ln: &GpuNorm, rows: usize) {
        out.record(b, y, &sc.x, rows, true);
        self.norm_into_x(b, sc, ln, rows);
    }

    /// x ← LayerNorm(x), through h (a kernel cannot read and write one buffer).
    fn norm_into_x(&self, b: &mut Batch, sc: &Scratch, ln: &GpuNorm, rows: usize) {
        let c = self.model.config.d_model;
        let eps = 1e-5; // nn.LayerNorm's default, as `marian::model`
        let p = params::Norm { rows: rows as u32, n: c as u32, eps, row0: 0 };
        b.add(kernels::Kernel::LayerNorm, &p, &[&sc.x, &ln.weight, &ln.bias, &sc.h], [rows as u32, 1, 1]);
        b.copy(&sc.h, 0, &sc.x, 0, rows * c);
    }

    /// x ← x + act(x W₁ + b₁) W₂ + b₂, before the block's last norm.
    fn mlp(&self, b: &mut Batch, sc: &Scratch, (fc1, fc2): (&GpuDense, &GpuDense), rows: usize) {
        fc1.record(b, &sc.x, &sc.a, rows, false);
        kernels::activation(b, &sc.a, rows * fc1.n_out, self.model.config.activation_function.kernel());
        fc2.record(b, &sc.a, &sc.x, rows, true);
    }
}

/// The attention weights' and the logits' buffers fit the adapter (counts of f32).
fn gpu_size(gpu: &Gpu, weights: u64, logits: u64) -> Result<(), GpuError> {
    gpu.check_size("the attention weights of one layer", weights * 4)?;
    gpu.check_size("the logits", logits * 4)
}

/// One attention's dispatch (`Kernel::Attend`): T queries from rows row0 .. of q over S keys.
struct Attend {
    t: usize,
    s: usize,
    heads: usize,
    q_stride: usize,
    row0: usize,
    causal: bool,
}

impl Attend {
    /// The heads' outputs into `sc.y`'s rows and the weights into `sc.w`.
    fn record(
        &self,
        b: &mut Batch,
        q: &wgpu::Buffer,
        (k, v): (&wgpu::Buffer, &wgpu::Buffer),
        sc: &Scratch,
        ablate: u32,
    ) {
        let hd = sc.c / self.heads;
        let p = params::Attend {
            t: self.t as u32,
            s: self.s as u32,
            hd: hd as u32,
            q_stride: self.q_stride as u32,
            row0: self.row0 as u32,
            causal: self.causal as u32,
            ablate,
            scale: 1.0 / (hd as f32).sqrt(),
        };
        kernels::attend(b, p, self.heads, (q, k, v), (&sc.y, &sc.w));
    }
}

/// One call's activations.
struct Scratch {
    c: usize,
    /// (rows, C): the residual stream.
    x: wgpu::Buffer,
    /// (rows, C): a norm's output before it is copied back into x, and the rows of the logits.
    h: wgpu::Buffer,
    /// (rows, 3C): [Q | K | V] of a self-attention.
    qkv: wgpu::Buffer,
    /// (rows, C): cross-attention's queries.
    q: wgpu::Buffer,
    /// (rows, C): the heads' outputs side by side.
    y: wgpu::Buffer,
    /// (rows, F)
    a: wgpu::Buffer,
    /// The attention weights of one attention, (H, T, S).
    w: wgpu::Buffer,
}

impl Scratch {
    fn new(gpu: &Gpu, rows: usize, c: usize, qkv: usize, f: usize, w: usize) -> Scratch {
        Scratch {
            c,
            x: gpu.buffer("x", rows * c),
            h: gpu.buffer("h", rows * c),
            qkv: gpu.buffer("qkv", rows * qkv),
            q: gpu.buffer("q", rows * c),
            y: gpu.buffer("y", rows * c),
            a: gpu.buffer("a", rows * f),
            w: gpu.buffer("w", w),
        }
    }
}

/// Where each value read back starts in the readback.
#[derive(Default)]
struct Reads {
    /// The encoder's output, or the logits.
    output: usize,
    hidden: Vec<usize>,
    /// Self-attention weights per layer.
    attentions: Vec<usize>,
    /// Cross-attention weights per layer.
    cross: Vec<usize>,
}
