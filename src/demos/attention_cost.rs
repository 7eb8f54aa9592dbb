//! Demo `attention-cost` (chapter "efficient"): what attention costs as the sequence grows,
//! from the formulas (full, sliding window, low rank) and from a benchmark that runs in the
//! reader's browser (naive CPU, tiled CPU, the GPU's fused kernel) in a Web Worker.

use super::DemoSpec;
use crate::state::{Param, Values};

pub static N_MAX: &[(&str, &str)] =
    &[("1024", "up to 1,024"), ("2048", "up to 2,048"), ("4096", "up to 4,096"), ("8192", "up to 8,192")];

pub static PARAMS: &[Param] = &[
    Param::choice("n-max", "Sequence lengths", N_MAX, 1),
    Param::int("d", "Head size d", 16, 64, 64),
    Param::int("window", "Sliding window w", 16, 1024, 256),
    Param::int("rank", "Low rank k", 16, 1024, 128),
];

/// The lengths measured and plotted: 128, 256, … up to the chosen maximum.
pub fn lengths(v: &Values) -> Vec<usize> {
    let max: usize = v.text("n-max").parse().unwrap_or(2048);
    (7..=13).map(|p| 1usize << p).filter(|&n| n <= max).collect()
}

/// Multiply-adds ×2 (FLOPs) and stored scores (floats) of one head at length n.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Cost {
    pub n: usize,
    pub flops: f64,
    pub scores: f64,
}

/// Full attention: Q Kᵀ is n·n dot products of length d (2n²d FLOPs) and the weighted sum of
/// values as much again, so 4n²d; the n × n scores are stored.
pub fn full(n: usize, d: usize) -> Cost {
    let (n_, d_) = (n as f64, d as f64);
    Cost { n, flops: 4.0 * n_ * n_ * d_, scores: n_ * n_ }
}

/// Sliding window (Mistral): each query sees at most w keys (itself and the w − 1 before it):
/// 4·d FLOPs per (query, key) pair over Σᵢ min(i + 1, w) pairs; that many scores.
pub fn window(n: usize, d: usize, w: usize) -> Cost {
    let pairs: f64 = (0..n).map(|i| (i + 1).min(w) as f64).sum();
    Cost { n, flops: 4.0 * d as f64 * pairs, scores: pairs }
}

/// Linformer: K and V are first projected from n rows to k (E K, F V: 2·(2nkd) FLOPs), then
/// attention runs over k keys (4nkd): 8nkd in all; n × k scores.
pub fn low_rank(n: usize, d: usize, k: usize) -> Cost {
    let (n_, d_, k_) = (n as f64, d as f64, k.min(n) as f64);
    Cost { n, flops: 8.0 * n_ * k_ * d_, scores: n_ * k_ }
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    let d = v.int("d").max(1) as usize;
    let (w, k) = (v.int("window").max(1) as usize, v.int("rank").max(1) as usize);
    let rows: Vec<_> = lengths(v).into_iter().map(|n| serde_json::json!({ "n": n, "full": full(n, d), "window": window(n, d, w), "low_rank": low_rank(n, d, k) })).collect();
    Ok(
        serde_json::json!({ "d": d, "window": w, "rank": k, "formulas": rows, "note": "Benchmark times are measured in the browser; the page's Download data adds them." }),
    )
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "attention-cost",
    title: "What attention costs",
    caption: "The first plot, FLOPs of one head: the work of one attention head as the sequence grows, from the formulas. The second, measured time: the time it takes on this computer, measured when you press Run the benchmark: the naive way, tiled with the online softmax, and fused on the GPU when this browser has WebGPU.",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::attention_cost::view,
};
