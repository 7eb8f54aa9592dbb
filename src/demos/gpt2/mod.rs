//! Demo `gpt2`: a GPT-2 model running in the reader's browser (chapter "gpt2-live"). The
//! numbers come from the model in a Web Worker (`gpt2::session`); `data` here returns the query
//! the page sends, and the view adds the worker's answer to "Download data".

use super::DemoSpec;
use crate::gpt2::protocol::{Candidate, Query};
use crate::state::{Param, Values};

pub static MODELS: &[(&str, &str)] = &[
    ("stories", "Pet stories (4 layers, bundled)"),
    ("induction", "Induction (2 layers, bundled)"),
    ("gpt2", "GPT-2 small, 124M (download 548 MB)"),
    ("url", "GPT-2 checkpoint from a URL"),
    ("file", "GPT-2 checkpoint from local files"),
];

/// Where the model runs (`gpt2::protocol::BackendChoice`).
pub static BACKENDS: &[(&str, &str)] =
    &[("auto", "Automatic: WebGPU if this browser has it"), ("webgpu", "WebGPU (GPU)"), ("cpu", "CPU")];

/// The prompts the demo opens on: the same story with a different animal, stopped where what
/// comes next depends on which animal "She" is (the chapter quotes the effect; tests/gpt2_bundled.rs
/// checks it).
pub const DEFAULT_PROMPT: &str = "My cat is small, cute, and fluffy. She likes";
pub const DEFAULT_COMPARE: &str = "My dog is small, cute, and fluffy. She likes";

/// Next-token rows shown in the main chart, and in each side of the comparison.
pub const SHOWN: usize = 10;
pub const SHOWN_COMPARE: usize = 5;
/// Candidates asked of the worker: more than are shown, so that a token in one chart (intact or
/// knocked out) can be given its probability in the other too.
pub const CANDIDATES: usize = 100;

pub static PARAMS: &[Param] = &[
    Param::choice("model", "Model", MODELS, 0),
    Param::text("base", "Checkpoint folder URL (for GPT-2 small or a URL)", 500, ""),
    Param::choice("backend", "Runs on", BACKENDS, 0),
    Param::text("prompt", "Prompt", 4000, DEFAULT_PROMPT),
    Param::text("compare", "Second prompt to compare (optional)", 4000, DEFAULT_COMPARE),
    Param::int("layer", "Layer", 0, 47, 0),
    Param::int("head", "Head", 0, 24, 3),
    Param::int("token", "Query token", 0, 1023, 10),
    Param::text("ablate", "Knocked-out heads (layer.head …)", 200, ""),
    Param::float("temperature", "Temperature (0 = greedy)", 0.0, 2.0, 0.05, 1.0),
    Param::int("top-k", "Top-k (0 = all)", 0, 100, 0),
    Param::float("top-p", "Top-p", 0.05, 1.0, 0.05, 1.0),
    Param::seed("seed", "Sampling seed", 1),
];

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

/// Where a model's files are fetched from: the bundled folder, the hub (or the reader's
/// folder for the same files), or the reader's URL. `None` for local files or a missing URL.
pub fn model_base(model: &str, base: &str) -> Option<String> {
    let base = base.trim();
    let with_slash = |b: &str| if b.ends_with('/') { b.to_string() } else { format!("{b}/") };
    match model {
        "gpt2" if base.is_empty() => Some(crate::gpt2::manifest::HUB_GPT2.to_string()),
        "gpt2" | "url" if !base.is_empty() => Some(with_slash(base)),
        "stories" | "induction" => Some(format!("/models/{model}/")),
        _ => None,
    }
}

/// The worker query for the current values (heads outside the loaded model are dropped by the view).
pub fn query(v: &Values, id: u64) -> Query {
    Query {
        id,
        prompt: v.text("prompt").to_string(),
        layer: v.int("layer").max(0) as usize,
        ablate: parse_ablate(v.text("ablate")).0,
        temperature: v.float("temperature") as f32,
        top_k: v.int("top-k").max(0) as usize,
        top_p: v.float("top-p") as f32,
        seed: v.seed("seed"),
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
            Prob::Exact(p) => format!("{:.1}%", 100.0 * p),
            Prob::Below(p) => format!("<{:.1}%", ((1000.0 * p) - 1e-9).ceil().max(1.0) / 10.0),
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

fn data(v: &Values) -> Result<serde_json::Value, String> {
    let mut out = serde_json::json!({ "model": v.text("model"), "query": query(v, 0) });
    out["note"] = "The model's outputs are computed in the browser; the page's Download data adds them.".into();
    Ok(out)
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "gpt2",
    title: "GPT-2 in your browser",
    caption: "A GPT-2 model runs in a Web Worker on your machine. Pick a layer and head in the model view, click a token to see where it looks, knock out heads and watch the next-token probabilities move, or generate.",
    params: PARAMS,
    data,
    retype: |v| v.clone(),
    load: |_, _| None,
    #[cfg(target_arch = "wasm32")]
    view: view::view,
};

#[cfg(target_arch = "wasm32")]
pub mod view;
