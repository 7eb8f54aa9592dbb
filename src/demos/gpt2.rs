//! Demo `gpt2`: a GPT-2 model running in the reader's browser (chapter "gpt2-live"). The
//! numbers come from the model in a Web Worker (`gpt2::session`); `data` here returns the query
//! the page sends, and the view adds the worker's answer to "Download data".

use super::DemoSpec;
use crate::gpt2::session::Query;
use crate::state::{Param, Values};

pub static MODELS: &[(&str, &str)] = &[
    ("stories", "Pet stories (4 layers, bundled)"),
    ("induction", "Induction (2 layers, bundled)"),
    ("gpt2", "GPT-2 small, 124M (download 548 MB)"),
    ("url", "GPT-2 checkpoint from a URL"),
    ("file", "GPT-2 checkpoint from local files"),
];

/// Where the model runs (`gpt2::session::BackendChoice`).
pub static BACKENDS: &[(&str, &str)] = &[("auto", "Automatic: WebGPU if this browser has it"), ("webgpu", "WebGPU (GPU)"), ("cpu", "CPU")];

pub const DEFAULT_PROMPT: &str = "My cat is small, cute, and fluffy. She likes belly rubs.";

pub static PARAMS: &[Param] = &[
    Param::choice("model", "Model", MODELS, 0),
    Param::text("base", "Checkpoint folder URL (for GPT-2 small or a URL)", 500, ""),
    Param::choice("backend", "Runs on", BACKENDS, 0),
    Param::text("prompt", "Prompt", 4000, DEFAULT_PROMPT),
    Param::text("compare", "Second prompt to compare (optional)", 4000, ""),
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
        top: 10,
    }
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
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::gpt2::view,
};
