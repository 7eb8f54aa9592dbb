//! Demo `collapse`: stacked attention alone makes the tokens identical; residuals, the FFN and
//! layer norm stop it (chapter "transformer-block").

use ndarray::Array2;
use serde::Serialize;

use super::DemoSpec;
use crate::numerics::block::{random_layers, run_layers, BlockParts, LayerWeights};
use crate::numerics::rng::normal_matrix;
use crate::state::{Param, Values};

pub const D: usize = 16;

pub static PARAMS: &[Param] = &[
    Param::int("layers", "Layers L", 1, 48, 12),
    Param::int("n", "Tokens n", 2, 16, 8),
    Param::boolean("residual", "Residual connections", false),
    Param::boolean("ffn", "Feed-forward network", false),
    Param::boolean("ln", "Layer norm (pre-norm)", false),
    Param::seed("seed", "Random weights", 1),
];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Collapse {
    /// spread after each layer (index 0: the input), attention only and with the chosen parts
    pub attention_only: Vec<f64>,
    pub block: Vec<f64>,
    /// cosine similarity of the token rows after the last layer of the chosen block
    pub cosine: Vec<Vec<f64>>,
}

fn cosines(x: &Array2<f64>) -> Vec<Vec<f64>> {
    let norms: Vec<f64> = x.rows().into_iter().map(|r| r.dot(&r).sqrt().max(1e-300)).collect();
    let g = x.dot(&x.t()); // (n, d) x (d, n) -> (n, n)
    (0..x.nrows()).map(|i| (0..x.nrows()).map(|j| g[[i, j]] / (norms[i] * norms[j])).collect()).collect()
}

/// The demo with weights drawn once per (seed, L) by the caller (`random_layers`): moving
/// n or a toggle then reuses them instead of drawing ~2,800 normals per layer again.
pub fn compute_with(weights: &[LayerWeights], n: usize, parts: BlockParts, seed: u32) -> Collapse {
    let none = BlockParts { residual: false, ffn: false, layer_norm: false };
    let x0 = normal_matrix(n, D, seed as u64, 1.0); // (n, d)
    let (block, last) = run_layers(&x0, weights, parts);
    Collapse { attention_only: run_layers(&x0, weights, none).0, block, cosine: cosines(&last) }
}

pub fn compute(layers: usize, n: usize, parts: BlockParts, seed: u32) -> Collapse {
    compute_with(&random_layers(D, layers, seed as u64), n, parts, seed)
}

pub fn parts_of(v: &Values) -> BlockParts {
    BlockParts { residual: v.flag("residual"), ffn: v.flag("ffn"), layer_norm: v.flag("ln") }
}

pub fn from_values(v: &Values) -> Collapse {
    compute(v.int("layers").max(1) as usize, v.int("n").max(2) as usize, parts_of(v), v.seed("seed"))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "collapse",
    title: "Why a block needs more than attention",
    caption: "The spread ‖X − 1x̄ᵀ‖/‖X‖ of the token vectors after each of L layers with random weights: 0 means every token has become the same vector. Grey: attention alone. Blue: your block.",
    params: PARAMS,
    data: |v| super::to_json(&from_values(v)),
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::collapse::view,
};
