//! Demo `alignment` (chapter "why-attention"): the reader's word, reversed by the fixed-context
//! model and by an attention model, with the attention model's alignment matrix. The weights
//! are fetched by the page; `data` gives the input and the expected answer, and the view adds
//! both models' outputs to "Download data".

use super::DemoSpec;
use crate::seq2seq::{decode, encode, eval::target, Decoded, Models, Variant};
use crate::state::{Param, Values};

pub static ATTENTION: &[(&str, &str)] = &[
    ("bahdanau", "Bahdanau (additive, previous state)"),
    ("luong_dot", "Luong dot"),
    ("luong_general", "Luong general"),
    ("luong_concat", "Luong concat"),
    ("luong_local", "Luong local-p (window D = 4)"),
];

pub static PARAMS: &[Param] = &[
    Param::text("text", "Word to reverse (letters a–z)", 30, "attention"),
    Param::choice("model", "Attention model", ATTENTION, 0),
];

/// Both models' answers for one input.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Alignment {
    pub input: String,
    pub expected: String,
    pub fixed: Decoded,
    pub attention: Decoded,
}

impl Alignment {
    pub fn fixed_text(&self) -> String {
        decode(&self.fixed.out)
    }
    pub fn attention_text(&self) -> String {
        decode(&self.attention.out)
    }
    pub fn fixed_right(&self) -> bool {
        self.fixed.out == target(&self.fixed.src)
    }
    pub fn attention_right(&self) -> bool {
        self.attention.out == target(&self.attention.src)
    }
}

/// What the page calls a model: "fixed context", or its entry in `ATTENTION`.
pub fn model_label(v: Variant) -> &'static str {
    match v {
        Variant::Fixed => "fixed context",
        v => ATTENTION.iter().find(|o| o.0 == v.key()).map_or("attention", |o| o.1),
    }
}

pub fn variant(v: &Values) -> Variant {
    Variant::parse(v.text("model")).unwrap_or(Variant::Bahdanau)
}

/// Decodes the controls' word with both models, or says why the word cannot be read.
pub fn run(models: &Models, v: &Values) -> Result<Alignment, String> {
    let src = encode(v.text("text"))?;
    if src.len() - 1 > models.max_len {
        return Err(format!("the models were trained on up to {} letters", models.max_len));
    }
    Ok(Alignment {
        input: decode(&src),
        expected: decode(&target(&src)),
        fixed: models.get(Variant::Fixed).greedy(&src),
        attention: models.get(variant(v)).greedy(&src),
    })
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    let src = encode(v.text("text"))?;
    Ok(
        serde_json::json!({ "input": decode(&src), "expected": decode(&target(&src)), "model": variant(v), "note": "The models run in the browser; the page's Download data adds their outputs and the alignment." }),
    )
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "alignment",
    title: "Reverse a word, with and without attention",
    caption: "Both models read your word letter by letter and write it backwards. The fixed-context model must rebuild it from one vector; the attention model looks back at every letter, and the matrix shows where it looked for each output letter.",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::alignment::view,
};
