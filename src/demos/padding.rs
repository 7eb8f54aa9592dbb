//! Demo `padding`: masked softmax with valid lengths on a padded batch (chapter "masking").

use ndarray::Array2;
use serde::Serialize;

use super::DemoSpec;
use crate::numerics::attention::{attention, valid_length_mask, MaskFill};
use crate::numerics::rng::{normal_matrix, word_seed};
use crate::state::{Param, Values};

pub const SENTENCES: [&[&str]; 3] =
    [&["Dive", "into", "Deep", "Learning"], &["Learn", "to", "code"], &["Hello", "world"]];
pub const LEN: usize = 4;
pub const D: usize = 4;

pub static FILLS: &[(&str, &str)] = &[("neginf", "−∞"), ("big", "−10⁶")];

pub static PARAMS: &[Param] = &[
    Param::int("v1", "Valid length, sentence 1", 0, 4, 4),
    Param::int("v2", "Valid length, sentence 2", 0, 4, 3),
    Param::int("v3", "Valid length, sentence 3", 0, 4, 2),
    Param::choice("fill", "Masked scores become", FILLS, 0),
];

/// A token's embedding: the same word always gets the same vector; padding is all zeros.
pub fn embed(word: &str) -> Vec<f64> {
    if word == "<pad>" {
        return vec![0.0; D];
    }
    normal_matrix(1, D, word_seed(&word.to_lowercase()), 1.0).row(0).to_vec()
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sequence {
    pub tokens: Vec<String>,
    pub valid: usize,
    /// X Xᵀ / √d with masked entries filled (−∞ is written as null in JSON)
    pub masked: Vec<Vec<f64>>,
    pub weights: Vec<Vec<f64>>,
    /// rows with no softmax (valid length 0 with −∞)
    pub defined: Vec<bool>,
}

pub fn compute(valid: [usize; 3], fill: MaskFill) -> Vec<Sequence> {
    SENTENCES
        .iter()
        .zip(valid)
        .map(|(words, valid)| {
            let tokens: Vec<String> = (0..LEN).map(|i| words.get(i).map_or("<pad>", |w| *w).to_string()).collect();
            let x = Array2::from_shape_vec((LEN, D), tokens.iter().flat_map(|t| embed(t)).collect())
                .unwrap_or_else(|_| Array2::zeros((LEN, D)));
            let mask = valid_length_mask(LEN, LEN, valid);
            // Self-attention of the padded sequence with Q = K = V = X.
            let a = attention(x.view(), x.view(), x.view(), Some(mask.view()), fill, true);
            Sequence {
                tokens,
                valid,
                masked: a.masked.rows().into_iter().map(|r| r.to_vec()).collect(),
                weights: a.weights.rows().into_iter().map(|r| r.to_vec()).collect(),
                defined: a.defined,
            }
        })
        .collect()
}

pub fn fill_of(v: &Values) -> MaskFill {
    if v.text("fill") == "big" {
        MaskFill::Value(-1e6)
    } else {
        MaskFill::NegInf
    }
}

pub fn from_values(v: &Values) -> Vec<Sequence> {
    let l = |k| v.int(k).clamp(0, LEN as i64) as usize;
    compute([l("v1"), l("v2"), l("v3")], fill_of(v))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "padding",
    title: "Masked softmax with valid lengths",
    caption: "Three sentences padded to four tokens. Keys past each valid length are masked before the softmax, so their weights are exactly 0. Set a valid length to 0 to see what each way of masking does to a row with nothing left.",
    params: PARAMS,
    data: |v| super::to_json(&serde_json::json!({ "sequences": from_values(v) })),
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::padding::view,
};
