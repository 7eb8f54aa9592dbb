//! Marian's forward pass, read top to bottom as `modeling_marian.py`: the encoder reads the whole
//! source at once (bidirectional self-attention), the decoder writes the target a token at a time
//! (masked self-attention over the target so far, with a KV cache, then cross-attention over the
//! encoder's output, whose keys and values are computed once per source). Every block is
//! post-norm: x ← LayerNorm(x + sublayer(x)).

use std::sync::Arc;

use ndarray::{s, Array1, Array2, Array3, ArrayView2, Axis};

use super::weights::{Attention, DecoderLayer, Dense, EncoderLayer, LayerNorm, Weights};
use super::Config;
use crate::formats::safetensors::SafeTensors;
use crate::formats::LoadError;
use crate::model::{KvCache, RunError};
use crate::numerics::flash::{causal_attention, full_attention};
use crate::numerics::packed::table_logits;
use crate::numerics::par;

/// nn.LayerNorm's default ε.
const LAYER_NORM_EPS: f64 = 1e-5;

pub struct Marian {
    pub config: Config,
    pub weights: Weights,
    /// (max_position_embeddings, C): the sinusoidal positions, as Marian computes them.
    pub positions: Array2<f32>,
}

/// Which of the model's three attentions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The encoder's self-attention: every source token sees every other.
    Encoder,
    /// The decoder's masked self-attention: a target token sees those before it.
    Decoder,
    /// The decoder's cross-attention: a target token's query over the source's keys.
    Cross,
}

/// What a pass keeps beside its output.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Every attention's weights, per layer (heads, T, S).
    pub attentions: bool,
    /// The residual stream after the embeddings and after each layer.
    pub hidden_states: bool,
    /// Logits for every new target position instead of only the last.
    pub all_logits: bool,
    /// (kind, layer, head) whose output is zeroed before the output projection.
    pub knock_out: Vec<(Kind, usize, usize)>,
}

/// The encoder's output for one source.
pub struct Encoded {
    /// (S, C): what the decoder's cross-attention reads.
    pub output: Array2<f32>,
    /// [embeddings, layer 0, …], each (S, C), when asked for.
    pub hidden_states: Vec<Array2<f32>>,
    /// Per layer (H, S, S), when asked for.
    pub attentions: Vec<Array3<f32>>,
}

/// A target being decoded against one source: the decoder's self-attention keys and values so far,
/// and each layer's cross-attention keys and values of the source, (S, C) each.
/// Cloned for each hypothesis of beam search: the cross-attention's part is shared, not copied.
#[derive(Clone)]
pub struct DecoderCache {
    pub own: KvCache,
    pub cross: Arc<Vec<(Array2<f32>, Array2<f32>)>>,
}

/// One decoder pass over new target tokens.
pub struct Decoded {
    /// (T, vocab), or (1, vocab) for the last position only.
    pub logits: Array2<f32>,
    /// Per layer (H, T, past + T), when asked for.
    pub self_attentions: Vec<Array3<f32>>,
    /// Per layer (H, T, S), when asked for.
    pub cross_attentions: Vec<Array3<f32>>,
    /// [embeddings, layer 0, …], each (T, C), when asked for.
    pub hidden_states: Vec<Array2<f32>>,
}

impl Marian {
    /// Loads `config.json` text and `model.safetensors` bytes.
    pub fn load(config_json: &str, safetensors: &[u8]) -> Result<Self, LoadError> {
        let config = Config::from_json(config_json)?;
        let st = SafeTensors::parse(safetensors)?;
        let weights = Weights::from_safetensors(&st, &config)?;
        Ok(Marian::new(config, weights))
    }

    pub fn new(config: Config, weights: Weights) -> Marian {
        let positions = sinusoidal_positions(config.max_position_embeddings, config.d_model);
        Marian { config, weights, positions }
    }

    /// Runs the encoder over a source (its ids end with `</s>`, as the tokenizer writes them).
    pub fn encode(&self, source: &[u32], opts: &Options) -> Result<Encoded, RunError> {
        let cfg = &self.config;
        RunError::check_input(source, 0, cfg.vocab_size, cfg.max_position_embeddings)?;
        let mut x = self.embed(&self.weights.encoder_embed, source, 0);
        let mut hidden_states = Vec::new();
        let mut attentions = Vec::new();
        if opts.hidden_states {
            hidden_states.push(x.clone());
        }
        let heads = cfg.encoder_attention_heads;
        for (l, layer) in self.weights.encoder.iter().enumerate() {
            let EncoderLayer { self_attn, self_attn_layer_norm, fc1, fc2, final_layer_norm } = layer;
            // Bidirectional self-attention: (S, C) -> (S, C)
            let q = self_attn.q_proj.apply(x.view());
            let (k, v) = (self_attn.k_proj.apply(x.view()), self_attn.v_proj.apply(x.view()));
            let knocked = |h| opts.knock_out.contains(&(Kind::Encoder, l, h));
            let (y, w) = attend(self_attn, q.view(), k.view(), v.view(), heads, None, knocked);
            x = layer_norm(&(x + y), self_attn_layer_norm);
            x = layer_norm(&(&x + &self.mlp(x.view(), fc1, fc2)), final_layer_norm);
            if opts.attentions {
                attentions.push(w);
            }
            if opts.hidden_states {
                hidden_states.push(x.clone());
            }
        }
        Ok(Encoded { output: x, hidden_states, attentions })
    }

    /// A decoder cache for `encoded`'s source: each layer's cross-attention keys and values.
    pub fn new_cache(&self, encoded: &Encoded) -> DecoderCache {
        let cross = self
            .weights
            .decoder
            .iter()
            .map(|l| {
                (l.encoder_attn.k_proj.apply(encoded.output.view()), l.encoder_attn.v_proj.apply(encoded.output.view()))
            })
            .collect();
        DecoderCache { own: KvCache::new(self.config.decoder_layers, self.config.d_model), cross: Arc::new(cross) }
    }

    /// Runs the decoder over `tokens` after the target tokens `cache` holds, appending their keys
    /// and values to it.
    pub fn decode(&self, tokens: &[u32], cache: &mut DecoderCache, opts: &Options) -> Result<Decoded, RunError> {
        let cfg = &self.config;
        let past = cache.own.len();
        RunError::check_input(tokens, past, cfg.vocab_size, cfg.max_position_embeddings)?;
        let t = tokens.len();
        let mut x = self.embed(self.weights.decoder_embed(), tokens, past);
        let mut out = Decoded {
            logits: Array2::zeros((0, 0)),
            self_attentions: Vec::new(),
            cross_attentions: Vec::new(),
            hidden_states: Vec::new(),
        };
        if opts.hidden_states {
            out.hidden_states.push(x.clone());
        }
        let heads = cfg.decoder_attention_heads;
        for (l, layer) in self.weights.decoder.iter().enumerate() {
            let DecoderLayer {
                self_attn,
                self_attn_layer_norm,
                encoder_attn,
                encoder_attn_layer_norm,
                fc1,
                fc2,
                final_layer_norm,
            } = layer;
            // Masked self-attention over the target so far: (T, C) -> (T, C)
            let q = self_attn.q_proj.apply(x.view());
            let (k_new, v_new) = (self_attn.k_proj.apply(x.view()), self_attn.v_proj.apply(x.view()));
            let (k, v) = cache.own.append(l, k_new.view(), v_new.view());
            let knocked = |h| opts.knock_out.contains(&(Kind::Decoder, l, h));
            let (y, w) = attend(self_attn, q.view(), k, v, heads, Some(past), knocked);
            x = layer_norm(&(x + y), self_attn_layer_norm);
            // Cross-attention: the target's queries over the source's keys and values.
            let q = encoder_attn.q_proj.apply(x.view());
            let (k, v) = &cache.cross[l];
            let knocked = |h| opts.knock_out.contains(&(Kind::Cross, l, h));
            let (y, cw) = attend(encoder_attn, q.view(), k.view(), v.view(), heads, None, knocked);
            x = layer_norm(&(x + y), encoder_attn_layer_norm);
            x = layer_norm(&(&x + &self.mlp(x.view(), fc1, fc2)), final_layer_norm);
            if opts.attentions {
                out.self_attentions.push(w);
                out.cross_attentions.push(cw);
            }
            if opts.hidden_states {
                out.hidden_states.push(x.clone());
            }
        }
        cache.own.advance(t);
        let last = if opts.all_logits { x.view() } else { x.slice(s![t - 1.., ..]) };
        // (T, C) x (C, vocab) -> (T, vocab), plus the final bias
        out.logits = table_logits(last, self.weights.output()) + &self.weights.final_logits_bias;
        Ok(out)
    }

    /// One decoder step for several targets of one source at once, each with its own cache (beam
    /// search's beams): `tokens[b]` after what `caches[b]` holds, all of the same length and made
    /// from the same `new_cache` (the cross-attention's keys are the first cache's). The
    /// projections and the MLP run on the (B, C) rows together, so each weight is read once a
    /// step rather than once a beam; self-attention runs beam by beam over its own keys. Of
    /// `opts`, only the knock-outs apply (no attentions or hidden states are kept). Returns the
    /// logits (B, vocab).
    pub fn decode_batch(
        &self,
        tokens: &[u32],
        caches: &mut [DecoderCache],
        opts: &Options,
    ) -> Result<Array2<f32>, RunError> {
        let cfg = &self.config;
        let past = caches.first().map_or(0, |c| c.own.len());
        assert!(
            caches.len() == tokens.len()
                && caches.iter().all(|c| c.own.len() == past && Arc::ptr_eq(&c.cross, &caches[0].cross)),
            "one token a cache, one length, one source"
        );
        // Each beam's one token at position `past`.
        for &t in tokens {
            RunError::check_input(&[t], past, cfg.vocab_size, cfg.max_position_embeddings)?;
        }
        let (heads, c) = (cfg.decoder_attention_heads, cfg.d_model);
        let hd = c / heads;
        let cols = |h: usize| s![.., h * hd..(h + 1) * hd];
        // (B, C): each beam's token at position `past`
        let mut x = Array2::<f32>::zeros((tokens.len(), c));
        for (b, &t) in tokens.iter().enumerate() {
            x.row_mut(b).assign(&self.embed(self.weights.decoder_embed(), &[t], past).row(0));
        }
        for (l, layer) in self.weights.decoder.iter().enumerate() {
            // Masked self-attention: each beam's one new query over its own cache.
            let sa = &layer.self_attn;
            let (q, k_new, v_new) = (sa.q_proj.apply(x.view()), sa.k_proj.apply(x.view()), sa.v_proj.apply(x.view()));
            let mut y = Array2::<f32>::zeros(x.dim());
            for (b, cache) in caches.iter_mut().enumerate() {
                let (k, v) = cache.own.append(l, k_new.slice(s![b..b + 1, ..]), v_new.slice(s![b..b + 1, ..]));
                for h in (0..heads).filter(|&h| !opts.knock_out.contains(&(Kind::Decoder, l, h))) {
                    let (o, _) = causal_attention(
                        q.slice(s![b..b + 1, h * hd..(h + 1) * hd]),
                        k.slice(cols(h)),
                        v.slice(cols(h)),
                        past,
                    );
                    y.slice_mut(s![b..b + 1, h * hd..(h + 1) * hd]).assign(&o);
                }
            }
            x = layer_norm(&(x + sa.out_proj.apply(y.view())), &layer.self_attn_layer_norm);
            // Cross-attention: the beams share the source, so all their queries go at once.
            let ca = &layer.encoder_attn;
            let q = ca.q_proj.apply(x.view());
            let (k, v) = &caches[0].cross[l];
            let mut y = Array2::<f32>::zeros(x.dim());
            for h in (0..heads).filter(|&h| !opts.knock_out.contains(&(Kind::Cross, l, h))) {
                let (o, _) = full_attention(q.slice(cols(h)), k.slice(cols(h)), v.slice(cols(h)));
                y.slice_mut(cols(h)).assign(&o);
            }
            x = layer_norm(&(x + ca.out_proj.apply(y.view())), &layer.encoder_attn_layer_norm);
            x = layer_norm(&(&x + &self.mlp(x.view(), &layer.fc1, &layer.fc2)), &layer.final_layer_norm);
        }
        for cache in caches.iter_mut() {
            cache.own.advance(1);
        }
        // (B, C) x (C, vocab) -> (B, vocab): one pass over the table for all the beams.
        Ok(table_logits(x.view(), self.weights.output()) + &self.weights.final_logits_bias)
    }

    /// Token embeddings (scaled by √C when the config says so) plus the positions from `past`:
    /// (T, C).
    pub(super) fn embed(&self, table: &Array2<f32>, tokens: &[u32], past: usize) -> Array2<f32> {
        let scale = if self.config.scale_embedding { (self.config.d_model as f32).sqrt() } else { 1.0 };
        let mut x = Array2::<f32>::zeros((tokens.len(), self.config.d_model));
        for (i, (mut row, &id)) in x.rows_mut().into_iter().zip(tokens).enumerate() {
            row.assign(&(&table.row(id as usize) * scale + self.positions.row(past + i)));
        }
        x
    }

    /// The MLP: (T, C) x (C, F) -> activation -> (T, F) x (F, C) -> (T, C).
    fn mlp(&self, x: ArrayView2<f32>, fc1: &Dense, fc2: &Dense) -> Array2<f32> {
        let mut a = fc1.apply(x);
        let act = self.config.activation_function;
        a.mapv_inplace(|v| act.apply(v));
        fc2.apply(a.view())
    }
}

/// One attention's heads over (T, C) queries and (S, C) keys and values, causal from `past` when
/// given: the output after `out_proj` (T, C) and the weights (H, T, S). A knocked-out head's slice
/// is zeroed before `out_proj` mixes the heads.
fn attend(
    attn: &Attention,
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    heads: usize,
    causal: Option<usize>,
    knocked: impl Fn(usize) -> bool,
) -> (Array2<f32>, Array3<f32>) {
    let (t, c, s_len) = (q.nrows(), q.ncols(), k.nrows());
    let hd = c / heads;
    let cols = |h: usize| s![.., h * hd..(h + 1) * hd];
    // (H, T, S) scores and (H, T, d) outputs: 2 H T S d multiply-adds.
    let work = 2 * heads * t * s_len * hd;
    let each = par::map(heads, work, |h| match causal {
        Some(past) => causal_attention(q.slice(cols(h)), k.slice(cols(h)), v.slice(cols(h)), past),
        None => full_attention(q.slice(cols(h)), k.slice(cols(h)), v.slice(cols(h))),
    });
    let mut y = Array2::<f32>::zeros((t, c));
    let mut weights = Array3::<f32>::zeros((heads, t, s_len));
    for (h, (o, w)) in each.into_iter().enumerate() {
        if !knocked(h) {
            y.slice_mut(cols(h)).assign(&o);
        }
        weights.index_axis_mut(Axis(0), h).assign(&w);
    }
    (attn.out_proj.apply(y.view()), weights)
}

/// Layer norm of each row with nn.LayerNorm's ε (`LayerNorm::apply`).
fn layer_norm(x: &Array2<f32>, ln: &LayerNorm) -> Array2<f32> {
    ln.apply(x.view(), LAYER_NORM_EPS)
}

/// Marian's positions (`MarianSinusoidalPositionalEmbedding`): for pos and i < ⌈C/2⌉, the angle
/// pos / 10000^(2i/C) in f64; its sine in column i, its cosine in column ⌈C/2⌉ + i (not
/// interleaved, unlike the original Transformer's), rounded to f32. (positions, C)
pub fn sinusoidal_positions(n_pos: usize, dim: usize) -> Array2<f32> {
    let half = dim.div_ceil(2);
    let mut out = Array2::<f32>::zeros((n_pos, dim));
    for pos in 0..n_pos {
        for j in 0..dim {
            // Column j of numpy's table holds angle j // 2; sines take the even columns, cosines the odd.
            let angle = pos as f64 / 10000f64.powf(2.0 * (j / 2) as f64 / dim as f64);
            if j % 2 == 0 {
                out[[pos, j / 2]] = angle.sin() as f32;
            } else {
                out[[pos, half + j / 2]] = angle.cos() as f32;
            }
        }
    }
    out
}

/// The tokens and score of one finished hypothesis of beam search.
#[derive(Debug, Clone, PartialEq)]
pub struct Hypothesis {
    /// The target's tokens from the decoder start token, ending with `</s>` (forced at the length
    /// limit), as `generate` returns them.
    pub tokens: Vec<u32>,
    /// The sum of the tokens' log-probabilities divided by (length ^ length_penalty).
    pub score: f32,
}

impl Marian {
    /// The log-probabilities of the next token (`beam::next_log_probs`).
    pub fn next_log_probs(&self, logits: ndarray::ArrayView1<f32>, len: usize, max_len: usize) -> Array1<f32> {
        super::beam::next_log_probs(&self.config, logits, len, max_len)
    }

    /// Greedy decoding: the most likely token each step, from the decoder start token, until
    /// `</s>` or `max_new` tokens. Returns the target with its start token, as `generate` does.
    pub fn greedy(&self, source: &[u32], max_new: usize) -> Result<Vec<u32>, RunError> {
        self.greedy_with(source, max_new, &Options::default())
    }

    /// `greedy` with the heads `opts.knock_out` names knocked out (nothing else of `opts` is kept).
    pub fn greedy_with(&self, source: &[u32], max_new: usize, opts: &Options) -> Result<Vec<u32>, RunError> {
        let opts = Options { knock_out: opts.knock_out.clone(), ..Default::default() };
        let encoded = self.encode(source, &opts)?;
        let mut cache = self.new_cache(&encoded);
        let mut out = vec![self.config.decoder_start_token_id];
        let max_len = 1 + max_new;
        let mut next = out[0];
        while out.len() < max_len {
            let logits = self.decode(&[next], &mut cache, &opts)?.logits;
            let lp = self.next_log_probs(logits.row(0), out.len(), max_len);
            next = crate::numerics::softmax::argmax(lp.view());
            out.push(next);
            if next == self.config.eos_token_id {
                break;
            }
        }
        Ok(out)
    }
}
