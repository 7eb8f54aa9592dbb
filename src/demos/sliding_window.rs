//! Demo `sliding-window` (chapter "efficient"): one layer's window mask, and how far a query
//! reaches through stacked layers.

use serde::Serialize;

use super::DemoSpec;
use crate::numerics::window::{first_layer, reachable, receptive_field, window_mask};
use crate::state::{Param, Values};

pub const WORDS: [&str; 32] = [
    "the", "keeper", "climbed", "the", "tower", "at", "dusk", "and", "lit", "the", "lamp", "so", "that", "ships",
    "far", "out", "on", "the", "dark", "sea", "could", "see", "the", "rocks", "and", "turn", "away", "before", "the",
    "storm", "came", "in",
];

pub static PARAMS: &[Param] = &[
    Param::int("n", "Tokens", 4, 32, 16),
    Param::int("window", "Window w", 1, 16, 4),
    Param::int("layers", "Layers stacked", 1, 8, 2),
    Param::int("query", "Query position", 0, 31, 15),
];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlidingWindow {
    pub tokens: Vec<&'static str>,
    pub window: usize,
    pub layers: usize,
    /// 0-based, within the tokens.
    pub query: usize,
    /// One layer: 1 where query i may attend to key j.
    pub mask: Vec<Vec<f64>>,
    /// After `layers` layers: 1 where information from j has reached i.
    pub reach: Vec<Vec<f64>>,
    /// For the chosen query, the first layer at which each position reaches it (None: never).
    pub first_layer: Vec<Option<usize>>,
    /// L·(w − 1) + 1 and how many of the tokens that is here.
    pub receptive_field: usize,
    pub reached: usize,
}

pub fn compute(n: usize, w: usize, layers: usize, query: usize) -> SlidingWindow {
    let n = n.clamp(1, WORDS.len());
    let query = query.min(n - 1); // 0-based, like every position in the book
    let ones = |m: ndarray::Array2<bool>| {
        m.rows().into_iter().map(|r| r.iter().map(|&b| f64::from(u8::from(b))).collect()).collect()
    };
    let reach = reachable(n, w, layers);
    let reached = reach.row(query).iter().filter(|&&b| b).count();
    SlidingWindow {
        tokens: WORDS[..n].to_vec(),
        window: w,
        layers,
        query,
        mask: ones(window_mask(n, w)),
        reach: ones(reach),
        first_layer: (0..n).map(|j| first_layer(query, j, w).filter(|&l| l <= layers)).collect(),
        receptive_field: receptive_field(w, layers),
        reached,
    }
}

pub fn from_values(v: &Values) -> SlidingWindow {
    let c = |k: &str| v.int(k).max(1) as usize;
    compute(c("n"), c("window"), c("layers"), v.int("query").max(0) as usize)
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "sliding-window",
    title: "A sliding window, layer on layer",
    caption: "The first matrix is one layer's mask: each query sees itself and the w − 1 tokens before it. The second shows what has reached each position after the stacked layers. Below them, the chosen query's tokens, numbered by the layer at which each first reaches it.",
    params: PARAMS,
    data: |v| super::to_json(&from_values(v)),
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::sliding_window::view,
};
