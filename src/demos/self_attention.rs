//! Demo `self-attn`: self-attention step by step (chapter "self-attention"): fixed attention,
//! then softmax(X Xᵀ) X, then softmax(Q Kᵀ / √d_k) V, with every intermediate visible, and
//! the permutation check (shuffle the tokens: the output rows shuffle the same way, unless
//! positional encodings are added).

use ndarray::{Array2, ArrayView2};
use serde::Serialize;

use super::DemoSpec;
use crate::numerics::attention::{attention, causal_mask, MaskFill};
use crate::numerics::positional::sinusoidal;
use crate::numerics::rng::normal_matrix;
use crate::numerics::softmax::softmax;
use crate::state::{Param, Values};

pub static STAGES: &[(&str, &str)] =
    &[("fixed", "1. fixed attention A X"), ("xx", "2. softmax(X Xᵀ/√d) X"), ("qkv", "3. softmax(Q Kᵀ/√d_k) V")];

pub static PARAMS: &[Param] = &[
    Param::choice("stage", "Stage", STAGES, 2),
    Param::int("n", "Tokens n", 2, MAX as i64, 3),
    Param::int("d", "Width d", 2, MAX as i64, 4),
    Param::seed("seed", "Input X", 1),
    // X as typed into the page's cells; empty: X is drawn from the seed.
    Param::cells("x", "Typed X", MAX, MAX, X_LIMIT),
    Param::seed("wseed", "Weights", 2),
    Param::boolean("causal", "Causal mask", false),
    Param::boolean("shuffle", "Shuffle the tokens", false),
    Param::boolean("pe", "Add positional encodings", false),
];

/// The largest |x| a typed cell of X may hold.
pub const X_LIMIT: f64 = 99.0;

/// One matrix shown on the page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shown {
    pub name: String,
    /// e.g. "(3, 4) × (4, 3) → (3, 3)"
    pub shape: String,
    pub rows: Vec<Vec<f64>>,
    /// Weights (0..1 colour scale) or signed values.
    pub weights: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelfAttention {
    pub stage: String,
    /// Token labels in the order they are fed in (after shuffling).
    pub tokens: Vec<String>,
    pub order: Vec<usize>,
    pub matrices: Vec<Shown>,
    /// max |f(P X) − P f(X)|: 0 (to rounding) when the stage is permutation-equivariant.
    pub equivariance_gap: f64,
    /// The input X (n, d) in the tokens' original order, before shuffling and encodings: the
    /// matrix the page's cells edit.
    pub x: Vec<Vec<f64>>,
    /// Whether any cell of X was typed in (else all of X comes from the seed).
    pub typed: bool,
}

fn shown(name: &str, shape: String, m: ArrayView2<f64>, weights: bool) -> Shown {
    Shown { name: name.into(), shape, rows: m.rows().into_iter().map(|r| r.to_vec()).collect(), weights }
}

/// Rounds to one decimal, so the input matrix reads like one typed into a textbook.
fn tidy(m: Array2<f64>) -> Array2<f64> {
    m.mapv(|x| (x * 10.0).round() / 10.0 + 0.0) // + 0.0 turns −0.0 into 0.0
}

/// The reversed order (a permutation that moves every token when n ≥ 2).
pub fn shuffled(n: usize) -> Vec<usize> {
    (0..n).rev().collect()
}

struct Stage {
    out: Array2<f64>,
    shown: Vec<Shown>,
}

fn run(stage: &str, x: &Array2<f64>, w: &(Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>), causal: bool) -> Stage {
    let (n, d) = x.dim();
    let mask = causal_mask(n);
    let m = causal.then(|| mask.view());
    let sh = |a: &str, b: &str| format!("{a} → {b}");
    match stage {
        "fixed" => {
            // A is a constant of the layer (here: softmax of fixed random logits): it does
            // not look at X at all.
            let logits = &w.3;
            let mut a = Array2::zeros((n, n));
            for (i, row) in logits.rows().into_iter().enumerate() {
                let masked: ndarray::Array1<f64> =
                    row.iter().enumerate().map(|(j, &v)| if causal && j > i { f64::NEG_INFINITY } else { v }).collect();
                a.row_mut(i).assign(&softmax(masked.view()));
            }
            let out = a.dot(x); // (n, n) x (n, d) -> (n, d)
            Stage {
                shown: vec![
                    shown("A (fixed)", format!("({n}, {n})"), a.view(), true),
                    shown("A X", sh(&format!("({n}, {n}) × ({n}, {d})"), &format!("({n}, {d})")), out.view(), false),
                ],
                out,
            }
        }
        "xx" => {
            let a = attention(x.view(), x.view(), x.view(), m, MaskFill::NegInf, true);
            Stage {
                shown: vec![
                    shown(
                        "X Xᵀ",
                        sh(&format!("({n}, {d}) × ({d}, {n})"), &format!("({n}, {n})")),
                        a.scores.view(),
                        false,
                    ),
                    shown("scaled by 1/√d", format!("({n}, {n})"), a.scaled.view(), false),
                    shown("masked", format!("({n}, {n})"), a.masked.view(), false),
                    shown("weights softmax(·)", format!("({n}, {n})"), a.weights.view(), true),
                    shown(
                        "output weights · X",
                        sh(&format!("({n}, {n}) × ({n}, {d})"), &format!("({n}, {d})")),
                        a.output.view(),
                        false,
                    ),
                ],
                out: a.output,
            }
        }
        _ => {
            let (q, k, v) = (x.dot(&w.0), x.dot(&w.1), x.dot(&w.2)); // (n, d) x (d, d) -> (n, d)
            let a = attention(q.view(), k.view(), v.view(), m, MaskFill::NegInf, true);
            let proj = sh(&format!("({n}, {d}) × ({d}, {d})"), &format!("({n}, {d})"));
            Stage {
                shown: vec![
                    shown("W_Q", format!("({d}, {d})"), w.0.view(), false),
                    shown("W_K", format!("({d}, {d})"), w.1.view(), false),
                    shown("W_V", format!("({d}, {d})"), w.2.view(), false),
                    shown("Q = X W_Q", proj.clone(), q.view(), false),
                    shown("K = X W_K", proj.clone(), k.view(), false),
                    shown("V = X W_V", proj, v.view(), false),
                    shown(
                        "scores Q Kᵀ",
                        sh(&format!("({n}, {d}) × ({d}, {n})"), &format!("({n}, {n})")),
                        a.scores.view(),
                        false,
                    ),
                    shown("scaled by 1/√d_k", format!("({n}, {n})"), a.scaled.view(), false),
                    shown("masked", format!("({n}, {n})"), a.masked.view(), false),
                    shown("weights softmax(·)", format!("({n}, {n})"), a.weights.view(), true),
                    shown(
                        "output weights · V",
                        sh(&format!("({n}, {n}) × ({n}, {d})"), &format!("({n}, {d})")),
                        a.output.view(),
                        false,
                    ),
                ],
                out: a.output,
            }
        }
    }
}

/// The largest n and d the sliders allow.
pub const MAX: usize = 8;

/// The top-left (rows, cols) block of an 8 × 8 matrix of N(0, scale²) entries drawn from
/// `seed`: growing or shrinking n or d adds or drops rows and columns and leaves the others as
/// they were, so a reader sees the same tokens gain a dimension, not a new draw.
fn drawn(rows: usize, cols: usize, seed: u64, scale: f64) -> Array2<f64> {
    normal_matrix(MAX, MAX, seed, scale).slice(ndarray::s![..rows, ..cols]).to_owned()
}

/// X (n, d): drawn from the seed, with any typed cells in place of the drawn ones (typed
/// cells outside n × d are ignored, so shrinking and growing n or d keeps the edits that fit).
pub fn input(n: usize, d: usize, seed: u32, typed: &[Vec<f64>]) -> Array2<f64> {
    let mut x = tidy(drawn(n, d, seed as u64, 1.0));
    for (i, row) in typed.iter().enumerate().take(n) {
        for (j, &v) in row.iter().enumerate().take(d) {
            x[[i, j]] = v;
        }
    }
    x
}

#[allow(clippy::too_many_arguments)]
pub fn compute(
    stage: &str,
    n: usize,
    d: usize,
    seed: u32,
    typed: &[Vec<f64>],
    wseed: u32,
    causal: bool,
    shuffle: bool,
    pe: bool,
) -> SelfAttention {
    let names = ["t₀", "t₁", "t₂", "t₃", "t₄", "t₅", "t₆", "t₇"]; // 0-based, like every position
    let x0 = input(n, d, seed, typed); // (n, d): token rows, in the original order
    let s = 1.0 / (d as f64).sqrt();
    let w = (
        drawn(d, d, wseed as u64, s),
        drawn(d, d, wseed as u64 ^ 1, s),
        drawn(d, d, wseed as u64 ^ 2, s),
        drawn(n, n, wseed as u64 ^ 3, 1.0),
    );
    let order: Vec<usize> = if shuffle { shuffled(n) } else { (0..n).collect() };
    let pe_table = sinusoidal(n, d, 10000.0);
    // The input as fed in: tokens permuted, then (optionally) position i's encoding added to row i.
    let feed = |order: &[usize]| {
        let mut x = Array2::from_shape_fn((n, d), |(i, j)| x0[[order[i], j]]);
        if pe {
            x += &pe_table;
        }
        x
    };
    let x = feed(&order);
    let result = run(stage, &x, &w, causal);
    // Permutation check, with the reversal P: compare f(P X) with P f(X).
    let identity: Vec<usize> = (0..n).collect();
    let p = shuffled(n);
    let base = run(stage, &feed(&identity), &w, causal).out;
    let perm = run(stage, &feed(&p), &w, causal).out;
    let gap = (0..n)
        .flat_map(|i| (0..d).map(move |j| (i, j)))
        .fold(0.0f64, |g, (i, j)| g.max((perm[[i, j]] - base[[p[i], j]]).abs()));
    let mut matrices =
        vec![shown(if pe { "X + PE (input)" } else { "X (input)" }, format!("({n}, {d})"), x.view(), false)];
    matrices.extend(result.shown);
    SelfAttention {
        stage: stage.to_string(),
        tokens: order.iter().map(|&i| names[i].to_string()).collect(),
        order,
        matrices,
        equivariance_gap: gap,
        x: x0.rows().into_iter().map(|r| r.to_vec()).collect(),
        typed: !typed.is_empty(),
    }
}

pub fn from_values(v: &Values) -> SelfAttention {
    let p = |k| v.int(k).clamp(1, MAX as i64) as usize;
    // The URL layer has checked the cells already; anything else set in code counts as none.
    let typed = crate::state::parse_cells(v.text("x"), MAX, MAX, X_LIMIT).unwrap_or_default();
    compute(
        v.text("stage"),
        p("n"),
        p("d"),
        v.seed("seed"),
        &typed,
        v.seed("wseed"),
        v.flag("causal"),
        v.flag("shuffle"),
        v.flag("pe"),
    )
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "self-attn",
    title: "Self-attention, one matrix at a time",
    caption: "Every intermediate of the chosen stage, with its shape. Toggle “shuffle” to feed the tokens in reverse: the output rows come out reversed too (the check below reads ~0), until positional encodings are added.",
    params: PARAMS,
    data: |v| super::to_json(&from_values(v)),
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::self_attention::view,
};
