//! Demo `wpe`: a bundled GPT-2 model's learned position embeddings and how similar positions
//! are to each other (chapter "positional"). The table is read from the model file in the
//! browser; `data` returns the inputs and the view adds the computed numbers.

use super::DemoSpec;
use crate::state::{Param, Values};

pub static MODELS: &[(&str, &str)] =
    &[("stories", "Pet stories (128 positions, width 128)"), ("induction", "Induction (64 positions, width 64)")];

pub static PARAMS: &[Param] =
    &[Param::choice("model", "Model", MODELS, 0), Param::int("offset", "Offset between positions", 1, 100, 30)];

/// The offsets whose mean similarity the readout quotes (the chosen one is clamped to P − 1).
pub fn offset(v: &Values, positions: usize) -> usize {
    (v.int("offset").max(1) as usize).min(positions.saturating_sub(1).max(1))
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    Ok(serde_json::json!({
        "model": v.text("model"),
        "offset": v.int("offset"),
        "note": "The table is read from the model file in the browser; the page's Download data adds it.",
    }))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "wpe",
    title: "A learned position table",
    caption: "The wpe table of a small GPT-2 trained for this book: one learned vector per position (the first map), and the cosine similarity of every pair of positions (the second).",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::wpe::view,
};
