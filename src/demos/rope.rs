//! Demo `rope`: with rotary embeddings the score depends on m − n only; with added sinusoids
//! it does not (chapter "positional").

use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::positional::{dot, rope, sinusoidal};
use crate::numerics::rng::normal_matrix;

pub const D: usize = 8;
pub const N: usize = 32;
pub const BASE: f64 = 10000.0;

crate::options! {
    /// How positions enter the score.
    pub enum Method {
        Rope = ("rope", "RoPE (rotate q and k)"),
        Added = ("added", "added sinusoidal"),
    }
}

crate::params! {
    pub struct Params {
        m: usize = Param::int("m", "Query position m", 0, 31, 5),
        n: usize = Param::int("n", "Key position n", 0, 31, 2),
        method: Method = Param::choice("method", "Method", Method::OPTIONS, 0),
        seed: u32 = Param::seed("seed", "Query and key", 1),
    }
}

pub struct RopeDemo;

impl Demo for RopeDemo {
    const ID: &'static str = "rope";
    const TITLE: &'static str = "Rotary embeddings: only the offset matters";
    const CAPTION: &'static str =
        "The score qᵀk for every query position m (rows) and key position n (columns). With RoPE every \
        diagonal, where m − n is fixed, has one colour.";
    type Params = Params;
    type Output = Rope;

    fn compute(p: &Params) -> Rope {
        compute(p.method, p.m, p.n, p.seed)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<RopeDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rope {
    pub method: String,
    /// score[m][n] for m, n in 0..32
    pub scores: Vec<Vec<f64>>,
    pub m: usize,
    pub n: usize,
    pub score: f64,
    /// max over the grid of |score(m, n) − score(m − n + c, c)| along each diagonal: 0 when
    /// the score depends on the offset only.
    pub diagonal_gap: f64,
}

pub fn score_grid(method: Method, seed: u32) -> Vec<Vec<f64>> {
    let q = normal_matrix(1, D, seed as u64, 1.0).row(0).to_vec();
    let k = normal_matrix(1, D, seed as u64 ^ 0x77, 1.0).row(0).to_vec();
    let pe = sinusoidal(N, D, BASE);
    (0..N)
        .map(|m| {
            (0..N)
                .map(|n| match method {
                    Method::Added => {
                        let qm: Vec<f64> = q.iter().zip(pe.row(m)).map(|(a, b)| a + b).collect();
                        let kn: Vec<f64> = k.iter().zip(pe.row(n)).map(|(a, b)| a + b).collect();
                        dot(&qm, &kn)
                    }
                    Method::Rope => dot(&rope(&q, m as f64, BASE), &rope(&k, n as f64, BASE)),
                })
                .collect()
        })
        .collect()
}

pub fn compute(method: Method, m: usize, n: usize, seed: u32) -> Rope {
    let scores = score_grid(method, seed);
    let mut gap = 0.0f64;
    for a in 0..N {
        for b in 0..N {
            // compare with the first entry on the same diagonal
            let c = a.min(b);
            gap = gap.max((scores[a][b] - scores[a - c][b - c]).abs());
        }
    }
    let (m, n) = (m.min(N - 1), n.min(N - 1));
    Rope { method: method.key().to_string(), score: scores[m][n], scores, m, n, diagonal_gap: gap }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `rope`: the score for every (m, n), with the chosen pair marked.

    use leptos::html::Canvas;
    use leptos::prelude::*;

    use super::{RopeDemo, N};
    use crate::kit::plot::heatmap::{context, draw_heatmap, HeatmapSpec};
    use crate::kit::plot::{area, fit_canvas};
    use crate::kit::DemoCtx;

    /// m − n with the book's minus sign.
    fn fmt_offset(m: usize, n: usize) -> String {
        crate::numerics::format::num(m as f64 - n as f64)
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<RopeDemo>(ctx);
        let canvas = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| {
            let c = canvas.get()?;
            let pal = *pal;
            Some(out.with(|o| {
                let f = fit_canvas(&c, 0.8, 260.0, 480.0);
                let root = area(&c, &pal)?;
                let lo = o.scores.iter().flatten().copied().fold(f64::INFINITY, f64::min);
                let hi = o.scores.iter().flatten().copied().fold(f64::NEG_INFINITY, f64::max);
                // m = 0 at the top: the query position reads downwards, like a matrix
                let value = |r: usize, col: usize| o.scores[r][col];
                let rect = draw_heatmap(
                    &c,
                    &root,
                    &f,
                    &pal,
                    &HeatmapSpec {
                        rows: N,
                        cols: N,
                        value: &value,
                        vmin: lo,
                        vmax: hi,
                        x_range: (0.0, N as f64),
                        y_range: (0.0, N as f64),
                        rows_down: true,
                        x_integer: true,
                        x_desc: "key position n",
                        y_desc: "query position m",
                        bar_label: "score",
                    },
                )?;
                // mark the chosen (m, n)
                let g = context(&c)?;
                let (cw, ch) = (rect.w / N as f64, rect.h / N as f64);
                g.set_stroke_style_str(&crate::kit::plot::interned::rgb(pal.orange));
                g.set_line_width(2.5 * f.scale);
                g.stroke_rect(rect.x + o.n as f64 * cw, rect.y + o.m as f64 * ch, cw, ch);
                Ok(())
            }))
        });
        let label = "Heatmap of the attention score for every query and key position";
        let readout = move || {
            out.with(|o| {
                let num = crate::numerics::format::num;
                format!(
                    "score(m = {}, n = {}) = {}, offset m − n = {}. Largest change along any diagonal: {}{}",
                    o.m,
                    o.n,
                    num(o.score),
                    o.m as i64 - o.n as i64,
                    num(o.diagonal_gap),
                    if o.diagonal_gap < 1e-9 {
                        " (only the offset matters)."
                    } else {
                        " (the absolute positions matter too)."
                    }
                )
            })
        };
        // The chosen query's row of the heatmap.
        let numbers = move || {
            out.with(|o| {
                let row = &o.scores[o.m.min(o.scores.len().saturating_sub(1))];
                crate::kit::number_table(
                    format!("Scores of query position m = {} against every key position n", o.m),
                    vec!["key position n".into(), "offset m − n".into(), "score".into()],
                    row.iter()
                        .enumerate()
                        .map(|(n, &x)| vec![n.to_string(), fmt_offset(o.m, n), crate::numerics::format::num(x)])
                        .collect(),
                )
            })
        };
        view! {
            <canvas node_ref=canvas class="plot" role="img" aria-label=label></canvas>
            <p class="readout">{readout}</p>
            {move || ctx.show_numbers.get().then(numbers)}
        }
        .into_any()
    }
}
