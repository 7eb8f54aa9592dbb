//! Attention as a soft dictionary lookup: a query word is compared with every key (a colour
//! name), the similarities become weights by a softmax with sharpness β, and the answer is the
//! weighted average of the values (RGB colours).
//!
//! Score: cosine similarity of character-bigram counts, s(q, k) = φ(q)ᵀφ(k) / (‖φ(q)‖ ‖φ(k)‖),
//! where φ(w) counts the bigrams of `⟨w⟩` (lower-cased, with boundary markers ⟨ and ⟩).
//! Weights: α_i = exp(β s_i) / Σ_j exp(β s_j). Output: v = Σ_i α_i v_i.

use std::collections::BTreeMap;

use ndarray::{Array1, Array2};

use super::softmax::softmax;

/// The database: colour names (keys) and their RGB values.
pub const COLOURS: &[(&str, [u8; 3])] = &[
    ("red", [220, 40, 40]),
    ("orange", [245, 140, 30]),
    ("yellow", [240, 210, 40]),
    ("green", [50, 160, 60]),
    ("teal", [20, 150, 150]),
    ("blue", [40, 90, 220]),
    ("navy", [20, 30, 110]),
    ("purple", [130, 60, 170]),
    ("pink", [240, 130, 180]),
    ("brown", [130, 80, 40]),
    ("black", [20, 20, 20]),
    ("white", [245, 245, 245]),
    ("grey", [128, 128, 128]),
];

/// Boundary markers, so that shared beginnings and endings count.
pub const START: char = '⟨';
pub const END: char = '⟩';

/// φ(w): counts of character bigrams of `⟨w⟩`, lower-cased. "red" -> {⟨r, re, ed, d⟩}.
pub fn bigrams(word: &str) -> BTreeMap<(char, char), u32> {
    let chars: Vec<char> =
        std::iter::once(START).chain(word.chars().flat_map(char::to_lowercase)).chain(std::iter::once(END)).collect();
    let mut counts = BTreeMap::new();
    for w in chars.windows(2) {
        *counts.entry((w[0], w[1])).or_insert(0) += 1;
    }
    counts
}

/// Cosine similarity of two words' bigram counts, in [0, 1].
pub fn similarity(a: &str, b: &str) -> f64 {
    let (fa, fb) = (bigrams(a), bigrams(b));
    let dot: f64 = fa.iter().map(|(g, &c)| c as f64 * *fb.get(g).unwrap_or(&0) as f64).sum();
    let norm = |f: &BTreeMap<(char, char), u32>| f.values().map(|&c| (c as f64).powi(2)).sum::<f64>().sqrt();
    // Both norms are >= 1: every word has at least the bigram made of its two markers.
    dot / (norm(&fa) * norm(&fb))
}

/// The result of one lookup.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Lookup {
    pub keys: Vec<&'static str>,
    /// s(q, k_i), one per key.
    pub scores: Vec<f64>,
    /// α_i = softmax(β s)_i.
    pub weights: Vec<f64>,
    /// Σ α_i v_i, each channel in [0, 255].
    pub output: [f64; 3],
}

/// Looks `query` up in `COLOURS` with sharpness `beta` (β = 0: uniform; large β: one-hot).
pub fn lookup(query: &str, beta: f64) -> Lookup {
    let scores: Array1<f64> = COLOURS.iter().map(|(k, _)| similarity(query, k)).collect();
    let weights = softmax((&scores * beta).view()); // (n,)
                                                    // (n,) x (n, 3) -> (3,)
    let values = Array2::from_shape_fn((COLOURS.len(), 3), |(i, c)| COLOURS[i].1[c] as f64);
    let out = weights.dot(&values);
    Lookup {
        keys: COLOURS.iter().map(|(k, _)| *k).collect(),
        scores: scores.to_vec(),
        weights: weights.to_vec(),
        output: [out[0], out[1], out[2]],
    }
}
