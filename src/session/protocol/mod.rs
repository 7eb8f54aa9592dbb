//! The compute worker's wire protocol, DOM-free: what the page asks (`Request`) and what the
//! worker answers (`Reply`), the same types on both ends and in the native tests.
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
//! - `Train`: the run goes on (or starts afresh when its config differs or it is past `until`)
//!   in slices of about 50 ms, with a `TrainProgress` per slice and a `TrainSnapshot` (its
//!   attention buffer beside it) at step 0, every `Trainer::snapshot_every` steps and where it
//!   stops; then `TrainStopped` (paused, reached `until`, or diverged), or `Error` with its id
//!   for a refused config. `TrainPause` and `TrainReset` stop it; `TrainExport`:
//!   `TrainCheckpoint` with the safetensors bytes beside it;
//! - a panic anywhere: `Crashed`, and nothing more from that worker.

use ndarray::{Array3, ArrayView2};
use serde::{Deserialize, Serialize};

use super::manifest::Manifest;
use crate::model::sample::Sampling;
use crate::train::{HeadSnapshot, StepStats, TrainConfig};

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
    /// Stop the generation in progress after the current token.
    Stop,
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
            Request::AttentionBench { id, .. }
            | Request::HeadQkv { id, .. }
            | Request::Train { id, .. }
            | Request::TrainExport { id } => Some(*id),
            Request::Load { .. }
            | Request::LoadBytes { .. }
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
            Request::AttentionBench { id, .. }
            | Request::HeadQkv { id, .. }
            | Request::Train { id, .. }
            | Request::TrainExport { id } => *id = new,
            Request::Load { .. }
            | Request::LoadBytes { .. }
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
    /// What the attention buffer beside this message holds.
    pub attention: AttentionLayout,
    /// Next-token candidates with the ablation applied.
    pub next: Vec<Candidate>,
    /// The same without ablation (present only when heads are ablated).
    pub baseline: Option<Vec<Candidate>>,
    /// Time the worker spent on this analysis (set by the worker; for the benchmark).
    #[serde(default)]
    pub compute_ms: f64,
    /// The KV cache the prompt filled, as the engine stored it (the KV-cache demo sets it
    /// against the formula).
    #[serde(default)]
    pub cache: CacheInfo,
}

/// A model's KV cache after a prompt: its shape and the bytes its keys and values take, counted
/// from what the engine stored (not from the formula).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct CacheInfo {
    pub layers: usize,
    /// Key-value heads (GPT-2: one per query head; grouped-query attention: fewer).
    pub kv_heads: usize,
    pub head_size: usize,
    /// Positions cached: the prompt's tokens.
    pub positions: usize,
    /// Bytes per stored value (the engines keep f32 keys and values: 4).
    pub bytes_per_value: usize,
    /// What the cached keys and values take, measured.
    pub bytes: u64,
}

/// One head's Q, K and V for a prompt: (T, d) each, row-major.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HeadQkv {
    pub id: u64,
    pub tokens: Vec<Token>,
    pub layer: usize,
    pub head: usize,
    pub d: usize,
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
}

/// Why a run stopped.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TrainStop {
    /// The page asked (`TrainPause`, `TrainReset`, or a new `Train`).
    Paused,
    /// `until` steps are done.
    Reached,
    /// The loss or a gradient stopped being finite: the message says where; the weights are
    /// those of the last good step.
    Diverged { message: String },
}

/// The reader's choice of backend (part of the demo's URL state).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendChoice {
    /// WebGPU when an adapter exists and passes the self-test, else the CPU.
    #[default]
    Auto,
    Webgpu,
    /// WebGPU with the weights of the matrix products stored as f16 even where that rounds
    /// them: half the memory; the backend line says how far the logits moved.
    WebgpuF16,
    Cpu,
}

impl BackendChoice {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(BackendChoice::Auto),
            "webgpu" => Some(BackendChoice::Webgpu),
            "webgpu-f16" => Some(BackendChoice::WebgpuF16),
            "cpu" => Some(BackendChoice::Cpu),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            BackendChoice::Auto => "auto",
            BackendChoice::Webgpu => "webgpu",
            BackendChoice::WebgpuF16 => "webgpu-f16",
            BackendChoice::Cpu => "cpu",
        }
    }
}

/// What runs the model now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    Webgpu,
    Cpu,
}

impl Backend {
    /// The wire name ("webgpu", "cpu"), which the page also shows in `data-backend`.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Webgpu => "webgpu",
            Backend::Cpu => "cpu",
        }
    }
}

/// What loading a model is doing, in the order the worker goes through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Reading a file from the network (`loaded` of `total` bytes).
    Download,
    /// Reading the copy kept in the browser's Cache Storage.
    Cache,
    /// Checking a downloaded file's SHA-256 against the pinned manifest.
    Verify,
    /// Parsing the checkpoint into a model.
    Parse,
    /// Uploading the model to the GPU and testing it against the CPU.
    Gpu,
}

impl Phase {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Download => "download",
            Phase::Cache => "cache",
            Phase::Verify => "verify",
            Phase::Parse => "parse",
            Phase::Gpu => "gpu",
        }
    }

    /// Whether `loaded` counts bytes of a known `total` (a progress bar), rather than a step.
    pub fn counts_bytes(self) -> bool {
        matches!(self, Phase::Download | Phase::Cache)
    }
}

/// A model's architecture, read from its `config.json` (`model_type`, `architectures`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// GPT-2: learned positions, one key and value per head, LayerNorm, GELU.
    #[default]
    Gpt2,
    /// Llama's: RoPE, grouped-query attention, RMSNorm, SwiGLU (Llama 2 and 3, SmolLM2, …).
    Llama,
}

impl Family {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Gpt2 => "gpt2",
            Family::Llama => "llama",
        }
    }

    /// How the page names it ("GPT-2", "Llama family").
    pub fn label(self) -> &'static str {
        match self {
            Family::Gpt2 => "GPT-2",
            Family::Llama => "Llama family",
        }
    }
}

/// Where a loaded model came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Downloaded, without asking the browser to keep it.
    Network,
    /// Downloaded and kept in Cache Storage for the next visit.
    NetworkStored,
    /// Downloaded, but the browser refused to keep it (quota, private browsing).
    NetworkUnstored,
    /// Read from the copy in Cache Storage.
    Cache,
    /// From local files the reader picked.
    File,
}

impl Source {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Network => "network",
            Source::NetworkStored => "network-stored",
            Source::NetworkUnstored => "network-unstored",
            Source::Cache => "cache",
            Source::File => "file",
        }
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
    /// A generation ended early because the page asked (`Stop`).
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
        row: crate::gpu::bench::AttentionRow,
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
            Reply::Generated { id, .. }
            | Reply::Stopped { id }
            | Reply::AttentionBench { id, .. }
            | Reply::TrainProgress { id, .. }
            | Reply::TrainSnapshot { id, .. }
            | Reply::TrainStopped { id, .. }
            | Reply::TrainCheckpoint { id, .. } => Some(*id),
            Reply::Error { id, .. } => *id,
            Reply::Ready
            | Reply::Progress { .. }
            | Reply::Loaded { .. }
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

/// What an attention buffer holds, in order: the full (H, T, T) weights of each layer in
/// `layers` (ascending), then, when `thumb` is `(rows, cols)`, every layer's weights max-pooled
/// to (H, rows, cols) for the model view (long prompts, whose layers do not all fit).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttentionLayout {
    pub n_layer: usize,
    pub n_head: usize,
    /// Tokens: each full matrix is T × T (rows queries, columns keys).
    pub t: usize,
    pub layers: Vec<usize>,
    #[serde(default)]
    pub thumb: Option<(usize, usize)>,
}

impl AttentionLayout {
    /// How many floats the buffer holds, or `None` when the sizes overflow (a corrupt message).
    pub fn len(&self) -> Option<usize> {
        let full = self.layers.len().checked_mul(self.n_head)?.checked_mul(self.t.checked_mul(self.t)?)?;
        let thumbs = match self.thumb {
            Some((r, c)) => self.n_layer.checked_mul(self.n_head)?.checked_mul(r.checked_mul(c)?)?,
            None => 0,
        };
        full.checked_add(thumbs)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }
}

/// The attention weights of one analysis, packed into one f32 buffer (transferred, not copied,
/// from the worker to the page), with the layout that says where each head's matrix lies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attention {
    layout: AttentionLayout,
    data: Vec<f32>,
}

impl Attention {
    /// Packs a forward pass's captured weights: `attentions` per layer (H, T, T) where captured,
    /// `thumbnails` (H, rows, cols) for every layer or none.
    pub fn encode(
        n_layer: usize,
        n_head: usize,
        t: usize,
        attentions: &[Option<Array3<f32>>],
        thumbs: &[Array3<f32>],
    ) -> Attention {
        let mut layers = Vec::new();
        let mut data = Vec::new();
        for (l, a) in attentions.iter().enumerate() {
            if let Some(a) = a {
                debug_assert_eq!(a.dim(), (n_head, t, t), "layer {l}'s weights");
                layers.push(l);
                data.extend(a.iter());
            }
        }
        let thumb = thumbs.first().map(|th| (th.dim().1, th.dim().2));
        debug_assert!(thumbs.is_empty() || thumbs.len() == n_layer, "a thumbnail per layer");
        for th in thumbs {
            debug_assert_eq!(Some((th.dim().1, th.dim().2)), thumb, "thumbnails of one size");
            data.extend(th.iter());
        }
        Attention { layout: AttentionLayout { n_layer, n_head, t, layers, thumb }, data }
    }

    /// Reads a buffer received beside an analysis: its length and layers must fit the layout.
    pub fn decode(layout: AttentionLayout, data: Vec<f32>) -> Result<Attention, String> {
        let want = layout.len().ok_or("the attention layout's sizes overflow")?;
        if data.len() != want {
            return Err(format!("the attention buffer holds {} weights, but its layout describes {want}", data.len()));
        }
        if !layout.layers.windows(2).all(|w| w[0] < w[1]) || layout.layers.iter().any(|&l| l >= layout.n_layer) {
            return Err(format!(
                "the attention buffer names layers {:?} of a {}-layer model",
                layout.layers, layout.n_layer
            ));
        }
        Ok(Attention { layout, data })
    }

    pub fn layout(&self) -> &AttentionLayout {
        &self.layout
    }

    /// Every weight, in buffer order.
    pub fn data(&self) -> &[f32] {
        &self.data
    }

    /// The parts that travel: the layout goes in the JSON, the buffer beside it.
    pub fn into_parts(self) -> (AttentionLayout, Vec<f32>) {
        (self.layout, self.data)
    }

    /// The full (T, T) weights of (layer, head), if that layer was sent.
    pub fn full(&self, layer: usize, head: usize) -> Option<ArrayView2<'_, f32>> {
        let AttentionLayout { n_head, t, .. } = self.layout;
        let li = self.layout.layers.iter().position(|&l| l == layer)?;
        if head >= n_head {
            return None;
        }
        self.view((li * n_head + head) * t * t, t, t)
    }

    /// Weight from query i to key j in (layer, head), if that layer was sent.
    pub fn weight(&self, layer: usize, head: usize, i: usize, j: usize) -> Option<f32> {
        self.full(layer, head)?.get((i, j)).copied()
    }

    /// The max-pooled thumbnail of (layer, head), when the buffer has thumbnails.
    pub fn thumbnail(&self, layer: usize, head: usize) -> Option<ArrayView2<'_, f32>> {
        let AttentionLayout { n_layer, n_head, t, .. } = self.layout;
        let (rows, cols) = self.layout.thumb?;
        if layer >= n_layer || head >= n_head {
            return None;
        }
        let start = self.layout.layers.len() * n_head * t * t + (layer * n_head + head) * rows * cols;
        self.view(start, rows, cols)
    }

    /// (layer, head) for the model view: the full matrix when sent, else its thumbnail.
    pub fn head_matrix(&self, layer: usize, head: usize) -> Option<ArrayView2<'_, f32>> {
        self.full(layer, head).or_else(|| self.thumbnail(layer, head))
    }

    fn view(&self, start: usize, rows: usize, cols: usize) -> Option<ArrayView2<'_, f32>> {
        ArrayView2::from_shape((rows, cols), self.data.get(start..start + rows * cols)?).ok()
    }
}
