//! A loaded Llama-family model answering the page's questions, with the same replies as GPT-2's
//! `Session` (the views draw either family unchanged): the prompt's tokens from the checkpoint's
//! `tokenizer.json`, attention per query head, next-token probabilities, knock-outs, sampling
//! with the KV cache (one K and V per KV head), on the CPU or on the GPU (`llama::engine`).

use std::cell::RefCell;
use std::rc::Rc;

use super::protocol::{Analysis, Attention, CacheInfo, Family, HeadQkv, Query, Reply, Source, Token};
use super::session::{all_layers_fit, candidates, cut_to_window, self_test, THUMBNAIL};
use super::{LoadError, RunError};
use crate::gpu::{Gpu, GpuError, Precision};
use crate::llama::engine::{Cache, Engine, EngineError};
use crate::llama::gpu::GpuLlama;
use crate::llama::ops::{rms_norm, Rope};
use crate::llama::{Capture, Config, ForwardOptions, ForwardOutput, Llama, Tokenizer};
use crate::numerics::attention::max_pool_into;
use crate::numerics::flash::causal_attention;
use ndarray::{s, Array2, Array3, Axis};

/// The token an empty prompt starts from, when the tokenizer has it (SmolLM2's first id).
pub const START_TOKENS: [&str; 3] = ["<|endoftext|>", "<|begin_of_text|>", "<s>"];

pub struct LlamaSession {
    /// The CPU model: always present, the fallback of the GPU.
    pub model: Rc<Llama>,
    tok: Tokenizer,
    gpu: RefCell<Option<Rc<GpuLlama>>>,
    notice: RefCell<Option<String>>,
    f16_change: std::cell::Cell<Option<f32>>,
}

impl LlamaSession {
    /// Loads `config.json`, `model.safetensors` and `tokenizer.json`; a tokenizer whose ids do
    /// not fit the model's vocabulary is refused.
    pub fn new(config_json: &str, safetensors: &[u8], tokenizer_json: &str) -> Result<Self, LoadError> {
        let model = Llama::load(config_json, safetensors)?;
        let tok = Tokenizer::from_json(tokenizer_json).map_err(|e| LoadError::Tokenizer(e.to_string()))?;
        tok.check_vocab(model.config.vocab_size).map_err(|e| LoadError::Tokenizer(e.to_string()))?;
        Ok(LlamaSession {
            model: Rc::new(model),
            tok,
            gpu: RefCell::new(None),
            notice: RefCell::new(None),
            f16_change: std::cell::Cell::new(None),
        })
    }

    pub fn config(&self) -> &Config {
        &self.model.config
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tok
    }

    pub fn loaded(&self, name: &str, source: Source) -> Reply {
        let c = self.config();
        Reply::Loaded {
            name: name.into(),
            source,
            family: Family::Llama,
            n_layer: c.num_hidden_layers,
            n_head: c.num_attention_heads,
            n_kv_head: Some(c.num_key_value_heads),
            n_embd: c.hidden_size,
            n_positions: c.max_position_embeddings,
            params: c.n_params(),
            char_vocab: None,
            load: 0,
        }
    }

    /// Uploads the model to `gpu` (f16 weights where asked, or where lossless) and runs the
    /// same self-test as GPT-2's: a short prompt's logits must match the CPU's.
    pub async fn attach_gpu_with(&self, gpu: Rc<Gpu>, f16: bool) -> Result<(), GpuError> {
        let lossless = GpuLlama::lossless_precision(&gpu, &self.model);
        let precision = if f16 && gpu.f16 { Precision::F16 } else { lossless };
        let rounded = precision != lossless;
        let g = Rc::new(GpuLlama::upload_with(gpu, &self.model, precision).await?);
        let cfg = self.config();
        let ids: Vec<u32> =
            (0..8u32.min(cfg.max_position_embeddings as u32)).map(|i| (i * 97) % cfg.vocab_size as u32).collect();
        let opts = ForwardOptions::default();
        let cpu = self
            .model
            .forward(&ids, &mut self.model.new_cache(), &opts)
            .map_err(|e| GpuError::SelfTest(e.to_string()))?;
        let out = g.forward(&ids, &mut g.new_cache(ids.len()), &opts).await?;
        let err = self_test(&cpu.logits, &out.logits, rounded)?;
        self.f16_change.set(rounded.then_some(err));
        *self.gpu.borrow_mut() = Some(g);
        Ok(())
    }

    pub fn gpu_f16_change(&self) -> Option<f32> {
        self.gpu.borrow().as_ref().and(self.f16_change.get())
    }

    pub fn gpu_precision(&self) -> Option<Precision> {
        self.gpu.borrow().as_ref().map(|g| g.precision())
    }

    pub fn detach_gpu(&self) {
        *self.gpu.borrow_mut() = None;
    }

    pub fn inject_gpu_fault(&self) {
        if let Some(g) = self.gpu.borrow().as_ref() {
            g.fail_next();
        }
    }

    pub fn engine(&self) -> Engine {
        match self.gpu.borrow().as_ref() {
            Some(g) => Engine::Gpu(g.clone()),
            None => Engine::Cpu(self.model.clone()),
        }
    }

    pub fn take_notice(&self) -> Option<String> {
        self.notice.borrow_mut().take()
    }

    /// One forward pass on the current engine; a GPU failure moves the session to the CPU for
    /// good (with a notice) and the CPU answers, its cache rebuilt from `history`.
    async fn run(
        &self,
        history: &[u32],
        tokens: &[u32],
        cache: &mut Cache,
        opts: &ForwardOptions,
    ) -> Result<ForwardOutput, RunError> {
        match self.engine().forward(&self.model, tokens, cache, opts).await {
            Ok(out) => Ok(out),
            Err(EngineError::Run(e)) => Err(e),
            Err(EngineError::Gpu(e)) => {
                self.detach_gpu();
                let full = e.to_string();
                crate::gpu::log(&full);
                *self.notice.borrow_mut() = Some(format!(
                    "WebGPU failed ({}); the model now runs on the CPU",
                    full.lines().next().unwrap_or_default().trim()
                ));
                let mut cpu_cache = self.model.new_cache();
                if !history.is_empty() {
                    let replay = ForwardOptions { ablate: opts.ablate.clone(), ..Default::default() };
                    self.model.forward(history, &mut cpu_cache, &replay)?;
                }
                let out = self.model.forward(tokens, &mut cpu_cache, opts)?;
                *cache = Cache::Cpu(cpu_cache);
                Ok(out)
            }
        }
    }

    /// The prompt's tokens in the tokenizer's template, the text cut from the front to fit the
    /// model's window (the template's begin-of-text token stays first): (kept, dropped). An empty
    /// prompt starts from the tokenizer's start-of-text token.
    pub fn tokens(&self, prompt: &str) -> Result<(Vec<u32>, usize), RunError> {
        let window = self.config().max_position_embeddings;
        let template = self.tok.template();
        let mut text = self.tok.encode_text(prompt);
        let specials = template.apply_single(&[]).len();
        let mut dropped = cut_to_window(&mut text, window.saturating_sub(specials).max(1));
        let mut ids = template.apply_single(&text);
        if ids.is_empty() {
            let start = START_TOKENS.iter().find_map(|t| self.tok.added_id(t)).ok_or(RunError::Empty)?;
            ids.push(start);
        }
        dropped += cut_to_window(&mut ids, window);
        Ok((ids, dropped))
    }

    fn token(&self, id: u32) -> Token {
        Token { id, text: self.tok.token_text(id) }
    }

    /// As GPT-2's `Session::analyze`: one matrix of weights per query head (H, T, T), every layer
    /// when they fit, else the selected one in full and every layer as a thumbnail.
    pub async fn analyze(&self, q: &Query) -> Result<(Analysis, Attention), RunError> {
        let cfg = self.config();
        let (l_n, h_n) = (cfg.num_hidden_layers, cfg.num_attention_heads);
        let (ids, dropped) = self.tokens(&q.prompt)?;
        let t = ids.len();
        let layer = q.layer.min(l_n - 1);
        let all = all_layers_fit(l_n, h_n, t);
        let capture = if all { Capture::All } else { Capture::Layer(layer) };
        // Not all layers fit: every layer's weights pooled for the model view. The CPU's pass
        // pools each head's weights as it computes them; the GPU's keeps the residual stream,
        // from which `thumbnails` recomputes each layer's weights one head at a time.
        let cpu = matches!(self.engine(), Engine::Cpu(_));
        let (thumbnails, hidden_states) = (if all || !cpu { None } else { Some(THUMBNAIL) }, !all && !cpu);
        let opts =
            ForwardOptions { capture, ablate: q.ablate.clone(), hidden_states, thumbnails, ..Default::default() };
        let mut cache = self.engine().new_cache(t);
        let out = self.run(&[], &ids, &mut cache, &opts).await?;
        let text = |id| self.tok.token_text(id);
        let next = candidates(out.logits.row(0), q, text);
        let baseline = if q.ablate.is_empty() {
            None
        } else {
            let plain = self.run(&[], &ids, &mut self.engine().new_cache(t), &ForwardOptions::default()).await?;
            Some(candidates(plain.logits.row(0), q, text))
        };
        let thumbs = if all || !out.thumbnails.is_empty() {
            out.thumbnails
        } else {
            self.thumbnails(&out.hidden_states, THUMBNAIL)
        };
        let attention = Attention::encode(l_n, h_n, t, &out.attentions, &thumbs);
        let analysis = Analysis {
            id: q.id,
            tokens: ids.iter().map(|&id| self.token(id)).collect(),
            dropped,
            n_layer: l_n,
            n_head: h_n,
            attention: attention.layout().clone(),
            next,
            baseline,
            compute_ms: 0.0,
            cache: CacheInfo {
                layers: l_n,
                kv_heads: cfg.num_key_value_heads,
                head_size: cfg.head_dim,
                positions: cache.len(),
                bytes_per_value: std::mem::size_of::<f32>(),
                bytes: cache.bytes() as u64,
            },
        };
        Ok((analysis, attention))
    }

    /// Every layer's attention weights max-pooled to at most `n` × `n` per query head (H, rows,
    /// cols), from the residual stream entering each layer (`hidden`, as the forward pass kept
    /// it with `hidden_states`, after any knock-outs of earlier layers; a knocked-out head's own
    /// weights are unchanged, as in the captured ones): the layer's queries and keys are computed
    /// again (RMSNorm, projections, RoPE from position 0) and each head's (T, T) weights exist
    /// only while they are pooled, so a long prompt never holds L · H · T² weights at once. The
    /// GPU's forward pass keeps no weights of the layers it did not capture and cannot pool them,
    /// hence this second, CPU-side pass (the CPU's pass pools them itself, `thumbnails` in its
    /// options); `tests/model_session.rs` checks it against the captured weights.
    pub fn thumbnails(&self, hidden: &[Array2<f32>], n: usize) -> Vec<Array3<f32>> {
        let cfg = self.config();
        let (d, n_head) = (cfg.head_dim, cfg.num_attention_heads);
        let t = hidden.first().map_or(0, |h| h.nrows());
        let rope = Rope::new(d, cfg.rope_theta, 0, t);
        self.model
            .weights
            .layers
            .iter()
            .zip(hidden)
            .map(|(layer, x)| {
                let a = &layer.self_attn;
                let h = rms_norm(x.view(), &layer.input_layernorm, cfg.rms_norm_eps);
                // (T, C) x (C, H·D) -> (T, H·D); (T, C) x (C, KV·D) -> (T, KV·D) for k and v
                let (mut q, mut k, v) = (a.q_proj.apply(h.view()), a.k_proj.apply(h.view()), a.v_proj.apply(h.view()));
                rope.apply(q.view_mut(), d);
                rope.apply(k.view_mut(), d);
                let mut th = Array3::<f32>::zeros((n_head, t.min(n), t.min(n)));
                for head in 0..n_head {
                    let (g, cols) = (cfg.kv_head(head), s![.., head * d..(head + 1) * d]);
                    let kv_cols = s![.., g * d..(g + 1) * d];
                    // (T, D) against (T, D): weights (T, T), pooled and dropped
                    let (_, w) = causal_attention(q.slice(cols), k.slice(kv_cols), v.slice(kv_cols), 0);
                    max_pool_into(w.view(), th.index_axis_mut(Axis(0), head));
                }
                th
            })
            .collect()
    }

    /// One query head's rotated queries and its KV head's keys and values, on the CPU.
    pub fn head_qkv(&self, id: u64, prompt: &str, layer: usize, head: usize) -> Result<HeadQkv, RunError> {
        let (ids, _) = self.tokens(prompt)?;
        let cfg = self.config();
        let [q, k, v] = self.model.head_qkv(&ids, layer, head)?;
        let flat = |a: ndarray::Array2<f32>| a.into_iter().collect();
        Ok(HeadQkv {
            id,
            tokens: ids.iter().map(|&t| self.token(t)).collect(),
            layer: layer.min(cfg.num_hidden_layers - 1),
            head: head.min(cfg.num_attention_heads - 1),
            d: cfg.head_dim,
            q: flat(q),
            k: flat(k),
            v: flat(v),
        })
    }

    /// The forward pass as generation runs it: the tokens already cached, the new ones, the
    /// cache and the options, to the last position's logits.
    fn logits(
        &self,
    ) -> impl AsyncFnMut(&[u32], &[u32], &mut Cache, &ForwardOptions) -> Result<Array2<f32>, RunError> + '_ {
        async |past, new, cache, opts| Ok(self.run(past, new, cache, opts).await?.logits)
    }

    /// Starts sampling after the prompt: runs the prompt once into a KV cache.
    pub async fn start_generation(&self, q: &Query) -> Result<LlamaGeneration, RunError> {
        let (ids, _) = self.tokens(&q.prompt)?;
        let opts = ForwardOptions { ablate: q.ablate.clone(), ..Default::default() };
        let cache = self.engine().new_cache(self.config().max_position_embeddings);
        LlamaGeneration::start(ids, cache, opts, q, self.logits()).await
    }

    /// Samples one more token and runs it through the model with the cache; when the window is
    /// full the oldest quarter is dropped and the cache rebuilt (RoPE then renumbers positions).
    pub async fn next_token(&self, g: &mut LlamaGeneration) -> Result<(Token, String), RunError> {
        let next = g.step(self.config().max_position_embeddings, self.logits()).await?;
        Ok((self.token(next), self.tok.decode(g.continuation())))
    }
}

/// A Llama-family generation in progress.
pub type LlamaGeneration = super::generation::Generation<ForwardOptions>;
