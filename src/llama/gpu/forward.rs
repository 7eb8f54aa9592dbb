//! The forward pass of `GpuLlama`: every kernel of a call recorded into one batch, one
//! submission and one readback.

use super::{GpuKvCache, GpuLinear, GpuLlama, Scratch};
use crate::gpu::kernels::{self, groups_for, Batch, Epilogue, Kernel};
use crate::gpu::params;
use crate::gpu::table;
use crate::gpu::GpuError;
use crate::llama::ops::Rope;
use crate::llama::{ForwardOptions, ForwardOutput};
use crate::model::patch::GpuPatches;
use crate::model::readout::{Offsets, Sizes};

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
        let (n_head, d, s_len) = (cfg.num_attention_heads, cfg.head_dim, past + t);
        let logit_rows = if opts.all_logits { t } else { 1 };
        let thumbs = opts.thumbnails.map(|n| (t.min(n), s_len.min(n)));
        let wants = |l: usize| opts.capture.wants(l);
        let need_weights = (0..cfg.num_hidden_layers).any(wants) || thumbs.is_some();
        if need_weights {
            self.gpu.check_size("the attention weights of one layer", (n_head * t * s_len * 4) as u64)?;
        }
        self.gpu.check_size("the logits", (logit_rows * cfg.vocab_size * 4) as u64)?;
        let sc = self.scratch(t);
        let gpu = &self.gpu;
        let patches = GpuPatches::new(gpu, &opts.patches);
        let logits_buf =
            if logit_rows == 1 { sc.logits.clone() } else { gpu.buffer("logits", logit_rows * cfg.vocab_size) };
        // The turns of positions past .. past + T, shared by every layer: (T, D) = [cos | sin].
        let rope = Rope::new(d, cfg.rope_theta, past, t).table();
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
                gpu.write(&sc.rope, 0, bytemuck::cast_slice(rope.as_slice().expect("standard layout")));
                // x₀ = embed_tokens[token]: (T, C), one dispatch per chunk, no positions added
                table::embed(&mut b, &sc.ids, &self.embed_tokens, (&self.zeros, false), &sc.x, (t, c, past));
                patches.residual(&mut b, 0, &sc.x, c);
                if opts.hidden_states {
                    at.hidden.push(b.read(&sc.x, 0, t * c));
                }
                let weights = need_weights.then(|| gpu.buffer("attention weights", n_head * t * s_len));
                let n_layer = cfg.num_hidden_layers;
                let thumb_buf = thumbs.map(|(r, k)| gpu.buffer("thumbnails", n_layer * n_head * r * k));
                for l in 0..self.layers.len() {
                    let ablate =
                        opts.ablate.iter().filter(|(al, ah)| *al == l && *ah < 32).fold(0u32, |m, (_, h)| m | 1 << h);
                    let capture = weights.as_ref().filter(|_| wants(l) || thumb_buf.is_some());
                    let heads_out =
                        self.layer(&mut b, &sc, cache, l, (t, past), (ablate, &patches, opts.head_outputs), capture);
                    at.head_outputs.extend(heads_out);
                    if let Some(w) = capture.filter(|_| wants(l)) {
                        at.captured.push((l, b.read(w, 0, n_head * t * s_len)));
                    }
                    // Every layer's (H, T, S) weights max-pooled on the device to (H, rows, cols).
                    if let (Some(w), Some(tb), Some(rk)) = (capture, &thumb_buf, thumbs) {
                        kernels::pool(&mut b, w, tb, (n_head, t, s_len), rk, l);
                    }
                    patches.residual(&mut b, l + 1, &sc.x, c);
                    if opts.hidden_states {
                        at.hidden.push(b.read(&sc.x, 0, t * c));
                    }
                }
                // Only the rows whose logits are wanted go through the final norm and the output layer.
                self.rms_norm(&mut b, &sc.x, t - logit_rows, &self.norm, &sc.h, logit_rows);
                // (rows, C) x (C, vocab) -> (rows, vocab), against lm_head (vocab, C) or the tied table
                let head = self.lm_head.as_ref().unwrap_or(&self.embed_tokens);
                table::logits(&mut b, &sc.h, head, &logits_buf, (logit_rows, cfg.vocab_size, c));
                at.logits = b.read(&logits_buf, 0, logit_rows * cfg.vocab_size);
                if let (Some(tb), Some((r, k))) = (&thumb_buf, thumbs) {
                    at.thumbnails = Some(b.read(tb, 0, n_layer * n_head * r * k));
                }
                (b.submit(), at)
            })
            .await?;
        cache.len = past + t;
        let all = match readback {
            Some(r) => r.values(gpu).await?,
            None => Vec::new(),
        };
        let (layers, vocab) = (cfg.num_hidden_layers, cfg.vocab_size);
        let heads_width = cfg.q_width();
        let z = Sizes { layers, heads: n_head, t, s: s_len, width: c, heads_width, vocab, logit_rows, thumbs };
        at.unpack(&all, z)
    }

    /// Records layer l on the T new rows of `sc.x` at positions past .. past + T:
    /// x ← x + attn(rms_norm(x)), then x ← x + mlp(rms_norm(x)); query heads whose bit is set in
    /// `ablate` knocked out, the head patches of layer l copied into the heads' output, and the
    /// layer's (H, T, S) attention weights written to `capture`. With `keep_heads`, the heads'
    /// output (T, H·D) is read back: its offset in the readback.
    #[allow(clippy::too_many_arguments)]
    fn layer(
        &self,
        b: &mut Batch,
        sc: &Scratch,
        cache: &GpuKvCache,
        l: usize,
        (t, past): (usize, usize),
        (ablate, patches, keep_heads): (u32, &GpuPatches, bool),
        capture: Option<&wgpu::Buffer>,
    ) -> Option<usize> {
        let (cfg, layer) = (&self.config, &self.layers[l]);
        let (n_head, n_kv, d) = (cfg.num_attention_heads as u32, cfg.num_key_value_heads as u32, cfg.head_dim);
        let (qw, qkv_width, f) = (cfg.q_width(), cfg.q_width() + 2 * cfg.kv_width(), cfg.intermediate_size);
        // rms_norm(x): (T, C) x (C, H·D + 2·KV·D) -> (T, H·D + 2·KV·D) = [Q | K | V]
        self.norm_linear(b, sc, &layer.input_layernorm, &layer.qkv_proj, &sc.qkv, t);
        // RoPE turns the H query heads and the KV key heads in place (not the values).
        let (turned, pairs) = (n_head + n_kv, t * (n_head + n_kv) as usize * d / 2);
        let params = params::Rope { t: t as u32, stride: qkv_width as u32, heads: turned, hd: d as u32 };
        b.add(Kernel::Rope, &params, &[&sc.rope, &sc.qkv], [groups_for(pairs, 256), 1, 1]);
        // Grouped-query attention over all S = past + T positions: (T, H·D), query head h
        // reading KV head h / (H / KV); it also appends the new keys and values to the cache.
        let scale = 1.0 / (d as f32).sqrt();
        let (t32, past32, d32, qw32) = (t as u32, past as u32, d as u32, qw as u32);
        b.add(
            Kernel::Attention,
            &params::Attention { t: t32, past: past32, n_head, hd: d32, c: qw32, ablate, scale, n_kv },
            &[&sc.qkv, &cache.k[l], &cache.v[l], &sc.y],
            [t32, n_head, 1],
        );
        if let Some(w) = capture {
            // Only when asked: the (H, T, S) weights, explicitly.
            let s_len = (past + t) as u32;
            let p = params::Scores { t: t32, past: past32, n_head, hd: d32, c: qw32, s: s_len, scale, n_kv };
            kernels::attention_weights(b, p, &sc.qkv, &cache.k[l], w);
        }
        patches.heads(b, l, &sc.y, (t, qw, d));
        let heads_out = keep_heads.then(|| b.read(&sc.y, 0, t * qw));
        // x ← x + y W_oᵀ: (T, H·D) x (H·D, C) -> (T, C), added into x
        self.linear(b, &sc.y, &layer.o_proj, &sc.x, t, true);
        // MLP: rms_norm(x): (T, C) x (C, 2F) -> (T, 2F) = [gate | up]
        self.norm_linear(b, sc, &layer.post_attention_layernorm, &layer.gate_up_proj, &sc.gu, t);
        // a = silu(gate) ⊙ up: (T, F)
        b.add(
            Kernel::Swiglu,
            &params::Swiglu { t: t32, f: f as u32, ..Default::default() },
            &[&sc.gu, &sc.a],
            [groups_for(t * f, 256), 1, 1],
        );
        // x ← x + a W_downᵀ: (T, F) x (F, C) -> (T, C), added into x
        self.linear(b, &sc.a, &layer.down_proj, &sc.x, t, true);
        heads_out
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
        let eps = self.config.rms_norm_eps;
        b.add(
            Kernel::RmsNorm,
            &params::Norm { rows: rows as u32, n: self.config.hidden_size as u32, eps, row0: row0 as u32 },
            &[x, weight, y],
            [rows as u32, 1, 1],
        );
    }

    /// y ← rms_norm(x) W for the T rows of `sc.x`: in one dispatch when decoding (a few rows,
    /// `kernels::rms_norm_matvec`), else the norm into `sc.h` and the tiled product.
    fn norm_linear(
        &self,
        b: &mut Batch,
        sc: &Scratch,
        weight: &wgpu::Buffer,
        lin: &GpuLinear,
        y: &wgpu::Buffer,
        rows: usize,
    ) {
        if rows <= kernels::MATVEC_MAX_ROWS {
            let norm = (weight, &self.zeros, self.config.rms_norm_eps.to_bits());
            let shape = (rows, lin.n_in, lin.n_out);
            kernels::rms_norm_matvec(b, &sc.x, norm, &lin.weight, &self.zeros, y, shape, Epilogue::Store);
        } else {
            self.rms_norm(b, &sc.x, 0, weight, &sc.h, rows);
            self.linear(b, &sc.h, lin, y, rows, false);
        }
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
