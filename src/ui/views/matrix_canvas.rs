//! A canvas that shows one labelled matrix and redraws when it changes.

use leptos::html::Canvas;
use leptos::prelude::*;
use ndarray::Array2;

use crate::ui::browser::mark_paint;
use crate::ui::demo_frame::DemoCtx;
use crate::ui::plot::fit_canvas_with;
use crate::ui::plot::matrix::{draw_matrix, MatrixPlot, Scale};

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
            row_labels: (1..=r).map(|i| i.to_string()).collect(),
            col_labels: (1..=c).map(|i| i.to_string()).collect(),
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

/// Draws `mat()` on a canvas sized to the matrix: cells up to 46 px square.
#[component]
pub fn MatrixCanvas(ctx: DemoCtx, #[prop(into)] mat: Signal<Mat>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    Effect::new(move |_| {
        ctx.resize.track();
        let pal = ctx.theme.get().palette();
        let Some(c) = canvas.get() else { return };
        let r = mat.with(|m| {
            let (nr, nc) = (m.rows.len(), m.rows.first().map_or(0, Vec::len));
            let label_w = 8.0 + 7.0 * m.row_labels.iter().map(|l| l.chars().count()).max().unwrap_or(1) as f64;
            let f = fit_canvas_with(&c, |w| 44.0 + nr as f64 * ((w - label_w - 6.0) / nc.max(1) as f64).clamp(8.0, 46.0) + 4.0);
            let a = Array2::from_shape_vec((nr, nc), m.rows.iter().flatten().copied().collect()).map_err(|e| e.to_string())?;
            let plot = MatrixPlot {
                title: &m.title,
                m: a.view(),
                rows: &m.row_labels,
                cols: &m.col_labels,
                scale: if m.weights { Scale::Weights } else { Scale::Signed },
                undefined_rows: m.undefined.as_deref(),
            };
            draw_matrix(&c, &f, &pal, &plot).map(|_| ())
        });
        ctx.report(r);
        mark_paint();
    });
    let label = move || mat.with(|m| format!("Matrix {}: {} rows, {} columns", m.title, m.rows.len(), m.rows.first().map_or(0, Vec::len)));
    view! { <canvas node_ref=canvas class="plot matrix" role="img" aria-label=label></canvas> }
}

/// The matrix as an HTML table, for "Show numbers".
pub fn mat_table(m: &Mat) -> impl IntoView {
    let head = std::iter::once(String::new()).chain(m.col_labels.iter().cloned()).collect();
    let rows = m
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| std::iter::once(m.row_labels.get(i).cloned().unwrap_or_default()).chain(r.iter().map(|v| num(*v))).collect())
        .collect();
    super::number_table(m.title.clone(), head, rows)
}

fn num(v: f64) -> String {
    if v == f64::NEG_INFINITY {
        "−∞".into()
    } else if v.abs() >= 1e4 {
        format!("{v:.0e}")
    } else {
        format!("{v:.4}")
    }
}
