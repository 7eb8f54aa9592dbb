//! What the page asks of a loaded model, and the answers, DOM-free: the Web Worker is a thin
//! shell around a `Session`, and the same code runs in the native tests.
//!
//! The messages are JSON (`Request`, `Reply`); attention weights travel beside the JSON as one
//! flat f32 buffer, (layers sent, H, T, T) in row-major order.

use serde::{Deserialize, Serialize};

use super::manifest::Manifest;
use super::tokenizer::Tokenizer;
use super::{Capture, Config, ForwardOptions, Gpt2, KvCache, LoadError, RunError, Sampling};
use crate::numerics::rng::Rng;

/// Above this many attention weights (L·H·T²) only the selected layer is sent in full, with
/// every layer's weights shrunk to at most THUMBNAIL × THUMBNAIL per head for the model view.
pub const ALL_LAYERS_LIMIT: usize = 4 << 20;
pub const THUMBNAIL: usize = 64;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// Fetch `config.json` and `model.safetensors` from `base` (a folder URL ending in `/`),
    /// check them against `expect` when given, and keep them in the browser's Cache Storage
    /// when `cache` is set. With `only_cached`, load only if cached, else reply `NotCached`.
    Load {
        name: String,
        base: String,
        #[serde(default)]
        expect: Option<Manifest>,
        #[serde(default)]
        cache: bool,
        #[serde(default)]
        only_cached: bool,
    },
    /// A model from local files: `config` is config.json's text; the safetensors bytes travel
    /// beside the JSON as an ArrayBuffer.
    LoadBytes { name: String, config: String },
    Analyze(Query),
    /// Append `steps` sampled tokens to the prompt, one reply per token.
    Generate { query: Query, steps: usize },
    /// Stop the generation in progress after the current token.
    Stop,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Query {
    pub id: u64,
    pub prompt: String,
    /// The layer whose weights are sent when not all of them fit.
    pub layer: usize,
    pub ablate: Vec<(usize, usize)>,
    pub temperature: f32,
    pub top_k: usize,
    pub top_p: f32,
    pub seed: u32,
    /// How many next-token candidates to report.
    pub top: usize,
}

impl Query {
    pub fn sampling(&self) -> Sampling {
        Sampling { temperature: self.temperature, top_k: self.top_k, top_p: self.top_p }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Token {
    pub id: u32,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Candidate {
    pub id: u32,
    pub text: String,
    /// Probability under the sampling settings (temperature, top-k, top-p; τ = 1 when greedy).
    pub prob: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Analysis {
    pub id: u64,
    pub tokens: Vec<Token>,
    /// Tokens cut from the front of the prompt to fit the window.
    pub dropped: usize,
    pub n_layer: usize,
    pub n_head: usize,
    /// The layers whose weights are in the buffer, in order.
    pub layers: Vec<usize>,
    /// When not every layer fits: the side of the thumbnails that follow them in the buffer,
    /// (L, H, thumb_rows, thumb_cols), for the model view. 0 when absent.
    #[serde(default)]
    pub thumb_rows: usize,
    #[serde(default)]
    pub thumb_cols: usize,
    /// Next-token candidates with the ablation applied.
    pub next: Vec<Candidate>,
    /// The same without ablation (present only when heads are ablated).
    pub baseline: Option<Vec<Candidate>>,
    /// Time the worker spent on this analysis (set by the worker; for the benchmark).
    #[serde(default)]
    pub compute_ms: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// The worker is listening (messages sent before this would be lost).
    Ready,
    /// `phase`: "download", "cache" (reading the stored copy), "verify" or "parse".
    Progress { phase: String, loaded: u64, total: Option<u64> },
    /// `source`: "network", "network-stored" (and kept in Cache Storage), "network-unstored"
    /// (the browser refused to keep it), "cache" or "file".
    Loaded { name: String, source: String, n_layer: usize, n_head: usize, n_embd: usize, n_positions: usize, params: usize },
    /// The model is not in the browser's cache (answer to `only_cached`).
    NotCached { name: String, size: Option<u64> },
    Analysis(Analysis),
    /// One sampled token, and the whole continuation so far decoded as text (a token may end
    /// inside a UTF-8 character; the text is exact once the character is complete).
    Generated { id: u64, token: Token, text: String, done: bool },
    /// A generation ended early because the page asked (`Stop`).
    Stopped { id: u64 },
    Error { id: Option<u64>, message: String },
}

pub struct Session {
    pub model: Gpt2,
    tok: Tokenizer,
}

impl Session {
    pub fn new(config_json: &str, safetensors: &[u8]) -> Result<Self, LoadError> {
        Ok(Session { model: Gpt2::load(config_json, safetensors)?, tok: Tokenizer::gpt2() })
    }

    pub fn config(&self) -> &Config {
        &self.model.config
    }

    pub fn loaded(&self, name: &str, source: &str) -> Reply {
        let c = self.config();
        Reply::Loaded { name: name.into(), source: source.into(), n_layer: c.n_layer, n_head: c.n_head, n_embd: c.n_embd, n_positions: c.n_positions, params: c.n_params() }
    }

    /// The prompt's tokens, cut from the front to the model's window: (kept, dropped).
    pub fn tokens(&self, prompt: &str) -> (Vec<u32>, usize) {
        let mut ids = self.tok.encode(prompt);
        if ids.is_empty() {
            ids.push(super::tokenizer::END_OF_TEXT); // an empty prompt starts from <|endoftext|>
        }
        let window = self.config().n_positions;
        let dropped = ids.len().saturating_sub(window);
        ids.drain(..dropped);
        (ids, dropped)
    }

    fn token(&self, id: u32) -> Token {
        Token { id, text: self.tok.token_text(id) }
    }

    /// The most likely next tokens under the sampling settings. Greedy decoding (temperature
    /// 0) always takes the first; the chart then shows the model's own distribution (τ = 1).
    fn candidates(&self, logits: ndarray::ArrayView1<f32>, q: &Query) -> Vec<Candidate> {
        let mut s = q.sampling();
        if !(s.temperature > 0.0) {
            s.temperature = 1.0;
        }
        let mut dist = super::sample::distribution(logits, &s);
        dist.truncate(q.top.max(1));
        dist.into_iter().map(|(id, prob)| Candidate { id, text: self.tok.token_text(id), prob }).collect()
    }

    /// Runs the prompt once with the ablation (and once without, if any heads are ablated) and
    /// returns the tokens, the next-token candidates and the attention weights (flat).
    pub fn analyze(&self, q: &Query) -> Result<(Analysis, Vec<f32>), RunError> {
        let cfg = self.config();
        let (ids, dropped) = self.tokens(&q.prompt);
        let t = ids.len();
        let all = cfg.n_layer * cfg.n_head * t * t <= ALL_LAYERS_LIMIT;
        let layer = q.layer.min(cfg.n_layer - 1);
        let capture = if all { Capture::All } else { Capture::Layer(layer) };
        let thumbnails = (!all).then_some(THUMBNAIL);
        let opts = ForwardOptions { capture, ablate: q.ablate.clone(), thumbnails, ..Default::default() };
        let out = self.model.forward(&ids, &mut self.model.new_cache(), &opts)?;
        let next = self.candidates(out.logits.row(0), q);
        let baseline = if q.ablate.is_empty() {
            None
        } else {
            let plain = self.model.forward(&ids, &mut self.model.new_cache(), &ForwardOptions::default())?;
            Some(self.candidates(plain.logits.row(0), q))
        };
        let mut layers = Vec::new();
        let mut weights = Vec::new();
        for (l, a) in out.attentions.iter().enumerate() {
            if let Some(a) = a {
                layers.push(l);
                weights.extend(a.iter());
            }
        }
        let (mut thumb_rows, mut thumb_cols) = (0, 0);
        for th in &out.thumbnails {
            (thumb_rows, thumb_cols) = (th.dim().1, th.dim().2);
            weights.extend(th.iter());
        }
        let tokens = ids.iter().map(|&id| self.token(id)).collect();
        let analysis = Analysis { id: q.id, tokens, dropped, n_layer: cfg.n_layer, n_head: cfg.n_head, layers, thumb_rows, thumb_cols, next, baseline, compute_ms: 0.0 };
        Ok((analysis, weights))
    }

    /// Starts sampling after the prompt: runs the prompt once into a KV cache.
    pub fn start_generation(&self, q: &Query) -> Result<Generation, RunError> {
        let (ids, _) = self.tokens(&q.prompt);
        let opts = ForwardOptions { ablate: q.ablate.clone(), ..Default::default() };
        let mut cache = KvCache::new(self.config());
        let logits = self.model.forward(&ids, &mut cache, &opts)?.logits;
        Ok(Generation { ids, cache, logits, opts, sampling: q.sampling(), rng: Rng::new(q.seed as u64), continuation: Vec::new() })
    }

    /// Samples one more token and runs it through the model (one row of work with the cache):
    /// returns the token and the whole continuation so far as text. When the window is full
    /// the oldest tokens are dropped and the cache rebuilt.
    pub fn next_token(&self, g: &mut Generation) -> Result<(Token, String), RunError> {
        let window = self.config().n_positions;
        let next = super::sample::sample(g.logits.row(0), &g.sampling, &mut g.rng);
        g.continuation.push(next);
        g.ids.push(next);
        g.logits = if g.cache.len() < window {
            self.model.forward(&[next], &mut g.cache, &g.opts)?.logits
        } else {
            g.ids.drain(..g.ids.len() - window + window / 4); // slide: keep the last three quarters
            g.cache.clear();
            self.model.forward(&g.ids, &mut g.cache, &g.opts)?.logits
        };
        Ok((self.token(next), self.tok.decode(&g.continuation)))
    }

    /// Samples `steps` tokens after the prompt, calling `emit` with each token and the
    /// continuation so far as text.
    pub fn generate(&self, q: &Query, steps: usize, mut emit: impl FnMut(Token, String)) -> Result<(), RunError> {
        let mut g = self.start_generation(q)?;
        for _ in 0..steps {
            let (token, text) = self.next_token(&mut g)?;
            emit(token, text);
        }
        Ok(())
    }
}

/// A generation in progress: the tokens so far, their KV cache and the next-token logits.
pub struct Generation {
    ids: Vec<u32>,
    cache: KvCache,
    logits: ndarray::Array2<f32>,
    opts: ForwardOptions,
    sampling: Sampling,
    rng: Rng,
    continuation: Vec<u32>,
}
