//! Demo `self-attn`: self-attention step by step (chapter "self-attention"): fixed attention,
//! then softmax(X Xᵀ) X, then softmax(Q Kᵀ / √d_k) V, with every intermediate visible, and
//! the permutation check (shuffle the tokens: the output rows shuffle the same way, unless
//! positional encodings are added).

use ndarray::{Array2, ArrayView2};
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::attention::{attention, causal_mask, MaskFill};
use crate::numerics::positional::sinusoidal;
use crate::numerics::rng::normal_matrix;
use crate::numerics::softmax::softmax;

crate::options! {
    /// The chapter's three stages, from attention that ignores X to learned projections.
    pub enum Stage {
        Fixed = ("fixed", "1. fixed attention A X"),
        Xx = ("xx", "2. softmax(X Xᵀ/√d) X"),
        Qkv = ("qkv", "3. softmax(Q Kᵀ/√d_k) V"),
    }
}

crate::params! {
    pub struct Params {
        stage: Stage = Param::choice("stage", "Stage", Stage::OPTIONS, 2),
        n: usize = Param::int("n", "Tokens n", 2, MAX as i64, 3),
        d: usize = Param::int("d", "Width d", 2, MAX as i64, 4),
        seed: u32 = Param::seed("seed", "Input X", 1),
        /// X as typed into the page's cells; empty: X is drawn from the seed.
        x: Vec<Vec<f64>> = Param::cells("x", "Typed X", MAX, MAX, X_LIMIT),
        wseed: u32 = Param::seed("wseed", "Weights", 2),
        causal: bool = Param::boolean("causal", "Causal mask", false),
        shuffle: bool = Param::boolean("shuffle", "Shuffle the tokens", false),
        pe: bool = Param::boolean("pe", "Add positional encodings", false),
    }
}

pub struct SelfAttentionDemo;

impl Demo for SelfAttentionDemo {
    const ID: &'static str = "self-attn";
    const TITLE: &'static str = "Self-attention, one matrix at a time";
    const CAPTION: &'static str =
        "Every intermediate of the chosen stage, with its shape. Toggle “shuffle” to feed the \
        tokens in reverse: the output rows come out reversed too (the check below reads ~0), until positional \
        encodings are added.";
    type Params = Params;
    const MAIN: &'static [&'static str] = &["stage", "n", "d", "causal"];
    type Output = SelfAttention;

    fn compute(p: &Params) -> SelfAttention {
        let size = |k: usize| k.clamp(1, MAX);
        compute(p.stage, size(p.n), size(p.d), p.seed, &p.x, p.wseed, p.causal, p.shuffle, p.pe)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<SelfAttentionDemo>();

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
    /// What the rows and the columns stand for, which labels them.
    pub axes: Axes,
}

/// What a shown matrix's rows and columns are: tokens (labelled t₀, t₁, …, in the order fed in)
/// or dimensions (labelled 0, 1, …). Said by the stage that makes the matrix, never guessed from
/// its shape: with n = d a weight matrix is square like the attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Axes {
    /// (n, d): a row per token, a column per dimension (X, Q, K, V, the outputs).
    TokensByDims,
    /// (n, n): queries by keys (scores, weights).
    TokensByTokens,
    /// (d, d): a weight matrix.
    DimsByDims,
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

impl Shown {
    /// The row and column labels: `tokens` (in the order fed in) on a token axis, 0, 1, … on a
    /// dimension axis.
    pub fn labels(&self, tokens: &[String]) -> (Vec<String>, Vec<String>) {
        let dims = |k: usize| (0..k).map(|j| j.to_string()).collect::<Vec<_>>();
        let (nr, nc) = (self.rows.len(), self.rows.first().map_or(0, Vec::len));
        match self.axes {
            Axes::TokensByDims => (tokens.to_vec(), dims(nc)),
            Axes::TokensByTokens => (tokens.to_vec(), tokens.to_vec()),
            Axes::DimsByDims => (dims(nr), dims(nc)),
        }
    }
}

fn shown(name: &str, shape: String, m: ArrayView2<f64>, weights: bool, axes: Axes) -> Shown {
    Shown { name: name.into(), shape, rows: m.rows().into_iter().map(|r| r.to_vec()).collect(), weights, axes }
}

/// Rounds to one decimal, so the input matrix reads like one typed into a textbook.
fn tidy(m: Array2<f64>) -> Array2<f64> {
    m.mapv(|x| (x * 10.0).round() / 10.0 + 0.0) // + 0.0 turns −0.0 into 0.0
}

/// The reversed order (a permutation that moves every token when n ≥ 2).
pub fn shuffled(n: usize) -> Vec<usize> {
    (0..n).rev().collect()
}

struct StageOut {
    out: Array2<f64>,
    shown: Vec<Shown>,
}

fn run(
    stage: Stage,
    x: &Array2<f64>,
    w: &(Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>),
    causal: bool,
) -> StageOut {
    let (n, d) = x.dim();
    let mask = causal_mask(n);
    let m = causal.then(|| mask.view());
    let sh = |a: &str, b: &str| format!("{a} → {b}");
    match stage {
        Stage::Fixed => {
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
            StageOut {
                shown: vec![
                    shown("A (fixed)", format!("({n}, {n})"), a.view(), true, Axes::TokensByTokens),
                    shown(
                        "A X",
                        sh(&format!("({n}, {n}) × ({n}, {d})"), &format!("({n}, {d})")),
                        out.view(),
                        false,
                        Axes::TokensByDims,
                    ),
                ],
                out,
            }
        }
        Stage::Xx => {
            let a = attention(x.view(), x.view(), x.view(), m, MaskFill::NegInf, true);
            StageOut {
                shown: vec![
                    shown(
                        "X Xᵀ",
                        sh(&format!("({n}, {d}) × ({d}, {n})"), &format!("({n}, {n})")),
                        a.scores.view(),
                        false,
                        Axes::TokensByTokens,
                    ),
                    shown("scaled by 1/√d", format!("({n}, {n})"), a.scaled.view(), false, Axes::TokensByTokens),
                    shown("masked", format!("({n}, {n})"), a.masked.view(), false, Axes::TokensByTokens),
                    shown("weights softmax(·)", format!("({n}, {n})"), a.weights.view(), true, Axes::TokensByTokens),
                    shown(
                        "output weights · X",
                        sh(&format!("({n}, {n}) × ({n}, {d})"), &format!("({n}, {d})")),
                        a.output.view(),
                        false,
                        Axes::TokensByDims,
                    ),
                ],
                out: a.output,
            }
        }
        Stage::Qkv => {
            let (q, k, v) = (x.dot(&w.0), x.dot(&w.1), x.dot(&w.2)); // (n, d) x (d, d) -> (n, d)
            let a = attention(q.view(), k.view(), v.view(), m, MaskFill::NegInf, true);
            let proj = sh(&format!("({n}, {d}) × ({d}, {d})"), &format!("({n}, {d})"));
            StageOut {
                shown: vec![
                    shown("W_Q", format!("({d}, {d})"), w.0.view(), false, Axes::DimsByDims),
                    shown("W_K", format!("({d}, {d})"), w.1.view(), false, Axes::DimsByDims),
                    shown("W_V", format!("({d}, {d})"), w.2.view(), false, Axes::DimsByDims),
                    shown("Q = X W_Q", proj.clone(), q.view(), false, Axes::TokensByDims),
                    shown("K = X W_K", proj.clone(), k.view(), false, Axes::TokensByDims),
                    shown("V = X W_V", proj, v.view(), false, Axes::TokensByDims),
                    shown(
                        "scores Q Kᵀ",
                        sh(&format!("({n}, {d}) × ({d}, {n})"), &format!("({n}, {n})")),
                        a.scores.view(),
                        false,
                        Axes::TokensByTokens,
                    ),
                    shown("scaled by 1/√d_k", format!("({n}, {n})"), a.scaled.view(), false, Axes::TokensByTokens),
                    shown("masked", format!("({n}, {n})"), a.masked.view(), false, Axes::TokensByTokens),
                    shown("weights softmax(·)", format!("({n}, {n})"), a.weights.view(), true, Axes::TokensByTokens),
                    shown(
                        "output weights · V",
                        sh(&format!("({n}, {n}) × ({n}, {d})"), &format!("({n}, {d})")),
                        a.output.view(),
                        false,
                        Axes::TokensByDims,
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
    stage: Stage,
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
    let mut matrices = vec![shown(
        if pe { "X + PE (input)" } else { "X (input)" },
        format!("({n}, {d})"),
        x.view(),
        false,
        Axes::TokensByDims,
    )];
    matrices.extend(result.shown);
    SelfAttention {
        stage: stage.key().to_string(),
        tokens: order.iter().map(|&i| names[i].to_string()).collect(),
        order,
        matrices,
        equivariance_gap: gap,
        x: x0.rows().into_iter().map(|r| r.to_vec()).collect(),
        typed: !typed.is_empty(),
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `self-attn`: every intermediate matrix of the chosen stage, and the permutation check.

    use leptos::prelude::*;

    use super::{Demo, Params, SelfAttention, SelfAttentionDemo, MAX, X_LIMIT};
    use crate::kit::matrix_canvas::{mat_table, Mat, MatrixGrid};
    use crate::kit::DemoCtx;
    use crate::state::fmt_num;

    fn mat(o: &SelfAttention, i: usize) -> Mat {
        let Some(m) = o.matrices.get(i) else { return Mat::default() };
        let (rows, cols) = m.labels(&o.tokens);
        Mat::new(format!("{}  {}", m.name, m.shape), m.rows.clone(), m.weights).labels(&rows, &cols)
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let params = ctx.params::<Params>();
        let out = Memo::new(move |_| params.with(SelfAttentionDemo::compute));
        let mats = Signal::derive(move || out.with(|o| (0..o.matrices.len()).map(|i| mat(o, i)).collect::<Vec<_>>()));
        view! {
            {x_editor(ctx, params, out)}
            <MatrixGrid ctx=ctx mats=mats/>
            <p class="readout">{move || out.with(|o| {
                let verdict = if o.equivariance_gap < 1e-9 {
                    "permutation-equivariant: shuffling the input only shuffles the output"
                } else {
                    "not equivariant: the output depends on the positions, not only on the set of tokens"
                };
                format!(
                    "Permutation check, max |f(P X) − P f(X)| for the reversal P: {} ({verdict}).",
                    crate::numerics::format::num(o.equivariance_gap)
                )
            })}</p>
            {move || ctx.show_numbers.get().then(|| out.with(|o| {
                (0..o.matrices.len()).map(|i| mat_table(&mat(o, i))).collect_view()
            }))}
        }
        .into_any()
    }

    /// X as a grid of number fields (rows = tokens in their original order). A committed value
    /// (Enter, Tab or leaving the field) replaces that cell, and the whole X then lives in the link;
    /// "Use the seed's X", or a new seed, drops the typed cells. The fields are
    /// never rebuilt, so editing one leaves focus where the keyboard put it.
    fn x_editor(ctx: DemoCtx, params: Memo<Params>, out: Memo<SelfAttention>) -> impl IntoView {
        let error = RwSignal::new(None::<String>);
        let set_cell = move |i: usize, j: usize, raw: String| match raw.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v.abs() <= X_LIMIT => {
                error.set(None);
                let mut x = out.with_untracked(|o| o.x.clone());
                if let Some(cell) = x.get_mut(i).and_then(|r| r.get_mut(j)) {
                    *cell = (v * 100.0).round() / 100.0 + 0.0; // hundredths; + 0.0 turns −0 into 0
                    ctx.set_params::<Params>(|p| p.x = x);
                }
            }
            _ => error.set(Some(format!(
                "{} is not a number from −{l} to {l}: X is unchanged.",
                crate::formats::echo::echo(raw.trim()),
                l = fmt_num(X_LIMIT)
            ))),
        };
        // A new seed draws a new X: typed cells would hide it, so they go.
        let seed = Memo::new(move |_| params.with(|p| p.seed));
        Effect::new(move |prev: Option<u32>| {
            let s = seed.get();
            if prev.is_some_and(|p| p != s) && !ctx.params_now::<Params>().x.is_empty() {
                ctx.set_params::<Params>(|p| p.x.clear());
            }
            s
        });
        // All 8 × 8 fields always exist and keep their place: a box sized to X's shape shows the
        // top-left n × d of them, and those outside it leave the Tab order and the accessibility
        // tree. Hiding them instead (display: none) made each n or d move lay the table out again,
        // 3 to 5 ms here. (The box's size is set directly: custom properties set on it would be
        // inherited by every field and restyle them all.) The table is never rebuilt, so editing a
        // cell leaves focus where it is.
        let shape = Memo::new(move |_| out.with(|o| (o.x.len(), o.x.first().map_or(0, Vec::len))));
        let row_out: Vec<Memo<bool>> = (0..MAX).map(|i| Memo::new(move |_| i >= shape.get().0)).collect();
        let col_out: Vec<Memo<bool>> = (0..MAX).map(|j| Memo::new(move |_| j >= shape.get().1)).collect();
        // One memo per field: a move that leaves a cell's text as it was leaves its field alone
        // (setting a field's value, even to the same text, makes the browser lay it out again).
        let cells: Vec<Memo<String>> = (0..MAX * MAX)
            .map(|k| {
                Memo::new(move |_| {
                    out.with(|o| o.x.get(k / MAX).and_then(|r| r.get(k % MAX)).map_or(String::new(), |&x| fmt_num(x)))
                })
            })
            .collect();
        let use_seed = move |_| ctx.set_params::<Params>(|p| p.x.clear());
        let clip = move || {
            let (n, d) = shape.get();
            format!("width: calc(var(--xh) + {d} * var(--xw)); height: calc(var(--xt) + {n} * var(--xr))")
        };
        view! {
            <div class="x-editor">
                <p class="x-editor-title">"Input X (one row per token): type in any cell"</p>
                <div class="x-cells-scroll">
                    <div class="x-cells-clip" style=clip>
                        <table class="x-cells">
                            // The corner heads nothing: a plain cell (an empty header confuses screen readers).
                            <tr><td class="x-corner"></td>{col_out.iter().enumerate().map(|(j, &out_j)| view! {
                                <th scope="col" aria-hidden=move || out_j.get().then_some("true")>{j}</th>
                            }).collect_view()}</tr>
                            {row_out.iter().enumerate().map(|(i, &out_i)| view! {
                                <tr aria-hidden=move || out_i.get().then_some("true")>
                                    <th scope="row">{format!("t{i}")}</th>
                                    {col_out.iter().enumerate().map(|(j, &out_j)| {
                                        let cell = cells[i * MAX + j];
                                        view! {
                                        <td><input type="number" step="0.1" min=-X_LIMIT max=X_LIMIT
                                            aria-label=format!("X row {i} column {j}")
                                            tabindex=move || (out_i.get() || out_j.get()).then_some("-1")
                                            aria-hidden=move || out_j.get().then_some("true")
                                            prop:value=move || cell.get()
                                            on:change=move |ev| set_cell(i, j, event_target_value(&ev)) /></td>
                                    }}).collect_view()}
                                </tr>
                            }).collect_view()}
                        </table>
                    </div>
                </div>
                {move || out.with(|o| o.typed).then(|| view! {
                    <button type="button" class="x-reset" on:click=use_seed>
                        "Use the seed's X"
                    </button>
                })}
                {move || error.get().map(|e| view! { <p class="notice error" role="alert">{e}</p> })}
            </div>
        }
    }
}
