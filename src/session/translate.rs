//! A translation model answering the page: a Marian checkpoint (`crate::marian`) with its
//! tokenizer. One question, one answer: the text to translate (greedy, or beam search with
//! `beams` beams, heads knocked out if asked) gives the translation, the hypotheses the search
//! kept and each of its steps, and the three attentions of the original Transformer on the
//! result: the encoder's self-attention over the source, the decoder's masked self-attention over
//! the translation, and the cross-attention from each written token to the source, per layer and
//! head.
//!
//! The model runs on the GPU when one is attached (`attach_gpu`, after a self-test against the
//! CPU); if the GPU fails, the session moves to the CPU for good, answers there and says so once
//! (`Translation::notice`).
//!
//! The attentions are those of the pass that wrote each token: the decoder runs once more over
//! the start token and the translation but its last token (teacher forcing, which gives the
//! steps' numbers up to rounding), so row i of the decoder's matrices belongs to the i-th written
//! token.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use ndarray::Array3;
use serde::{Deserialize, Serialize};

use super::protocol::Token;
use crate::formats::LoadError;
use crate::gpu::{Gpu, GpuError};
use crate::marian::gpu::GpuMarian;
use crate::marian::model::Kind;
use crate::marian::{BeamSettings, Marian, Options, Tokenizer};
use crate::model::RunError;

/// The most beams a query may ask for.
pub const MAX_BEAMS: usize = 16;

/// Which attention of the three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttentionKind {
    Encoder,
    Decoder,
    Cross,
}

impl AttentionKind {
    fn engine(self) -> Kind {
        match self {
            AttentionKind::Encoder => Kind::Encoder,
            AttentionKind::Decoder => Kind::Decoder,
            AttentionKind::Cross => Kind::Cross,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TranslateQuery {
    pub id: u64,
    pub text: String,
    /// 1: greedy decoding; more: beam search (OPUS-MT's default is 4).
    pub beams: usize,
    /// Tokens written at most (the last forced to `</s>`); 0: twice the source's tokens and 8 more.
    /// Always within the model's window.
    pub max_new: usize,
    /// (kind, layer, head) knocked out in the search and in the attentions shown.
    #[serde(default)]
    pub knock_out: Vec<(AttentionKind, usize, usize)>,
}

/// One hypothesis as the page shows it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Hypothesis {
    pub text: String,
    /// Summed log-probability over length^penalty for a finished one, summed for a running one;
    /// none for greedy decoding's one hypothesis.
    pub score: Option<f32>,
}

/// The beams after one step of the search, best first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BeamStep {
    pub running: Vec<Hypothesis>,
    pub finished: Vec<Hypothesis>,
}

/// A translation and what the page draws of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Translation {
    pub id: u64,
    /// The source's tokens, `</s>` last.
    pub source: Vec<Token>,
    /// The tokens written, `</s>` last unless the length limit cut the translation.
    pub target: Vec<Token>,
    pub text: String,
    /// The finished hypotheses, best first (one, for greedy decoding).
    pub hypotheses: Vec<Hypothesis>,
    /// Beam search's steps (none for greedy decoding).
    pub steps: Vec<BeamStep>,
    /// Per encoder layer (heads, S, S).
    pub encoder: Vec<Array3<f32>>,
    /// Per decoder layer (heads, T, T), T the tokens written.
    pub decoder: Vec<Array3<f32>>,
    /// Per decoder layer (heads, T, S).
    pub cross: Vec<Array3<f32>>,
    /// The worker's time for the whole query in milliseconds (set by the worker; 0 natively).
    pub compute_ms: f64,
    /// Of that, the search's (greedy decoding or beam search); the rest is the pass that captures
    /// every attention. 0 without a clock.
    pub search_ms: f64,
    /// What computed it: "the CPU", or "WebGPU (adapter)".
    pub backend: String,
    /// Why it ran on the CPU after all, once, when the GPU just failed.
    pub notice: Option<String>,
}

/// A translation as it travels from the worker to the page: everything but the attentions, which
/// go beside it as one f32 buffer (transferred, not copied): every encoder layer's (H, S, S), then
/// every decoder layer's self-attention (H, T, T), then every decoder layer's cross-attention
/// (H, T, S); S the source's tokens, T the target's.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TranslationMessage {
    pub id: u64,
    pub source: Vec<Token>,
    pub target: Vec<Token>,
    pub text: String,
    pub hypotheses: Vec<Hypothesis>,
    pub steps: Vec<BeamStep>,
    pub encoder_layers: usize,
    pub encoder_heads: usize,
    pub decoder_layers: usize,
    pub decoder_heads: usize,
    #[serde(default)]
    pub compute_ms: f64,
    #[serde(default)]
    pub search_ms: f64,
    #[serde(default)]
    pub backend: String,
    #[serde(default)]
    pub notice: Option<String>,
}

impl Translation {
    /// The message and its buffer (see [`TranslationMessage`]).
    pub fn into_parts(self) -> (TranslationMessage, Vec<f32>) {
        let heads = |a: &[Array3<f32>]| a.first().map_or(0, |x| x.dim().0);
        let (encoder_heads, decoder_heads) = (heads(&self.encoder), heads(&self.decoder));
        let data: Vec<f32> = [&self.encoder, &self.decoder, &self.cross]
            .into_iter()
            .flat_map(|layers| layers.iter().flat_map(|a| a.iter().copied()))
            .collect();
        let message = TranslationMessage {
            id: self.id,
            source: self.source,
            target: self.target,
            text: self.text,
            hypotheses: self.hypotheses,
            steps: self.steps,
            encoder_layers: self.encoder.len(),
            encoder_heads,
            decoder_layers: self.decoder.len(),
            decoder_heads,
            compute_ms: self.compute_ms,
            search_ms: self.search_ms,
            backend: self.backend,
            notice: self.notice,
        };
        (message, data)
    }

    /// Reads a message and the buffer received beside it: the buffer must hold exactly what the
    /// message's sizes describe.
    pub fn from_parts(m: TranslationMessage, data: Vec<f32>) -> Result<Translation, String> {
        let (s, t) = (m.source.len(), m.target.len());
        let shapes = [
            (m.encoder_layers, (m.encoder_heads, s, s)),
            (m.decoder_layers, (m.decoder_heads, t, t)),
            (m.decoder_layers, (m.decoder_heads, t, s)),
        ];
        let want = shapes.iter().try_fold(0usize, |sum, &(n, (h, r, c))| {
            n.checked_mul(h)?.checked_mul(r)?.checked_mul(c)?.checked_add(sum)
        });
        if want != Some(data.len()) {
            return Err(format!(
                "the translation's attention buffer holds {} weights, but its message describes {}",
                data.len(),
                want.map_or("more than fit".into(), |w| w.to_string())
            ));
        }
        let mut at = 0;
        let mut kind = |(n, shape): (usize, (usize, usize, usize))| -> Vec<Array3<f32>> {
            (0..n)
                .map(|_| {
                    let len = shape.0 * shape.1 * shape.2;
                    at += len;
                    // The length was checked above.
                    Array3::from_shape_vec(shape, data[at - len..at].to_vec()).unwrap_or_else(|_| Array3::zeros(shape))
                })
                .collect()
        };
        let (encoder, decoder, cross) = (kind(shapes[0]), kind(shapes[1]), kind(shapes[2]));
        Ok(Translation {
            id: m.id,
            source: m.source,
            target: m.target,
            text: m.text,
            hypotheses: m.hypotheses,
            steps: m.steps,
            encoder,
            decoder,
            cross,
            compute_ms: m.compute_ms,
            search_ms: m.search_ms,
            backend: m.backend,
            notice: m.notice,
        })
    }

    /// The weights of one attention: (layer, head), or with `head` `None` the heads' mean; rows
    /// are queries (source tokens for the encoder, target tokens otherwise), columns keys.
    pub fn weights(&self, kind: AttentionKind, layer: usize, head: Option<usize>) -> Option<ndarray::Array2<f32>> {
        let layers = match kind {
            AttentionKind::Encoder => &self.encoder,
            AttentionKind::Decoder => &self.decoder,
            AttentionKind::Cross => &self.cross,
        };
        let a = layers.get(layer)?;
        match head {
            Some(h) if h < a.dim().0 => Some(a.index_axis(ndarray::Axis(0), h).to_owned()),
            Some(_) => None,
            None => a.mean_axis(ndarray::Axis(0)),
        }
    }
}

/// What the page learns of a loaded translation model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TranslatorInfo {
    pub name: String,
    pub encoder_layers: usize,
    pub decoder_layers: usize,
    pub encoder_heads: usize,
    pub decoder_heads: usize,
    pub d_model: usize,
    pub params: usize,
    /// The longest source (and translation) in tokens, `</s>` included.
    pub max_tokens: usize,
    /// Where it runs: "WebGPU (adapter)", or "the CPU" and why (set by the worker).
    #[serde(default)]
    pub backend: String,
}

pub struct TranslationSession {
    /// The CPU model: always present, the GPU's fallback.
    pub model: Arc<Marian>,
    pub tokenizer: Tokenizer,
    /// The same model on the GPU, when attached.
    gpu: RefCell<Option<Rc<GpuMarian>>>,
    /// Why the GPU was dropped, until the next translation says so.
    notice: RefCell<Option<String>>,
}

/// What a query asks of the search: the source's ids, the settings and the knock-outs.
struct Plan {
    source: Vec<u32>,
    set: BeamSettings,
    opts: Options,
}

/// The search's result: the target written (with its start token), the hypotheses and the steps.
type Searched = (Vec<u32>, Vec<crate::marian::Hypothesis>, Vec<crate::marian::Step>);

/// The attentions of the pass that wrote each token: encoder, decoder, cross, per layer.
type Attentions = (Vec<Array3<f32>>, Vec<Array3<f32>>, Vec<Array3<f32>>);

/// The largest difference of a logit between the GPU and the CPU that the self-test accepts,
/// relative to the largest logit (f32 sums in another order differ by a few ulps).
const SELF_TEST_TOL: f32 = 1e-4;

impl TranslationSession {
    /// A session on the checkpoint's files: `config.json`, `model.safetensors`, `source.spm`,
    /// `target.spm` and `vocab.json`; a tokenizer that does not fit the model is refused.
    pub fn load(
        config_json: &str,
        safetensors: &[u8],
        (source_spm, target_spm, vocab_json): (&[u8], &[u8], &str),
    ) -> Result<Self, LoadError> {
        let model = Marian::load(config_json, safetensors)?;
        let tokenizer = Tokenizer::from_files(source_spm, target_spm, vocab_json)
            .map_err(|e| LoadError::Tokenizer(e.to_string()))?;
        TranslationSession::with_model(model, tokenizer)
    }

    pub fn with_model(model: Marian, tokenizer: Tokenizer) -> Result<Self, LoadError> {
        tokenizer.check_vocab(model.config.vocab_size).map_err(|e| LoadError::Tokenizer(e.to_string()))?;
        Ok(TranslationSession {
            model: Arc::new(model),
            tokenizer,
            gpu: RefCell::new(None),
            notice: RefCell::new(None),
        })
    }

    /// What the page is told once it loaded.
    pub fn info(&self, name: &str) -> TranslatorInfo {
        let c = &self.model.config;
        TranslatorInfo {
            name: name.into(),
            encoder_layers: c.encoder_layers,
            decoder_layers: c.decoder_layers,
            encoder_heads: c.encoder_attention_heads,
            decoder_heads: c.decoder_attention_heads,
            d_model: c.d_model,
            params: c.n_params(),
            max_tokens: c.max_position_embeddings,
            backend: "the CPU".into(),
        }
    }

    /// Uploads the model to `gpu` and runs a self-test: a short source and target's logits on the
    /// GPU must match the CPU's. Only then do translations run there.
    pub async fn attach_gpu(&self, gpu: Rc<Gpu>) -> Result<(), GpuError> {
        let g = GpuMarian::upload(gpu, self.model.clone()).await?;
        let cfg = &self.model.config;
        let n = cfg.max_position_embeddings.min(6);
        let ids: Vec<u32> = (1..n as u32).map(|i| (i * 97) % cfg.vocab_size as u32).collect();
        let source = [&ids[..], &[cfg.eos_token_id]].concat();
        let target = [&[cfg.decoder_start_token_id], &ids[..]].concat();
        let opts = Options { all_logits: true, ..Default::default() };
        let test = |e: crate::model::RunError| GpuError::SelfTest(e.to_string());
        let encoded = self.model.encode(&source, &opts).map_err(test)?;
        let cpu = self.model.decode(&target, &mut self.model.new_cache(&encoded), &opts).map_err(test)?.logits;
        let (_, cache) = g.encode(&source, &opts, target.len()).await?;
        let out = g.decode(&target, &mut [cache], &opts).await?.logits;
        if out.dim() != cpu.dim() {
            return Err(GpuError::SelfTest(format!("logits of shape {:?}, not {:?}", out.dim(), cpu.dim())));
        }
        let (cpu, out) = (cpu.as_standard_layout(), out.as_standard_layout());
        super::serve::logits_agree(cpu.as_slice().unwrap_or(&[]), out.as_slice().unwrap_or(&[]), SELF_TEST_TOL)?;
        *self.gpu.borrow_mut() = Some(Rc::new(g));
        Ok(())
    }

    /// Runs on the CPU from now on.
    pub fn detach_gpu(&self) {
        *self.gpu.borrow_mut() = None;
    }

    /// Makes the next GPU run fail (a real validation error), to exercise the fallback.
    pub fn inject_gpu_fault(&self) {
        if let Some(g) = self.gpu.borrow().as_ref() {
            g.fail_next();
        }
    }

    /// The adapter's name while the model runs on the GPU.
    pub fn gpu_name(&self) -> Option<String> {
        self.gpu.borrow().as_ref().map(|g| g.gpu.name.clone())
    }

    /// What the query asks of the search.
    fn plan(&self, q: &TranslateQuery) -> Plan {
        let source = self.tokenizer.encode_source(&q.text);
        let knock_out = q.knock_out.iter().map(|&(k, l, h)| (k.engine(), l, h)).collect();
        // The window holds the start token and what is written; more beams than MAX_BEAMS are not
        // asked for (each multiplies the work of a step).
        let asked = if q.max_new == 0 { 2 * source.len() + 8 } else { q.max_new };
        let max_new = asked.clamp(1, self.model.config.max_position_embeddings.saturating_sub(1).max(1));
        let set = BeamSettings { beams: q.beams.clamp(1, MAX_BEAMS), max_new, length_penalty: 1.0 };
        Plan { source, set, opts: Options { knock_out, ..Default::default() } }
    }

    /// The inputs of the pass that shows the attentions: the start token and the translation but
    /// its last token, one row per token written (`written` holds at least one after the start).
    fn rows(written: &[u32]) -> Result<&[u32], RunError> {
        written.get(..written.len().saturating_sub(1)).filter(|t| !t.is_empty()).ok_or(RunError::Empty)
    }

    /// Translates `q.text` on the CPU.
    pub fn translate(&self, q: &TranslateQuery) -> Result<Translation, RunError> {
        self.translate_timed(q, &|| 0.0)
    }

    /// `translate`, timing the search with `clock` (milliseconds).
    fn translate_timed(&self, q: &TranslateQuery, clock: &dyn Fn() -> f64) -> Result<Translation, RunError> {
        let (m, plan, t0) = (&self.model, self.plan(q), clock());
        let searched = if plan.set.beams == 1 {
            (m.greedy_with(&plan.source, plan.set.max_new, &plan.opts)?, Vec::new(), Vec::new())
        } else {
            let (hyps, steps) = m.beam_search_with(&plan.source, plan.set, &plan.opts)?;
            (hyps.first().map(|h| h.tokens.clone()).ok_or(RunError::Empty)?, hyps, steps)
        };
        let search_ms = clock() - t0;
        let opts = Options { attentions: true, ..plan.opts.clone() };
        let encoded = m.encode(&plan.source, &opts)?;
        let decoded = m.decode(Self::rows(&searched.0)?, &mut m.new_cache(&encoded), &opts)?;
        let attentions = (encoded.attentions, decoded.self_attentions, decoded.cross_attentions);
        let t = self.assemble(q, &plan, searched, attentions, "the CPU".into());
        Ok(Translation { search_ms, ..t })
    }

    /// Translates `q.text` on the GPU.
    async fn translate_on(
        &self,
        g: &GpuMarian,
        q: &TranslateQuery,
        clock: &dyn Fn() -> f64,
    ) -> Result<Translation, GpuError> {
        let (plan, t0) = (self.plan(q), clock());
        let searched = if plan.set.beams == 1 {
            (g.greedy_with(&plan.source, plan.set.max_new, &plan.opts).await?, Vec::new(), Vec::new())
        } else {
            let (hyps, steps) = g.beam_search_with(&plan.source, plan.set, &plan.opts).await?;
            let best = hyps.first().map(|h| h.tokens.clone()).ok_or(GpuError::Failed("no hypothesis".into()))?;
            (best, hyps, steps)
        };
        let search_ms = clock() - t0;
        let opts = Options { attentions: true, ..plan.opts.clone() };
        let rows = Self::rows(&searched.0).map_err(|e| GpuError::Failed(e.to_string()))?;
        let (encoded, cache) = g.encode(&plan.source, &opts, rows.len()).await?;
        let decoded = g.decode(rows, &mut [cache], &opts).await?;
        let attentions = (encoded.attentions, decoded.self_attentions, decoded.cross_attentions);
        let t = self.assemble(q, &plan, searched, attentions, format!("WebGPU ({})", g.gpu.name));
        Ok(Translation { search_ms, ..t })
    }

    /// Translates `q.text` where the model runs: on the GPU when attached, and if it fails there,
    /// on the CPU from now on, with a notice. `clock` (milliseconds) times the search.
    pub async fn answer(&self, q: &TranslateQuery, clock: &dyn Fn() -> f64) -> Result<Translation, RunError> {
        // A source the model cannot take is the reader's to fix, not the GPU's failure: refused first.
        let cfg = &self.model.config;
        RunError::check_input(&self.plan(q).source, 0, cfg.vocab_size, cfg.max_position_embeddings)?;
        let gpu = self.gpu.borrow().clone();
        if let Some(g) = gpu {
            match self.translate_on(&g, q, clock).await {
                Ok(t) => return Ok(t),
                Err(e) => {
                    self.detach_gpu();
                    *self.notice.borrow_mut() = Some(super::gpu_failed(&e));
                }
            }
        }
        // The notice goes with the first answer after the failure (kept if this one is refused).
        let notice = self.notice.borrow_mut().take();
        match self.translate_timed(q, clock) {
            Ok(t) => Ok(Translation { notice, ..t }),
            Err(e) => {
                *self.notice.borrow_mut() = notice;
                Err(e)
            }
        }
    }

    fn assemble(
        &self,
        q: &TranslateQuery,
        plan: &Plan,
        searched: Searched,
        at: Attentions,
        backend: String,
    ) -> Translation {
        let (written, hyps, steps) = searched;
        let text = |tokens: &[u32]| self.tokenizer.decode(tokens);
        let view = |h: &crate::marian::Hypothesis| Hypothesis { text: text(&h.tokens), score: Some(h.score) };
        // Greedy decoding's one hypothesis has no score.
        let hypotheses = if hyps.is_empty() {
            vec![Hypothesis { text: text(&written), score: None }]
        } else {
            hyps.iter().map(view).collect()
        };
        let steps = steps
            .iter()
            .map(|s| BeamStep {
                running: s.running.iter().map(view).collect(),
                finished: s.finished.iter().map(view).collect(),
            })
            .collect();
        let token = |&id: &u32| Token { id, text: self.tokenizer.token_text(id) };
        let (encoder, decoder, cross) = at;
        Translation {
            id: q.id,
            source: plan.source.iter().map(token).collect(),
            target: written.iter().skip(1).map(token).collect(),
            text: text(&written),
            hypotheses,
            steps,
            encoder,
            decoder,
            cross,
            compute_ms: 0.0,
            search_ms: 0.0,
            backend,
            notice: None,
        }
    }
}
