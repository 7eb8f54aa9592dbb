//! Demo `bank`: context changes a token's vector (chapter "self-attention"). Hand-set 2-D
//! embeddings (money, nature); parameter-free self-attention with sharpness β.

use ndarray::{Array1, Array2};
use serde::Serialize;

use super::DemoSpec;
use crate::numerics::softmax::softmax;
use crate::state::Param;

pub const EMBEDDINGS: &[(&str, [f64; 2])] = &[
    ("the", [0.1, 0.1]),
    ("river", [0.2, 2.0]),
    ("bank", [1.0, 1.0]),
    ("was", [0.1, 0.2]),
    ("muddy", [0.1, 1.5]),
    ("loaned", [1.6, 0.1]),
    ("me", [0.2, 0.1]),
    ("money", [2.0, 0.2]),
];

pub static SENTENCES: &[(&str, &str)] =
    &[("river", "the river bank was muddy"), ("money", "the bank loaned me money"), ("alone", "the bank")];

pub static PARAMS: &[Param] =
    &[Param::choice("sentence", "Sentence", SENTENCES, 0), Param::float("beta", "Sharpness β", 0.0, 4.0, 0.05, 1.0)];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bank {
    pub tokens: Vec<&'static str>,
    pub vectors: Vec<[f64; 2]>,
    /// bank's attention weights over the sentence, and its output Σ α_j x_j
    pub weights: Vec<f64>,
    pub output: [f64; 2],
}

pub fn embed(w: &str) -> [f64; 2] {
    EMBEDDINGS.iter().find(|(k, _)| *k == w).map_or([0.0, 0.0], |(_, v)| *v)
}

pub fn compute(sentence: &str, beta: f64) -> Bank {
    let text = SENTENCES.iter().find(|(k, _)| *k == sentence).map_or(SENTENCES[0].1, |(_, t)| t);
    let tokens: Vec<&'static str> = text.split(' ').collect();
    let x = Array2::from_shape_fn((tokens.len(), 2), |(i, j)| embed(tokens[i])[j]); // (n, 2)
    let bank = Array1::from(embed("bank").to_vec()); // (2,)
    let scores = x.dot(&bank) * beta; // (n, 2) x (2,) -> (n,)
    let w = softmax(scores.view());
    let out = w.dot(&x); // (n,) x (n, 2) -> (2,)
    Bank { vectors: tokens.iter().map(|t| embed(t)).collect(), tokens, weights: w.to_vec(), output: [out[0], out[1]] }
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "bank",
    title: "Context changes a token",
    caption: "Tokens as points (first axis: money, second: nature). The orange arrow is “bank” after attending to its sentence: the same word, a different vector in each context.",
    params: PARAMS,
    data: |v| super::to_json(&compute(v.text("sentence"), v.float("beta"))),
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::bank::view,
};
