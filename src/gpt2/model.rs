//! GPT-2's forward pass (as nanoGPT's `model.py` and Hugging Face's `GPT2LMHeadModel`):
//!
//! x₀ = wte[tokens] + wpe[positions]
//! for each block: x ← x + attn(ln_1(x)); x ← x + mlp(ln_2(x))
//! logits = ln_f(x) wteᵀ
//!
//! with a KV cache (each call runs only the new tokens against the cached keys and values),
//! optional capture of the attention weights, and head ablation.

use ndarray::{s, Array2, Array3, ArrayView2, Axis};

use crate::numerics::attention::max_pool;

use super::ops::{causal_attention, layer_norm, linear, linear_gelu, tied_logits};
use super::weights::{Block, Weights};
use super::{Config, LoadError, RunError};
use crate::formats::safetensors::SafeTensors;
use crate::model::{ForwardOptions, ForwardOutput, KvCache};
use crate::numerics::par;

pub struct Gpt2 {
    pub config: Config,
    pub weights: Weights,
}

impl Gpt2 {
    /// Loads `config.json` text and `model.safetensors` bytes.
    pub fn load(config_json: &str, safetensors: &[u8]) -> Result<Self, LoadError> {
        let config = Config::from_json(config_json)?;
        let st = SafeTensors::parse(safetensors)?;
        let weights = Weights::from_safetensors(&st, &config)?;
        Ok(Gpt2 { config, weights })
    }

    pub fn new_cache(&self) -> KvCache {
        KvCache::new(self.config.n_layer, self.config.n_embd)
    }

    /// The input errors of a forward pass on any backend: no tokens, an id outside the
    /// vocabulary, or more positions than the model's window.
    pub fn check_input(&self, tokens: &[u32], past: usize) -> Result<(), RunError> {
        RunError::check_input(tokens, past, self.config.vocab_size, self.config.n_positions)
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
        let (t, c) = (tokens.len(), cfg.n_embd);
        let w = &self.weights;
        // x₀ = wte[token] + wpe[position]: (T, C)
        let mut x = Array2::<f32>::zeros((t, c));
        for (i, (mut row, &id)) in x.rows_mut().into_iter().zip(tokens).enumerate() {
            row.assign(&(&w.wte.row(id as usize) + &w.wpe.row(past + i)));
        }
        opts.patches.residual_into(0, x.view_mut());
        let mut hidden_states = Vec::new();
        if opts.hidden_states {
            hidden_states.push(x.clone());
        }
        let mut attentions = Vec::with_capacity(cfg.n_layer);
        let (mut thumbnails, mut head_outputs) = (Vec::new(), Vec::new());
        for (l, block) in w.h.iter().enumerate() {
            let (y, att, thumb) = self.attention(l, block, x.view(), cache, past, opts, &mut head_outputs);
            x += &y;
            attentions.push(att);
            thumbnails.extend(thumb);
            // MLP: (T, C) x (C, 4C) -> GELU -> (T, 4C) x (4C, C) -> (T, C)
            let h = layer_norm(x.view(), &block.ln_2, cfg.layer_norm_epsilon);
            let a = linear_gelu(h.view(), &block.mlp.c_fc);
            x += &linear(a.view(), &block.mlp.c_proj);
            opts.patches.residual_into(l + 1, x.view_mut());
            if opts.hidden_states {
                hidden_states.push(x.clone());
            }
        }
        cache.advance(t);
        let last = if opts.all_logits { x.view() } else { x.slice(s![t - 1.., ..]) };
        let h = layer_norm(last, &w.ln_f, cfg.layer_norm_epsilon);
        // The LM head is tied to the token embeddings: (T, C) x (C, vocab) -> (T, vocab)
        let logits = tied_logits(h.view(), &w.wte);
        Ok(ForwardOutput { logits, attentions, hidden_states, thumbnails, head_outputs })
    }

    /// One block's attention sub-layer: returns its contribution to the residual stream (T, C)
    /// and, if captured, its weights (H, T, S) and their thumbnails; the heads' output before
    /// the projection is pushed to `head_outputs` when asked for.
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        l: usize,
        block: &Block,
        x: ArrayView2<f32>,
        cache: &mut KvCache,
        past: usize,
        opts: &ForwardOptions,
        head_outputs: &mut Vec<Array2<f32>>,
    ) -> (Array2<f32>, Option<Array3<f32>>, Option<Array3<f32>>) {
        let cfg = &self.config;
        let (t, c, n_head, hd) = (x.nrows(), cfg.n_embd, cfg.n_head, cfg.head_dim());
        let h = layer_norm(x, &block.ln_1, cfg.layer_norm_epsilon);
        // (T, C) x (C, 3C) -> (T, 3C) = [Q | K | V]
        let qkv = linear(h.view(), &block.attn.c_attn);
        let q = qkv.slice(s![.., 0..c]);
        let (k_all, v_all) = cache.append(l, qkv.slice(s![.., c..2 * c]), qkv.slice(s![.., 2 * c..3 * c]));
        let keep = opts.capture.wants(l);
        let mut weights = keep.then(|| Array3::<f32>::zeros((n_head, t, past + t)));
        let mut thumbs = opts.thumbnails.map(|n| Array3::<f32>::zeros((n_head, t.min(n), (past + t).min(n))));
        let mut y = Array2::<f32>::zeros((t, c));
        // The heads are independent: on several threads each takes a run of them (`par::map`).
        // (H, T, S) scores and (H, T, d) outputs: 2 H T S d multiply-adds.
        let cols = |head: usize| s![.., head * hd..(head + 1) * hd];
        let work = 2 * n_head * t * (past + t) * hd;
        let heads = par::map(n_head, work, |head| {
            let (out, wts) =
                causal_attention(q.slice(cols(head)), k_all.slice(cols(head)), v_all.slice(cols(head)), past);
            // Its thumbnail, on the thread that computed its weights.
            let thumb = opts.thumbnails.map(|n| max_pool(wts.view(), n));
            (out, wts, thumb)
        });
        for (head, (out, wts, thumb)) in heads.into_iter().enumerate() {
            let cols = cols(head);
            // Ablation zeroes this head's slice of the concatenated output, before W_O mixes heads.
            if !opts.ablate.contains(&(l, head)) {
                y.slice_mut(cols).assign(&out);
            }
            if let Some(all) = weights.as_mut() {
                all.index_axis_mut(Axis(0), head).assign(&wts);
            }
            if let (Some(all), Some(one)) = (thumbs.as_mut(), thumb) {
                all.index_axis_mut(Axis(0), head).assign(&one);
            }
        }
        opts.patches.heads_into(l, y.view_mut(), hd);
        if opts.head_outputs {
            head_outputs.push(y.clone());
        }
        // (T, C) x (C, C) -> (T, C)
        (linear(y.view(), &block.attn.c_proj), weights, thumbs)
    }

    /// The residual stream x (T, C) read as the last block's output is: through `ln_f` and the
    /// tied LM head, (T, vocab) logits (the logit lens reads every block's output so).
    pub fn read_out(&self, x: ArrayView2<f32>) -> Array2<f32> {
        let h = layer_norm(x, &self.weights.ln_f, self.config.layer_norm_epsilon);
        tied_logits(h.view(), &self.weights.wte)
    }

    /// One head's queries, keys and values for `tokens` from position 0, each (T, head_dim):
    /// the residual stream entering block `layer`, through `ln_1` and `c_attn`, sliced to the
    /// head. For the efficient-attention chapter, which studies real attention matrices.
    pub fn head_qkv(&self, tokens: &[u32], layer: usize, head: usize) -> Result<[Array2<f32>; 3], RunError> {
        let cfg = &self.config;
        let (layer, head) = (layer.min(cfg.n_layer - 1), head.min(cfg.n_head - 1));
        let mut cache = self.new_cache();
        let out = self.forward(tokens, &mut cache, &ForwardOptions { hidden_states: true, ..Default::default() })?;
        let block = &self.weights.h[layer];
        let (c, hd) = (cfg.n_embd, cfg.head_dim());
        let h = layer_norm(out.hidden_states[layer].view(), &block.ln_1, cfg.layer_norm_epsilon);
        // (T, C) x (C, 3C) -> (T, 3C) = [Q | K | V]; this head's columns of each
        let qkv = linear(h.view(), &block.attn.c_attn);
        let part = |i: usize| qkv.slice(s![.., i * c + head * hd..i * c + (head + 1) * hd]).to_owned();
        Ok([part(0), part(1), part(2)])
    }

    /// Greedy decoding with the KV cache: the prompt once, then one token per step.
    pub fn greedy(&self, prompt: &[u32], steps: usize) -> Result<Vec<u32>, RunError> {
        let mut cache = self.new_cache();
        let opts = ForwardOptions::default();
        let mut out = Vec::with_capacity(steps);
        let mut logits = self.forward(prompt, &mut cache, &opts)?.logits;
        for step in 0..steps {
            let next = crate::model::sample::argmax(logits.row(0));
            out.push(next);
            if step + 1 < steps {
                logits = self.forward(&[next], &mut cache, &opts)?.logits;
            }
        }
        Ok(out)
    }
}
