//! Demo `flash-steps` (chapter "efficient"): tiled attention with the online softmax, one tile
//! of keys at a time, for one query row of a small random example; the result is checked
//! against the naive formula for every row, and the memory traffic of both is counted.

use ndarray::Array2;
use serde::Serialize;

use super::DemoSpec;
use crate::numerics::flash::{memory_traffic, naive_attention, online_row, tiled_attention};
use crate::numerics::rng::normal_matrix;
use crate::state::{Param, Values};

pub static PARAMS: &[Param] = &[
    Param::int("n", "Tokens n", 2, 16, 8),
    Param::int("d", "Head size d", 2, 8, 4),
    Param::int("tile", "Keys per tile", 1, 8, 3),
    Param::int("row", "Query row", 1, 16, 1),
    Param::int("step", "Tiles processed", 0, 16, 1),
    Param::seed("seed", "Example", 7),
];

/// The state of the online softmax after one tile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Keys j0 .. j1 (0-based, end exclusive).
    pub keys: (usize, usize),
    pub tile_max: f64,
    /// None before the first tile (m = −∞).
    pub m_before: Option<f64>,
    pub m_after: f64,
    /// exp(m_before − m_after), 0 on the first tile.
    pub rescale: f64,
    pub l: f64,
    pub acc: Vec<f64>,
    /// acc / ℓ: the output if the keys stopped here.
    pub partial: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlashSteps {
    pub n: usize,
    pub d: usize,
    pub tile: usize,
    /// 0-based.
    pub row: usize,
    /// Tiles processed so far, of `steps.len()`.
    pub shown: usize,
    /// The row's scores qᵀkⱼ/√d and its naive softmax weights.
    pub scores: Vec<f64>,
    pub weights: Vec<f64>,
    pub steps: Vec<Step>,
    /// The row's output, tiled (after every tile) and naive.
    pub tiled: Vec<f64>,
    pub naive: Vec<f64>,
    /// Largest |tiled − naive| over the whole n × d output.
    pub max_diff: f64,
    /// Elements moved to and from main memory for this n × n attention: (naive, tiled with
    /// blocks of `tile` query rows), and the same for n = 4096, d = 64, blocks of 128.
    pub traffic: (u64, u64),
    pub traffic_large: (u64, u64),
}

/// Tolerance the page checks tiled against naive with (f32 arithmetic in another order).
pub const TOL: f64 = 1e-6;

pub fn compute(n: usize, d: usize, tile: usize, row: usize, shown: usize, seed: u32) -> FlashSteps {
    let (n, d, tile) = (n.max(1), d.max(1), tile.max(1));
    let row = row.clamp(1, n) - 1;
    // Queries and keys with spread-out scores, so the running maximum moves between tiles.
    let f32s = |m: Array2<f64>| m.mapv(|x| x as f32);
    let seed = u64::from(seed) * 3;
    let q = f32s(normal_matrix(n, d, seed, 1.5));
    let k = f32s(normal_matrix(n, d, seed + 1, 1.5));
    let v = f32s(normal_matrix(n, d, seed + 2, 1.0));
    let mut steps = Vec::new();
    let out_row = online_row(q.row(row), k.view(), v.view(), n, tile, |t| {
        steps.push(Step {
            keys: t.keys,
            tile_max: t.scores.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(f64::from(b))),
            m_before: t.m_before.is_finite().then_some(f64::from(t.m_before)),
            m_after: f64::from(t.m_after),
            rescale: f64::from(t.rescale),
            l: f64::from(t.l),
            acc: t.acc.iter().map(|&x| f64::from(x)).collect(),
            partial: t.acc.iter().map(|&x| f64::from(x / t.l)).collect(),
        })
    });
    let naive = naive_attention(q.view(), k.view(), v.view(), false);
    let tiled = tiled_attention(q.view(), k.view(), v.view(), false, tile);
    let max_diff = (&tiled - &naive).iter().fold(0.0f64, |m, e| m.max(f64::from(e.abs())));
    let scale = 1.0 / (d as f64).sqrt();
    let scores: Vec<f64> = k.rows().into_iter().map(|kj| f64::from(q.row(row).dot(&kj)) * scale).collect();
    let top = scores.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let z: f64 = scores.iter().map(|s| (s - top).exp()).sum();
    FlashSteps {
        n,
        d,
        tile,
        row,
        shown: shown.min(steps.len()),
        weights: scores.iter().map(|s| (s - top).exp() / z).collect(),
        scores,
        steps,
        tiled: out_row.iter().map(|&x| f64::from(x)).collect(),
        naive: naive.row(row).iter().map(|&x| f64::from(x)).collect(),
        max_diff,
        traffic: memory_traffic(n, d, tile),
        traffic_large: memory_traffic(4096, 64, 128),
    }
}

pub fn from_values(v: &Values) -> FlashSteps {
    let c = |k: &str| v.int(k).max(0) as usize;
    compute(c("n"), c("d"), c("tile"), c("row"), c("step"), v.seed("seed"))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "flash-steps",
    title: "FlashAttention, one tile at a time",
    caption: "One query row meets the keys a tile at a time. It keeps only the running maximum m, the running sum ℓ and the accumulated output; when m grows, the old sums are rescaled by exp(m_old − m_new). After the last tile acc/ℓ is the naive output, checked here for every row.",
    params: PARAMS,
    data: |v| super::to_json(&from_values(v)),
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::flash_steps::view,
};
