//! A Llama-family forward pass (as Hugging Face's `LlamaForCausalLM`):
//!
//! x₀ = embed_tokens[tokens]                                  (no position embeddings)
//! for each layer: x ← x + attn(rms_norm(x)); x ← x + mlp(rms_norm(x))
//! logits = rms_norm(x) lm_headᵀ                              (lm_head = embed_tokens when tied)
//!
//! attn: q = x W_qᵀ, k = x W_kᵀ, v = x W_vᵀ; RoPE turns q and k by their positions; query head h
//! attends with key and value head h / (H / KV) (grouped-query attention); the heads'
//! outputs, side by side, go through W_o.
//! mlp (SwiGLU): down(silu(gate(x)) ⊙ up(x)).
//!
//! The KV cache holds each layer's keys (already rotated) and values per KV head, so a model
//! with H / KV query heads per group caches H / KV times less than multi-head attention would.
//! Each call runs only the new tokens against the cache. Attention weights can be captured per
//! query head and heads knocked out, as in GPT-2's `model`.

use ndarray::{s, Array2, Array3, ArrayView2, Axis};

use super::ops::{logits, rms_norm, silu_mul_rows, Rope};
use super::weights::{Layer, Weights};
use super::{Config, RunError};
use crate::formats::safetensors::SafeTensors;
use crate::formats::LoadError;
use crate::model::{ForwardOptions, ForwardOutput, KvCache};
use crate::numerics::attention::max_pool;
use crate::numerics::flash::causal_attention;
use crate::numerics::par;

pub struct Llama {
    pub config: Config,
    pub weights: Weights,
}

impl Llama {
    /// Loads `config.json` text and `model.safetensors` bytes.
    pub fn load(config_json: &str, safetensors: &[u8]) -> Result<Self, LoadError> {
        let config = Config::from_json(config_json)?;
        let st = SafeTensors::parse(safetensors)?;
        let weights = Weights::from_safetensors(&st, &config)?;
        Ok(Llama { config, weights })
    }

    pub fn new_cache(&self) -> KvCache {
        KvCache::new(self.config.num_hidden_layers, self.config.kv_width())
    }

    /// The input errors of a forward pass: no tokens, an id outside the vocabulary, or more
    /// positions than the model's window.
    pub fn check_input(&self, tokens: &[u32], past: usize) -> Result<(), RunError> {
        RunError::check_input(tokens, past, self.config.vocab_size, self.config.max_position_embeddings)
    }

    /// Runs `tokens` after whatever `cache` holds, appending their keys and values to it.
    pub fn forward(
        &self,
        tokens: &[u32],
        cache: &mut KvCache,
        opts: &ForwardOptions,
    ) -> Result<ForwardOutput, RunError> {
        let cfg = &self.config;
        let past = cache.len();
        self.check_input(tokens, past)?;
        let (t, c) = (tokens.len(), cfg.hidden_size);
        let w = &self.weights;
        // x₀ = embed_tokens[token]: (T, C)
        let mut x = Array2::<f32>::zeros((t, c));
        for (mut row, &id) in x.rows_mut().into_iter().zip(tokens) {
            row.assign(&w.embed_tokens.row(id as usize));
        }
        opts.patches.residual_into(0, x.view_mut());
        let mut hidden_states = Vec::new();
        if opts.hidden_states {
            hidden_states.push(x.clone());
        }
        // The rotation of positions past .. past + T, shared by every layer.
        let rope = Rope::new(cfg.head_dim, cfg.rope_theta, past, t);
        let mut attentions = Vec::with_capacity(cfg.num_hidden_layers);
        let (mut thumbnails, mut head_outputs) = (Vec::new(), Vec::new());
        for (l, layer) in w.layers.iter().enumerate() {
            let (y, att, thumb) = self.attention(l, layer, x.view(), (&rope, past), cache, opts, &mut head_outputs);
            x += &y;
            attentions.push(att);
            thumbnails.extend(thumb);
            x += &self.mlp(layer, x.view());
            opts.patches.residual_into(l + 1, x.view_mut());
            if opts.hidden_states {
                hidden_states.push(x.clone());
            }
        }
        cache.advance(t);
        let last = if opts.all_logits { x.view() } else { x.slice(s![t - 1.., ..]) };
        let h = rms_norm(last, &w.norm, cfg.rms_norm_eps);
        // (T, C) x (C, vocab) -> (T, vocab)
        let logits = logits(h.view(), w.output());
        if logits.iter().any(|v| !v.is_finite()) {
            return Err(RunError::NotFinite);
        }
        Ok(ForwardOutput { logits, attentions, hidden_states, thumbnails, head_outputs })
    }

    /// The residual stream x (T, C) read as the last layer's output is: through the final norm
    /// and the output layer, (T, vocab) logits (the logit lens reads every layer's output so).
    pub fn read_out(&self, x: ArrayView2<f32>) -> Array2<f32> {
        let h = rms_norm(x, &self.weights.norm, self.config.rms_norm_eps);
        logits(h.view(), self.weights.output())
    }

    /// One layer's attention sub-layer: returns its contribution to the residual stream (T, C)
    /// and, if captured, its weights (H, T, S) and their thumbnails; the heads' output before
    /// the projection is pushed to `head_outputs` when asked for. `rope` turns
    /// the new tokens' positions, from `past` on.
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        l: usize,
        layer: &Layer,
        x: ArrayView2<f32>,
        (rope, past): (&Rope, usize),
        cache: &mut KvCache,
        opts: &ForwardOptions,
        head_outputs: &mut Vec<Array2<f32>>,
    ) -> (Array2<f32>, Option<Array3<f32>>, Option<Array3<f32>>) {
        let cfg = &self.config;
        let (t, n_head, d) = (x.nrows(), cfg.num_attention_heads, cfg.head_dim);
        let a = &layer.self_attn;
        let h = rms_norm(x, &layer.input_layernorm, cfg.rms_norm_eps);
        // (T, C) x (C, H·D) -> (T, H·D); (T, C) x (C, KV·D) -> (T, KV·D) for k and v
        let (mut q, mut k, v) = (a.q_proj.apply(h.view()), a.k_proj.apply(h.view()), a.v_proj.apply(h.view()));
        rope.apply(q.view_mut(), d);
        rope.apply(k.view_mut(), d);
        // (S, KV·D) each, S = past + T
        let (k_all, v_all) = cache.append(l, k.view(), v.view());
        let mut weights = opts.capture.wants(l).then(|| Array3::<f32>::zeros((n_head, t, past + t)));
        let mut thumbs = opts.thumbnails.map(|n| Array3::<f32>::zeros((n_head, t.min(n), (past + t).min(n))));
        let mut y = Array2::<f32>::zeros((t, n_head * d));
        let cols = |head: usize| s![.., head * d..(head + 1) * d];
        // The heads are independent: on several threads each takes a run of them (`par::map`).
        // (H, T, S) scores and (H, T, D) outputs: 2 H T S D multiply-adds.
        let work = 2 * n_head * t * (past + t) * d;
        let heads = par::map(n_head, work, |head| {
            // Grouped-query attention: this head reads its group's key and value columns.
            let kv = cols(cfg.kv_head(head));
            // (T, D) against (S, D): out (T, D), weights (T, S)
            let (out, wts) = causal_attention(q.slice(cols(head)), k_all.slice(kv), v_all.slice(kv), past);
            // Its thumbnail, on the thread that computed its weights.
            let thumb = opts.thumbnails.map(|n| max_pool(wts.view(), n));
            (out, wts, thumb)
        });
        for (head, (out, wts, thumb)) in heads.into_iter().enumerate() {
            // A knock-out zeroes this head's slice of the concatenated output, before W_o mixes heads.
            if !opts.ablate.contains(&(l, head)) {
                y.slice_mut(cols(head)).assign(&out);
            }
            if let Some(all) = weights.as_mut() {
                all.index_axis_mut(Axis(0), head).assign(&wts);
            }
            if let (Some(all), Some(one)) = (thumbs.as_mut(), thumb) {
                all.index_axis_mut(Axis(0), head).assign(&one);
            }
        }
        opts.patches.heads_into(l, y.view_mut(), d);
        if opts.head_outputs {
            head_outputs.push(y.clone());
        }
        // (T, H·D) x (H·D, C) -> (T, C)
        (a.o_proj.apply(y.view()), weights, thumbs)
    }

    /// One layer's MLP sub-layer (SwiGLU) on the residual stream x (T, C): down(silu(gate(h)) ⊙ up(h))
    /// with h = rms_norm(x), (T, C).
    fn mlp(&self, layer: &Layer, x: ArrayView2<f32>) -> Array2<f32> {
        let m = &layer.mlp;
        let h = rms_norm(x, &layer.post_attention_layernorm, self.config.rms_norm_eps);
        // (T, C) x (C, F) -> (T, F), twice
        let (mut gate, up) = (m.gate_proj.apply(h.view()), m.up_proj.apply(h.view()));
        if !gate.is_standard_layout() {
            gate = gate.as_standard_layout().into_owned();
        }
        let up = up.as_standard_layout();
        let width = gate.ncols();
        silu_mul_rows(
            gate.as_slice_mut().expect("a fresh array is contiguous"),
            up.as_slice().expect("standard layout"),
            width,
        );
        // (T, F) x (F, C) -> (T, C)
        m.down_proj.apply(gate.view())
    }

    /// One query head's queries and its KV head's keys and values for `tokens` from position 0,
    /// each (T, D), queries and keys after RoPE: what the head's scores q·k/√D are made of. For
    /// the chapters that study a real head (RoPE's scores by offset, the shared keys of a group).
    pub fn head_qkv(&self, tokens: &[u32], layer: usize, head: usize) -> Result<[Array2<f32>; 3], RunError> {
        let cfg = &self.config;
        let (layer, head) = (layer.min(cfg.num_hidden_layers - 1), head.min(cfg.num_attention_heads - 1));
        let mut cache = self.new_cache();
        let out = self.forward(tokens, &mut cache, &ForwardOptions { hidden_states: true, ..Default::default() })?;
        let (a, d) = (&self.weights.layers[layer].self_attn, cfg.head_dim);
        let norm = &self.weights.layers[layer].input_layernorm;
        let h = rms_norm(out.hidden_states[layer].view(), norm, cfg.rms_norm_eps);
        // (T, C) x (C, H·D) -> (T, H·D), and (T, KV·D) for k and v; this head's columns of each
        let (mut q, mut k, v) = (a.q_proj.apply(h.view()), a.k_proj.apply(h.view()), a.v_proj.apply(h.view()));
        let rope = Rope::new(d, cfg.rope_theta, 0, tokens.len());
        rope.apply(q.view_mut(), d);
        rope.apply(k.view_mut(), d);
        let g = cfg.kv_head(head);
        let part = |m: &Array2<f32>, i: usize| m.slice(s![.., i * d..(i + 1) * d]).to_owned();
        Ok([part(&q, head), part(&k, g), part(&v, g)])
    }

    /// Greedy decoding with the KV cache: the prompt once, then one token per step.
    pub fn greedy(&self, prompt: &[u32], steps: usize) -> Result<Vec<u32>, RunError> {
        let mut cache = self.new_cache();
        let opts = ForwardOptions::default();
        let mut out = Vec::with_capacity(steps);
        let mut logits = self.forward(prompt, &mut cache, &opts)?.logits;
        for step in 0..steps {
            let next = crate::numerics::softmax::argmax(logits.row(0));
            out.push(next);
            if step + 1 < steps {
                logits = self.forward(&[next], &mut cache, &opts)?.logits;
            }
        }
        Ok(out)
    }
}
