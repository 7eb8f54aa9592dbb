//! The messages about models: a prompt and its settings (`Query`), the analysis the page draws
//! (`Analysis`, with its attention buffer, `Attention`), tokens and next-token candidates, and
//! how loading goes (`Phase`, `Source`, `Family`, the backend).

use ndarray::{Array3, ArrayView2};
use serde::{Deserialize, Serialize};

use crate::model::sample::Sampling;

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

/// A model's family, read from its `config.json` (`model_type`, `architectures`): one variant per
/// line of the registry of families (`families!` in `session::any`), its wire name the variant's
/// in snake_case, its label `ModelFamily::LABEL`.
pub use crate::session::any::Family;

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
