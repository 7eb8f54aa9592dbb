//! Demo `gpt2`: a GPT-2 model running in the reader's browser (chapter "gpt2-live"). The
//! numbers come from the model in a Web Worker (`session::Session`); `data` here returns the query
//! the page sends, and the view adds the worker's answer to "Download data".

use super::{spec, to_json, Demo, DemoSpec};
use crate::session::protocol::{Analysis, Attention, BackendChoice, Candidate, Query};
#[cfg(not(target_arch = "wasm32"))]
use crate::session::Gpt2Session as Session;
use crate::numerics::format::Signed;

pub mod compare;
pub mod continuation;
pub mod status;
pub mod trained;

pub use compare::ModelB;

crate::options! {
    /// Which model runs: bundled ones, GPT-2 small or SmolLM2-135M from the hub, a checkpoint of
    /// the reader's (either family: config.json says which), or the model the training lab handed
    /// over (kept in this browser only: see `trained`). New options come last: a link names an
    /// option by its key, and old links keep their meaning.
    pub enum Model {
        Stories = ("stories", "Pet stories (4 layers, bundled)"),
        Induction = ("induction", "Induction (2 layers, bundled)"),
        Gpt2 = ("gpt2", "GPT-2 small, 124M (download 548 MB)"),
        Url = ("url", "Checkpoint from a URL (GPT-2 or Llama family)"),
        File = ("file", "Checkpoint from local files (GPT-2 or Llama family)"),
        Trained = ("trained", "Your trained model (from the lab)"),
        Smollm2 = ("smollm2", "SmolLM2-135M (Llama family, download ~270 MB)"),
        StoriesLlama = ("stories-llama", "Pet stories, Llama family (bundled)"),
    }
}

impl Model {
    /// The model a worker reply names (the name the page sent), if it is one of the options.
    pub fn named(name: &str) -> Option<Model> {
        Model::ALL.iter().copied().find(|m| m.key() == name)
    }
}

crate::options! {
    /// Where the model runs (`session::protocol::BackendChoice`).
    pub enum RunsOn {
        Auto = ("auto", "Automatic: WebGPU if this browser has it"),
        Webgpu = ("webgpu", "WebGPU (GPU)"),
        WebgpuF16 = ("webgpu-f16", "WebGPU, f16 weights (half the memory, logits move slightly)"),
        Cpu = ("cpu", "CPU"),
    }
}

impl RunsOn {
    pub fn choice(self) -> BackendChoice {
        match self {
            RunsOn::Auto => BackendChoice::Auto,
            RunsOn::Webgpu => BackendChoice::Webgpu,
            RunsOn::WebgpuF16 => BackendChoice::WebgpuF16,
            RunsOn::Cpu => BackendChoice::Cpu,
        }
    }
}

/// The prompts the demo opens on: the same story with a different animal, stopped where what
/// comes next depends on which animal "She" is (the chapter quotes the effect; tests/engines/gpt2_bundled.rs
/// checks it).
pub const DEFAULT_PROMPT: &str = "My cat is small, cute, and fluffy. She likes";
pub const DEFAULT_COMPARE: &str = "My dog is small, cute, and fluffy. She likes";

/// What a model opens on: the prompts, head and query token the chapter describes for it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Featured {
    pub prompt: &'static str,
    pub compare: &'static str,
    /// (layer, head, query token); `None`: no head is featured, the selection is left alone.
    pub head: Option<(i64, i64, i64)>,
}

/// The Induction model's prompt: letters typed twice (the chapter's example), read by its
/// induction head from the last letter.
pub const INDUCTION_PROMPT: &str = "Q F K B Z Q F K B Z";

impl Model {
    /// What this model opens on, when it has a featured head and prompts (tests/engines/gpt2_bundled.rs
    /// checks each bundled model's against its card). The story prompts' query token is " She".
    pub fn featured(self) -> Featured {
        let stories = |head| Featured { prompt: DEFAULT_PROMPT, compare: DEFAULT_COMPARE, head };
        match self {
            // The head that links "She" to the animal (the cards' `she_cat_head`).
            Model::Stories => stories(Some((0, 3, 10))),
            Model::StoriesLlama => stories(Some((0, 1, 10))),
            // GPT-2 small's own "She" head for this sentence (the chapter quotes it).
            Model::Gpt2 => stories(Some((5, 10, 10))),
            Model::Smollm2 | Model::Url | Model::File => stories(None),
            // The induction head (the card's `induction_head`), from the last letter.
            Model::Induction => Featured { prompt: INDUCTION_PROMPT, compare: "", head: Some((1, 3, 9)) },
            // The lab hands its model over with a link of its own (`trained::link`).
            Model::Trained => Featured { prompt: DEFAULT_PROMPT, compare: DEFAULT_COMPARE, head: None },
        }
    }
}

/// The model switches from `from` to `p.model`: each of the prompt, the second prompt and the
/// selected head that is still `from`'s featured one becomes the new model's; what the reader
/// changed stays (a knock-out too: the reader typed it).
pub fn switch_featured(p: &mut Params, from: Model) {
    let (old, new) = (from.featured(), p.model.featured());
    let own_prompt = p.prompt != old.prompt;
    if !own_prompt {
        p.prompt = new.prompt.to_string();
    }
    if p.compare == old.compare {
        p.compare = new.compare.to_string();
    }
    // A head picked in a model without a featured one means nothing in another model's shape.
    // The query token belongs to the prompt: it moves only with a featured prompt.
    let untouched = old.head.is_none_or(|(l, h, _)| (l, h) == (p.layer, p.head));
    if let (true, Some((l, h, t))) = (untouched, new.head) {
        (p.layer, p.head) = (l, h);
        if !own_prompt {
            p.token = t;
        }
    }
}

/// Next-token rows shown in the main chart, and in each side of the comparison.
pub const SHOWN: usize = 10;
pub const SHOWN_COMPARE: usize = 5;
/// Candidates asked of the worker: more than are shown, so that a token in one chart (intact or
/// knocked out) can be given its probability in the other too.
pub const CANDIDATES: usize = 100;

crate::params! {
    pub struct Params {
        model: Model = Param::choice("model", "Model", Model::OPTIONS, 0),
        /// the checkpoint folder for `Model::Gpt2` or `Model::Smollm2` (empty: the hub) or `Model::Url`
        base: String = Param::text("base", "Checkpoint folder URL (for a hub model or a URL)", 500, ""),
        /// a second model run on the same prompt beside the first ("none": one model)
        model_b: ModelB = Param::choice("model-b", "Compare with a second model", ModelB::OPTIONS, 0),
        backend: RunsOn = Param::choice("backend", "Runs on", RunsOn::OPTIONS, 0),
        prompt: String = Param::text("prompt", "Prompt", 4000, DEFAULT_PROMPT),
        /// a second prompt shown side by side (empty: none)
        compare: String = Param::text("compare", "Second prompt to compare (optional)", 4000, DEFAULT_COMPARE),
        /// the selected layer, head and query token (the view moves them into the loaded model and prompt)
        layer: i64 = Param::int("layer", "Layer", 0, 47, 0),
        head: i64 = Param::int("head", "Head", 0, 24, 3),
        token: i64 = Param::int("token", "Query token", 0, 1023, 10),
        /// knocked-out heads as typed ("1.2 3.0"): see `parse_ablate`
        ablate: String = Param::text("ablate", "Knocked-out heads (layer.head …)", 200, ""),
        temperature: f64 = Param::float("temperature", "Temperature (0 = greedy)", 0.0, 2.0, 0.05, 1.0),
        top_k: usize = Param::int("top-k", "Top-k (0 = all)", 0, 100, 0),
        top_p: f64 = Param::float("top-p", "Top-p", 0.05, 1.0, 0.05, 1.0),
        seed: u32 = Param::seed("seed", "Sampling seed", 1),
    }
}

impl Params {
    /// The knocked-out heads that parse (the rest get a notice in the view).
    pub fn knocked_out(&self) -> Vec<(usize, usize)> {
        parse_ablate(&self.ablate).0
    }
    /// Where the chosen model's files come from (see [`model_base`]).
    pub fn source(&self) -> Option<String> {
        model_base(self.model.key(), &self.base)
    }
}

pub struct Gpt2Demo;

impl Demo for Gpt2Demo {
    const ID: &'static str = "gpt2";
    const TITLE: &'static str = "A real model in your browser";
    const CAPTION: &'static str = "A GPT-2 or Llama-family model runs in a Web Worker on your machine. Pick a layer \
        and head in the model view, click a token to see where it looks, knock out heads and watch the next-token \
        probabilities move, or generate.";
    type Params = Params;
    /// A link leaves out the chosen model's own prompts and head: a link naming only the model
    /// opens on them, and one made on that model repeats only what the reader changed.
    fn baseline(p: &Params) -> Params {
        // The model itself is a key like any other: its baseline is the default one.
        let mut b = <Params as crate::state::Params>::defaults();
        let f = p.model.featured();
        (b.prompt, b.compare) = (f.prompt.to_string(), f.compare.to_string());
        if let Some((layer, head, token)) = f.head {
            (b.layer, b.head, b.token) = (layer, head, token);
        }
        b
    }
    const MAIN: &'static [&'static str] = &["model", "prompt", "layer", "head", "token"];
    /// The query the page sends; the worker computes the answer.
    type Output = Query;

    fn compute(p: &Params) -> Query {
        query(p, 0)
    }

    fn data(p: &Params) -> Result<serde_json::Value, String> {
        let mut out = serde_json::json!({ "model": p.model.key(), "query": to_json(&query(p, 0))? });
        out["note"] = "The model's outputs are computed in the browser; the page's Download data adds them.".into();
        Ok(out)
    }

    /// A bundled model's real answer: the worker's session on the model files, on the CPU.
    /// (GPT-2 small and the reader's own checkpoints are fetched by the page only.)
    // Natively only: the page fetches and asks the worker; the engine stays out of the page.
    #[cfg(not(target_arch = "wasm32"))]
    fn load(p: &Params, read: &mut super::Reader) -> Option<Result<serde_json::Value, String>> {
        if !matches!(p.model, Model::Stories | Model::Induction) {
            return None;
        }
        let mut run = || {
            let dir = format!("models/{}", p.model.key());
            let config = String::from_utf8(read(&format!("{dir}/config.json"))?).map_err(|e| e.to_string())?;
            let session =
                Session::new(&config, &read(&format!("{dir}/model.safetensors"))?).map_err(|e| e.to_string())?;
            let (analysis, attention) = super::now(session.analyze(&query(p, 0)))?.map_err(|e| e.to_string())?;
            let (layer, head) = (p.layer.max(0) as usize, p.head.max(0) as usize);
            Ok(download(&analysis, &attention, layer, head))
        };
        Some(run())
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<Gpt2Demo>();

/// What "Download data" adds once the model has answered: the analysis, and the selected head's
/// (T, T) weights (NaN where the worker did not send that layer).
pub fn download(a: &Analysis, w: &Attention, layer: usize, head: usize) -> serde_json::Value {
    let t = a.tokens.len();
    let heat: Vec<Vec<f32>> =
        (0..t).map(|i| (0..t).map(|j| w.weight(layer, head, i, j).unwrap_or(f32::NAN)).collect()).collect();
    serde_json::json!({ "analysis": a, "layer": layer, "head": head, "attention": heat })
}

/// Parses "1.2 3.0" (or commas) into (layer, head) pairs; returns the pairs and the pieces
/// that are not of that form, for a notice.
pub fn parse_ablate(text: &str) -> (Vec<(usize, usize)>, Vec<String>) {
    let mut pairs = Vec::new();
    let mut bad = Vec::new();
    for piece in text.split(|c: char| c == ',' || c.is_whitespace()).filter(|p| !p.is_empty()) {
        match piece.split_once('.').and_then(|(l, h)| Some((l.parse().ok()?, h.parse().ok()?))) {
            Some(p) if !pairs.contains(&p) => pairs.push(p),
            Some(_) => {}
            None => bad.push(piece.to_string()),
        }
    }
    (pairs, bad)
}

pub fn format_ablate(pairs: &[(usize, usize)]) -> String {
    pairs.iter().map(|(l, h)| format!("{l}.{h}")).collect::<Vec<_>>().join(" ")
}

/// Where a model's files are fetched from: the bundled folder, the hub for GPT-2 small and
/// SmolLM2-135M (or the reader's folder for the same files), the reader's URL, or the trained model's folder in this
/// browser's storage. `None` for local files or a missing URL.
pub fn model_base(model: &str, base: &str) -> Option<String> {
    let base = base.trim();
    let with_slash = |b: &str| if b.ends_with('/') { b.to_string() } else { format!("{b}/") };
    match model {
        "gpt2" if base.is_empty() => Some(crate::session::manifest::HUB_GPT2.to_string()),
        "smollm2" if base.is_empty() => Some(crate::session::manifest::HUB_SMOLLM2.to_string()),
        "gpt2" | "smollm2" | "url" if !base.is_empty() => Some(with_slash(base)),
        "stories" | "induction" | "stories-llama" => Some(format!("/models/{model}/")),
        "trained" => Some(crate::session::manifest::TRAINED_BASE.to_string()),
        _ => None,
    }
}

/// The worker query for the parameters (heads outside the loaded model are dropped by the view).
pub fn query(p: &Params, id: u64) -> Query {
    Query {
        id,
        prompt: p.prompt.clone(),
        layer: p.layer.max(0) as usize,
        ablate: p.knocked_out(),
        temperature: p.temperature as f32,
        top_k: p.top_k,
        top_p: p.top_p as f32,
        seed: p.seed,
        top: CANDIDATES,
    }
}

/// A probability read from the worker's candidate list (most likely first, `asked` long at
/// most). A listed token's is exact. An unlisted token's is known only to be below the last one
/// listed, unless the list is shorter than asked: then top-k or top-p cut the rest, and under
/// the sampling settings its probability is exactly 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prob {
    Exact(f64),
    Below(f64),
}

impl Prob {
    pub fn of(list: &[Candidate], id: u32, asked: usize) -> Prob {
        match list.iter().find(|c| c.id == id) {
            Some(c) => Prob::Exact(c.prob),
            None if list.len() < asked => Prob::Exact(0.0),
            None => Prob::Below(list.last().map_or(0.0, |c| c.prob)),
        }
    }
    /// The length of its bar (0 for an upper bound: the bar would claim more than is known).
    pub fn bar(self) -> f64 {
        match self {
            Prob::Exact(p) => p,
            Prob::Below(_) => 0.0,
        }
    }
    /// As printed beside the bar, to 0.1% (a bound rounded up, so that "<" stays true).
    pub fn label(self) -> String {
        match self {
            Prob::Exact(p) => format!("{:.1}%", Signed(100.0 * p)),
            Prob::Below(p) => format!("<{:.1}%", Signed(((1000.0 * p) - 1e-9).ceil().max(1.0) / 10.0)),
        }
    }
    /// Orders exact values by size and a bound just below an exact value equal to it.
    fn key(self) -> (f64, bool) {
        match self {
            Prob::Exact(p) => (p, true),
            Prob::Below(p) => (p, false),
        }
    }
}

/// One row of the next-token chart: the intact model's probability and, when heads are knocked
/// out, the probability with the knock-outs.
#[derive(Debug, Clone, PartialEq)]
pub struct NextRow {
    pub id: u32,
    pub text: String,
    pub intact: Prob,
    pub knocked: Option<Prob>,
}

/// The rows of the next-token chart. `next` is the worker's list with the knock-outs applied and
/// `baseline` the intact model's (present only when heads are knocked out); each holds up to
/// `asked` candidates. Without knock-outs: the `shown` most likely tokens. With them: every token
/// among the `shown` most likely of either model, each with both probabilities, sorted by the
/// intact one, so a token the knock-out pushes down stays in its place with a short bar instead
/// of leaving the chart.
pub fn next_rows(next: &[Candidate], baseline: Option<&[Candidate]>, asked: usize, shown: usize) -> Vec<NextRow> {
    let Some(base) = baseline else {
        return next
            .iter()
            .take(shown)
            .map(|c| NextRow { id: c.id, text: c.text.clone(), intact: Prob::Exact(c.prob), knocked: None })
            .collect();
    };
    let mut union: Vec<&Candidate> = Vec::new();
    for c in base.iter().take(shown).chain(next.iter().take(shown)) {
        if !union.iter().any(|u| u.id == c.id) {
            union.push(c);
        }
    }
    let mut rows: Vec<NextRow> = union
        .into_iter()
        .map(|c| NextRow {
            id: c.id,
            text: c.text.clone(),
            intact: Prob::of(base, c.id, asked),
            knocked: Some(Prob::of(next, c.id, asked)),
        })
        .collect();
    let desc = |a: (f64, bool), b: (f64, bool)| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1));
    rows.sort_by(|a, b| {
        let (ka, kb) = (a.knocked.map_or((0.0, true), Prob::key), b.knocked.map_or((0.0, true), Prob::key));
        desc(a.intact.key(), b.intact.key()).then(desc(ka, kb)).then(a.id.cmp(&b.id))
    });
    rows
}

/// A selection value that did not fit the loaded model or prompt and was moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    pub key: &'static str,
    pub wanted: i64,
    pub now: usize,
    /// Why, for a notice: "this model has layers 0 to 1".
    pub why: String,
}

/// Where the selection (layer, head, query token) lands for a model of `n_layer` layers of
/// `n_head` heads and a prompt of `tokens` tokens: each value kept when it fits, else moved to
/// the last one that exists; with the values that moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub layer: usize,
    pub head: usize,
    pub token: usize,
    pub moved: Vec<Moved>,
}

pub fn fit_selection(layer: i64, head: i64, token: i64, n_layer: usize, n_head: usize, tokens: usize) -> Fit {
    let mut moved = Vec::new();
    let mut fit = |key: &'static str, wanted: i64, n: usize, what: String| {
        let last = n.max(1) - 1;
        let now = (wanted.max(0) as u64).min(last as u64) as usize;
        if now as i64 != wanted {
            moved.push(Moved { key, wanted, now, why: format!("{what} 0 to {last}") });
        }
        now
    };
    let layer = fit("layer", layer, n_layer, "this model has layers".into());
    let head = fit("head", head, n_head, "this model has heads".into());
    let token = fit("token", token, tokens, "the prompt has tokens".into());
    Fit { layer, head, token, moved }
}

/// The largest value of the layer, head and query-token sliders for a model and prompt.
pub fn slider_max(n_layer: usize, n_head: usize, tokens: usize) -> [(&'static str, i64); 3] {
    let last = |n: usize| n.max(1) as i64 - 1;
    [("layer", last(n_layer)), ("head", last(n_head)), ("token", last(tokens))]
}

/// Label every `k`-th of a row of labels placed `spacing` pixels apart, the widest `widest`
/// pixels wide, so that drawn labels keep at least `gap` pixels between them.
pub fn label_stride(widest: f64, gap: f64, spacing: f64) -> usize {
    if spacing.is_nan() || spacing <= 0.0 || !widest.is_finite() {
        return 1;
    }
    ((widest + gap) / spacing).ceil().max(1.0) as usize
}

/// `text` cut to at most `max_chars` characters, the last of them an ellipsis when it was cut
/// (token labels in the head view's columns, which are a fixed share of the width).
pub fn clip_label(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let keep = max_chars.saturating_sub(1);
    text.chars().take(keep).chain((max_chars > 0).then_some('…')).collect()
}

#[cfg(target_arch = "wasm32")]
pub mod view;
