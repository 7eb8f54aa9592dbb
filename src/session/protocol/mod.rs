//! The compute worker's wire protocol, DOM-free: what the page asks (`Request`) and what the
//! worker answers (`Reply`), the same types on both ends and in the native tests. The two enums
//! are the table of contents; their payloads live by concern: `models` (loading, analysis,
//! generation), `train` (the training lab), `probes` (one head's Q, K, V; the benchmark).
//!
//! Every message is `{json, data?}`: `json` is the message serialised with serde (tagged by
//! `type`), and `data`, when present, travels beside it as a transferred buffer: the local
//! model file's bytes with `Request::LoadBytes`, the packed attention weights ([`Attention`])
//! with `Reply::Analysis`.
//!
//! The conversation:
//! - the worker starts with `Ready` (messages sent before it would be lost);
//! - `Load` / `LoadBytes`: `Progress` in phase order (`Cache` or `Download` then `Verify` per
//!   file, `Parse`, `Gpu` unless the CPU was chosen), then `Backend` and `Loaded`; or
//!   `NotCached` (with `only_cached`), or `Error { id: None }`. Each of these carries the
//!   request's `load` number: a later load supersedes an earlier one, whose model the worker
//!   drops instead of installing, and whose replies the page ignores (a download that ends late
//!   never replaces the model chosen after it);
//! - `Backend`: `Backend` (also sent on its own, with a `notice`, when a GPU failure moved the
//!   model to the CPU);
//! - `Analyze`: `Analysis` with the attention buffer; `Generate`: one `Generated` per token
//!   (`done` on the last) or `Stopped` after `Stop`; `AttentionBench`, `HeadQkv`: their reply;
//!   each of these, when it fails, `Error` with its id;
//! - `LoadTranslator`: as `Load` (`Progress` per file, then `TranslatorLoaded`, `NotCached` or
//!   `Error { id: None }`, with the load's number); `Translate`: `Translation`
//!   with its attention buffer, or `Error` with its id. A translation model runs beside the loaded
//!   model of `Load` (each is kept until replaced), on the backend its load asked for (`backend`;
//!   a GPU failure moves it to the CPU, and the next `Translation` says so);
//! - `LoadVision`: as `LoadTranslator`, answered by `VisionLoaded`; `Classify` (the picture's
//!   RGBA bytes beside it): `Vision` with the picture seen and the attentions beside it, or
//!   `Error` with its id;
//! - `Lens`: `Lens`; `Heads`: `HeadScores`; `Patch`: a `PatchProgress` every few runs, then
//!   `Patching`, or `Stopped` after `Stop`; each, when it fails, `Error` with its id;
//! - `Train`: the run goes on (or starts afresh when its config differs or it is past `until`)
//!   in slices of about 50 ms, with a `TrainProgress` per slice and a `TrainSnapshot` (its
//!   attention buffer beside it) at step 0, every `Trainer::snapshot_every` steps and where it
//!   stops; then `TrainStopped` (paused, reached `until`, or diverged), or `Error` with its id
//!   for a refused config. A fresh run of the settings this browser kept a run of (its last one,
//!   saved as it trains) is restored first when the kept run has not passed `until` (or `until`
//!   is 0, the untrained preview): `TrainRestored`, then its steps in one `TrainProgress` and its
//!   snapshots. `TrainPause` and `TrainReset` stop it; `TrainExport`:
//!   `TrainCheckpoint` with the safetensors bytes beside it;
//! - a panic anywhere: `Crashed`, and nothing more from that worker.

use serde::{Deserialize, Serialize};

use super::manifest::Manifest;

mod inside;
mod models;
mod probes;
mod train;
mod translation;
mod vision;

pub use inside::*;
pub use models::*;
pub use probes::*;
pub use train::*;
pub use translation::*;
pub use vision::*;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// Fetch `config.json` and `model.safetensors` from `base` (a folder URL ending in `/`), and
    /// `tokenizer.json` when `config.json` names a Llama-family model,
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
        /// The page's number for this load: its replies carry it, and a load the page asked for
        /// later supersedes it (the worker drops its result instead of installing it).
        #[serde(default)]
        load: u64,
    },
    /// A model from local files: `config` is config.json's text; the safetensors bytes travel
    /// beside the JSON as an ArrayBuffer.
    LoadBytes {
        name: String,
        config: String,
        /// `tokenizer.json`'s text, for a Llama-family model (GPT-2 needs none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokenizer: Option<String>,
        #[serde(default)]
        load: u64,
    },
    /// A translation model (Marian) from `base`: `config.json`, `model.safetensors`, `source.spm`,
    /// `target.spm` and `vocab.json`, kept in Cache Storage with `cache` (and loaded only if kept
    /// there with `only_cached`, else `NotCached`), as `Load` does.
    LoadTranslator {
        name: String,
        base: String,
        #[serde(default)]
        cache: bool,
        #[serde(default)]
        only_cached: bool,
        #[serde(default)]
        load: u64,
        /// Where the translation model runs; `fault` makes its next GPU run fail (tests).
        #[serde(default)]
        backend: BackendChoice,
        #[serde(default)]
        fault: bool,
    },
    /// Translate a text with the translation model.
    Translate(TranslateQuery),
    /// A vision model (ViT or DeiT) from `base`: `config.json`, `model.safetensors` and
    /// `preprocessor_config.json`, cached and chosen a backend as `LoadTranslator`.
    LoadVision {
        name: String,
        base: String,
        #[serde(default)]
        cache: bool,
        #[serde(default)]
        only_cached: bool,
        #[serde(default)]
        load: u64,
        #[serde(default)]
        backend: BackendChoice,
        #[serde(default)]
        fault: bool,
    },
    /// Classify a picture with the vision model; its RGBA bytes travel beside the query.
    Classify(ClassifyQuery),
    /// Which backend runs the model (kept across loads). `fault` makes the next GPU run fail
    /// on purpose, to show the fallback (tests only).
    Backend {
        choice: BackendChoice,
        #[serde(default)]
        fault: bool,
    },
    Analyze(Query),
    /// Append `steps` sampled tokens to the prompt, one reply per token.
    Generate {
        query: Query,
        steps: usize,
    },
    /// Stop the generation in progress after the current token (or the patching sweep after
    /// the current run).
    Stop,
    /// The logit lens on a prompt (the loaded model).
    Lens(LensQuery),
    /// An activation-patching sweep of the loaded model.
    Patch(PatchQuery),
    /// The head detectors' scores for every head of the loaded model.
    Heads(HeadsQuery),
    /// Time one head of causal attention at size n × n (head size d) on the CPU, naive and
    /// tiled, and on the GPU (`gpu::bench`): the efficient-attention chapter's benchmark.
    AttentionBench {
        id: u64,
        n: usize,
        d: usize,
    },
    /// One head's queries, keys and values for a prompt (CPU), for the Linformer demo.
    HeadQkv {
        id: u64,
        prompt: String,
        layer: usize,
        head: usize,
    },
    /// Train the lab's model with `config` until `until` steps are done.
    Train {
        id: u64,
        config: TrainConfig,
        until: usize,
    },
    /// Stop the run in progress (it can go on with another `Train`).
    TrainPause,
    /// Stop and forget the run.
    TrainReset,
    /// The trained model as a GPT-2 checkpoint.
    TrainExport {
        id: u64,
    },
}

impl Request {
    /// The id its replies carry, for the requests that have one.
    pub fn id(&self) -> Option<u64> {
        match self {
            Request::Analyze(q) | Request::Generate { query: q, .. } => Some(q.id),
            Request::Translate(q) => Some(q.id),
            Request::Classify(q) => Some(q.id),
            Request::Lens(q) => Some(q.id),
            Request::Patch(q) => Some(q.id),
            Request::Heads(q) => Some(q.id),
            Request::AttentionBench { id, .. }
            | Request::HeadQkv { id, .. }
            | Request::Train { id, .. }
            | Request::TrainExport { id } => Some(*id),
            Request::Load { .. }
            | Request::LoadBytes { .. }
            | Request::LoadTranslator { .. }
            | Request::LoadVision { .. }
            | Request::Backend { .. }
            | Request::Stop
            | Request::TrainPause
            | Request::TrainReset => None,
        }
    }

    /// Gives the request the id `id` (when it carries one).
    pub fn set_id(&mut self, new: u64) {
        match self {
            Request::Analyze(q) | Request::Generate { query: q, .. } => q.id = new,
            Request::Translate(q) => q.id = new,
            Request::Classify(q) => q.id = new,
            Request::Lens(q) => q.id = new,
            Request::Patch(q) => q.id = new,
            Request::Heads(q) => q.id = new,
            Request::AttentionBench { id, .. }
            | Request::HeadQkv { id, .. }
            | Request::Train { id, .. }
            | Request::TrainExport { id } => *id = new,
            Request::Load { .. }
            | Request::LoadBytes { .. }
            | Request::LoadTranslator { .. }
            | Request::LoadVision { .. }
            | Request::Backend { .. }
            | Request::Stop
            | Request::TrainPause
            | Request::TrainReset => {}
        }
    }

    pub fn encode(&self) -> Result<String, String> {
        serde_json::to_string(self).map_err(|e| format!("the page could not write a request: {e}"))
    }

    pub fn decode(json: &str) -> Result<Request, String> {
        serde_json::from_str(json).map_err(|e| format!("the worker could not read a request: {e}"))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// The worker is listening (messages sent before this would be lost).
    Ready,
    /// Loading a model: `loaded` of `total` bytes in the byte-counting phases, 0 and `None` in
    /// the others.
    Progress {
        phase: Phase,
        loaded: u64,
        total: Option<u64>,
        /// The load it reports on (`Request::Load::load`).
        #[serde(default)]
        load: u64,
    },
    Loaded {
        name: String,
        #[serde(default)]
        load: u64,
        source: Source,
        /// The model's family (GPT-2 when absent: replies from before Llama-family models).
        #[serde(default)]
        family: Family,
        n_layer: usize,
        n_head: usize,
        /// Key and value heads, when fewer than the query heads may be (Llama family).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n_kv_head: Option<usize>,
        n_embd: usize,
        n_positions: usize,
        params: usize,
        /// The model's character vocabulary (`Config::char_vocab`); absent for GPT-2's BPE.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        char_vocab: Option<String>,
    },
    /// A translation model loaded (answer to `LoadTranslator`).
    TranslatorLoaded {
        info: TranslatorInfo,
        source: Source,
        #[serde(default)]
        load: u64,
    },
    /// A translation; its attention weights travel beside it (see `TranslationMessage`).
    Translation(TranslationMessage),
    /// A vision model loaded (answer to `LoadVision`).
    VisionLoaded {
        info: VisionInfo,
        source: Source,
        #[serde(default)]
        load: u64,
    },
    /// A picture's prediction; the picture seen and the attentions travel beside it (see
    /// `VisionMessage`).
    Vision(VisionMessage),
    /// The model is not in the browser's cache (answer to `only_cached`).
    NotCached {
        name: String,
        size: Option<u64>,
        #[serde(default)]
        load: u64,
    },
    /// The analysis; its attention weights travel beside it (see `Analysis::attention`).
    Analysis(Analysis),
    /// One sampled token, and the whole continuation so far decoded as text (a token may end
    /// inside a UTF-8 character; the text is exact once the character is complete).
    Generated {
        id: u64,
        token: Token,
        text: String,
        done: bool,
        /// The worker's time for this token in milliseconds: sampling it and its pass with the KV
        /// cache (for the first, the prompt's pass too), not the waits between tokens, in which
        /// the worker answers the page's other requests (a Stop).
        #[serde(default)]
        ms: f64,
    },
    /// The logit lens's readings.
    Lens(Lens),
    /// A patching sweep's runs done so far, of `total`.
    PatchProgress {
        id: u64,
        done: usize,
        total: usize,
    },
    /// A patching sweep's results.
    Patching(Patching),
    /// The head detectors' scores.
    Heads(HeadScores),
    /// A generation (or a patching sweep) ended early because the page asked (`Stop`).
    Stopped {
        id: u64,
    },
    /// A request failed: `id` names it, `None` for a load (or a message the worker could not
    /// read).
    Error {
        id: Option<u64>,
        message: String,
        /// The load that failed (with `id: None`); 0 when the error is about no load in
        /// particular (a message the worker could not read).
        #[serde(default)]
        load: u64,
    },
    /// What runs the model now: `detail` the adapter's name or why the CPU; `notice` set when a
    /// GPU failure just moved the model to the CPU.
    Backend {
        backend: Backend,
        detail: String,
        notice: Option<String>,
    },
    AttentionBench {
        id: u64,
        row: AttentionRow,
    },
    HeadQkv(HeadQkv),
    /// The steps done in one slice of a run, and the slice's speed.
    TrainProgress {
        id: u64,
        steps: Vec<StepStats>,
        steps_per_s: f64,
    },
    /// The heads after `snapshot.step` steps; their attention (L, H, T, T) travels beside it.
    TrainSnapshot {
        id: u64,
        snapshot: HeadSnapshot,
    },
    /// The run was restored from this browser's copy, at `step`: its steps and snapshots follow.
    TrainRestored {
        id: u64,
        step: usize,
    },
    /// The run stopped after `step` steps.
    TrainStopped {
        id: u64,
        step: usize,
        reason: TrainStop,
    },
    /// `config.json`; the safetensors bytes travel beside it.
    TrainCheckpoint {
        id: u64,
        config_json: String,
    },
    /// The worker panicked: what it held is lost and it answers nothing more (the page starts
    /// a fresh one).
    Crashed {
        message: String,
    },
}

impl Reply {
    /// The id of the request it answers, for the replies that carry one.
    pub fn id(&self) -> Option<u64> {
        match self {
            Reply::Analysis(a) => Some(a.id),
            Reply::HeadQkv(h) => Some(h.id),
            Reply::Translation(t) => Some(t.id),
            Reply::Vision(v) => Some(v.id),
            Reply::Lens(l) => Some(l.id),
            Reply::Patching(p) => Some(p.id),
            Reply::Heads(h) => Some(h.id),
            Reply::Generated { id, .. }
            | Reply::Stopped { id }
            | Reply::PatchProgress { id, .. }
            | Reply::AttentionBench { id, .. }
            | Reply::TrainProgress { id, .. }
            | Reply::TrainSnapshot { id, .. }
            | Reply::TrainStopped { id, .. }
            | Reply::TrainRestored { id, .. }
            | Reply::TrainCheckpoint { id, .. } => Some(*id),
            Reply::Error { id, .. } => *id,
            Reply::Ready
            | Reply::Progress { .. }
            | Reply::Loaded { .. }
            | Reply::TranslatorLoaded { .. }
            | Reply::VisionLoaded { .. }
            | Reply::NotCached { .. }
            | Reply::Backend { .. }
            | Reply::Crashed { .. } => None,
        }
    }

    /// The load a reply about loading reports on (0 for the others, and for replies of a worker
    /// that predates load numbers).
    pub fn load(&self) -> u64 {
        match self {
            Reply::Progress { load, .. }
            | Reply::Loaded { load, .. }
            | Reply::TranslatorLoaded { load, .. }
            | Reply::VisionLoaded { load, .. }
            | Reply::NotCached { load, .. }
            | Reply::Error { load, .. } => *load,
            _ => 0,
        }
    }

    /// The JSON text; a reply that cannot be written becomes an `Error` that can.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            let message = format!("the worker could not write its reply: {e}");
            serde_json::to_string(&Reply::Error { id: self.id(), message, load: self.load() }).unwrap_or_default()
        })
    }

    pub fn decode(json: &str) -> Result<Reply, String> {
        serde_json::from_str(json).map_err(|e| format!("unreadable reply from the worker: {e}"))
    }
}
