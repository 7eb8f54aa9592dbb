//! Demo `bottleneck` (chapter "why-attention"): accuracy against input length for the
//! fixed-context model and an attention model, from the curve the training script measured
//! (shipped beside the weights), with one length recomputed live in the browser.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::DemoSpec;
use crate::seq2seq::Variant;
use crate::state::{Param, Values};

/// What `scripts/seq2seq/train.py` measured: per variant, exact-match and per-token accuracy
/// over `n_per_length` held-out strings of each length.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Curve {
    pub lengths: Vec<usize>,
    pub n_per_length: usize,
    pub variants: BTreeMap<String, Series>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Series {
    pub exact: Vec<f64>,
    pub token: Vec<f64>,
}

pub const CURVE_JSON: &str = include_str!("../../static/models/seq2seq/curve.json");

pub fn curve() -> Result<Curve, String> {
    serde_json::from_str(CURVE_JSON).map_err(|e| format!("the shipped curve is unreadable: {e}"))
}

pub static PARAMS: &[Param] = &[
    Param::choice("model", "Attention model", super::alignment::ATTENTION, 0),
    Param::choice("measure", "Measure", &[("exact", "whole word right"), ("token", "letters right")], 0),
    Param::int("length", "Length to recompute", 1, 30, 20),
    Param::seed("seed", "Strings", 1),
];

/// Strings measured per live recomputation (the script used 200 per length).
pub const LIVE_SAMPLES: usize = 100;

pub fn variant(v: &Values) -> Variant {
    Variant::parse(v.text("model")).unwrap_or(Variant::Bahdanau)
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    let c = curve()?;
    let keep = [Variant::Fixed.key(), variant(v).key()];
    let series: BTreeMap<_, _> = c.variants.iter().filter(|(k, _)| keep.contains(&k.as_str())).collect();
    Ok(serde_json::json!({ "lengths": c.lengths, "n_per_length": c.n_per_length, "variants": series }))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "bottleneck",
    title: "The bottleneck, measured",
    caption: "Accuracy of the two models on held-out random strings, by length, as the training script measured it. The fixed-context model squeezes every letter into one vector and falls off with length; the attention model does not. Recompute any length here, from the same weights.",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::bottleneck::view,
};
