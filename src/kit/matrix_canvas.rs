//! Labelled matrices on one canvas that redraws when they change.

use crate::numerics::format::Signed;
use leptos::html::{Canvas, Div};
use leptos::prelude::*;
use ndarray::Array2;
use web_sys::{HtmlCanvasElement, HtmlElement};

use crate::kit::plot::fit_canvas_growing;
use crate::kit::plot::matrix::{draw_legend, draw_matrix, legend_layout, panel_height, MatrixPlot, Panel, Scale};
use crate::kit::DemoCtx;

/// A matrix with everything needed to draw it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mat {
    pub title: String,
    pub rows: Vec<Vec<f64>>,
    pub row_labels: Vec<String>,
    pub col_labels: Vec<String>,
    pub weights: bool,
    pub undefined: Option<Vec<bool>>,
}

impl Mat {
    pub fn new(title: impl Into<String>, rows: Vec<Vec<f64>>, weights: bool) -> Mat {
        let (r, c) = (rows.len(), rows.first().map_or(0, Vec::len));
        Mat {
            title: title.into(),
            rows,
            // 0-based, like every position and index in the book
            row_labels: (0..r).map(|i| i.to_string()).collect(),
            col_labels: (0..c).map(|i| i.to_string()).collect(),
            weights,
            undefined: None,
        }
    }

    pub fn labels(mut self, rows: &[impl ToString], cols: &[impl ToString]) -> Mat {
        self.row_labels = rows.iter().map(ToString::to_string).collect();
        self.col_labels = cols.iter().map(ToString::to_string).collect();
        self
    }
}

/// Draws a list of matrices on ONE canvas, laid out in columns of at least `min_w` CSS
/// pixels (one canvas instead of one per matrix: a slider that resizes a dozen canvases costs
/// a dozen surface reallocations per move).
#[component]
pub fn MatrixGrid(
    ctx: DemoCtx,
    #[prop(into)] mats: Signal<Vec<Mat>>,
    #[prop(default = 190.0)] min_w: f64,
) -> impl IntoView {
    let (canvas, clip) = (NodeRef::<Canvas>::new(), NodeRef::<Div>::new());
    ctx.paint(move |pal| {
        Some((canvas.get()?, clip.get()?)).map(|(c, d)| mats.with(|ms| draw_grid(&c, &d, pal, ms, min_w)))
    });
    let label = move || {
        mats.with(|ms| format!("Matrices: {}", ms.iter().map(|m| m.title.as_str()).collect::<Vec<_>>().join("; ")))
    };
    view! {
        <div class="matrix-clip" node_ref=clip>
            <canvas node_ref=canvas class="plot matrix" role="img" aria-label=label></canvas>
        </div>
    }
}

/// Most cells a grid prints values into (the default self-attention stage has 144).
const ANNOTATE_BUDGET: usize = 160;

fn dims(m: &Mat) -> (usize, usize, usize) {
    (
        m.rows.len(),
        m.rows.first().map_or(0, Vec::len),
        m.row_labels.iter().map(|l| l.chars().count()).max().unwrap_or(1),
    )
}

fn draw_grid(
    c: &HtmlCanvasElement,
    clip: &HtmlElement,
    pal: &crate::kit::theme::Palette,
    ms: &[Mat],
    min_w: f64,
) -> Result<(), String> {
    // Layout in CSS pixels: k columns of width w; each row of panels as tall as its tallest.
    let layout = |css_w: f64| {
        let k = ((css_w / min_w).floor() as usize).clamp(1, ms.len().max(1));
        let w = css_w / k as f64;
        let heights: Vec<f64> = ms
            .chunks(k)
            .map(|row| {
                row.iter()
                    .map(|m| {
                        let (r, c, l) = dims(m);
                        panel_height(w, r, c, l)
                    })
                    .fold(0.0, f64::max)
            })
            .collect();
        (k, w, heights)
    };
    const LEGEND: f64 = 24.0; // CSS pixels for a line of the colour key under the grid
    let (weights, signed) = (ms.iter().any(|m| m.weights), ms.iter().any(|m| !m.weights));
    let legend = |css_w: f64| LEGEND * if legend_layout(css_w, weights, signed).0 { 2.0 } else { 1.0 };
    let f = fit_canvas_growing(c, clip, |css_w| layout(css_w).2.iter().sum::<f64>().max(20.0) + legend(css_w));
    let (k, w, heights) = layout(f.w as f64 / f.scale);
    let ctx = crate::kit::plot::heatmap::context(c)?;
    ctx.set_fill_style_str(&crate::kit::plot::interned::rgb(pal.bg));
    // All of it: the part below f.h too.
    ctx.fill_rect(0.0, 0.0, f.w as f64, c.height() as f64);
    // Printed values cost a fillText each: only for grids small enough to stay under a frame.
    let annotate = ms
        .iter()
        .map(|m| {
            let (r, c, _) = dims(m);
            r * c
        })
        .sum::<usize>()
        <= ANNOTATE_BUDGET;
    let mut y = 0.0;
    for (row, h) in ms.chunks(k).zip(heights) {
        for (i, m) in row.iter().enumerate() {
            let (nr, nc, _) = dims(m);
            let a = Array2::from_shape_vec((nr, nc), m.rows.iter().flatten().copied().collect())
                .map_err(|e| e.to_string())?;
            let plot = MatrixPlot {
                title: &m.title,
                m: a.view(),
                rows: &m.row_labels,
                cols: &m.col_labels,
                scale: if m.weights { Scale::Weights } else { Scale::Signed },
                undefined_rows: m.undefined.as_deref(),
                annotate,
            };
            let panel = Panel { x: i as f64 * w * f.scale, y: y * f.scale, w: w * f.scale, h: h * f.scale };
            draw_matrix(c, &f, pal, &plot, panel)?;
        }
        y += h;
    }
    let (x0, y0, css_w) = (6.0 * f.scale, (y + LEGEND / 2.0) * f.scale, f.w as f64 / f.scale);
    draw_legend(&ctx, &f, pal, x0, y0, LEGEND * f.scale, css_w, weights, signed);
    Ok(())
}

/// The matrix as an HTML table, for "Show numbers".
pub fn mat_table(m: &Mat) -> impl IntoView {
    let head = std::iter::once(String::new()).chain(m.col_labels.iter().cloned()).collect();
    let rows = m
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            std::iter::once(m.row_labels.get(i).cloned().unwrap_or_default()).chain(r.iter().map(|v| num(*v))).collect()
        })
        .collect();
    super::number_table(m.title.clone(), head, rows)
}

fn num(v: f64) -> String {
    if v == f64::NEG_INFINITY {
        "−∞".into()
    } else if v.abs() >= 1e4 {
        crate::numerics::format::num(v)
    } else {
        format!("{v:.4}", v = Signed(v))
    }
}
