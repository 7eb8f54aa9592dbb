//! The selected head's attention as a heatmap: a labelled grid of tokens, or for long prompts
//! one image with position axes.

use leptos::html::Canvas;
use leptos::prelude::*;

use super::store::{store, Answer};
use crate::kit::matrix_canvas::{Mat, MatrixGrid};
use crate::kit::plot::heatmap::{draw_heatmap, HeatmapSpec};

/// Above this many tokens the heatmap shows positions on its axes instead of token labels.
pub const LABELLED_MAX: usize = 40;

#[component]
pub fn Heatmap() -> impl IntoView {
    let s = store();
    let (ctx, sel, result) = (s.ctx, s.sel, s.result);
    let heat = Signal::derive(move || {
        let Some((l, h, _)) = sel.get() else { return Vec::new() };
        result.with(|r| {
            let Some(r) = r.as_ref() else { return Vec::new() };
            let t = r.t();
            if t > LABELLED_MAX || r.weight(l, h, 0, 0).is_none() {
                return Vec::new();
            }
            let labels: Vec<String> = r.a.tokens.iter().map(|t| t.text.replace(' ', "·")).collect();
            let rows = (0..t).map(|i| (0..t).map(|j| r.weight(l, h, i, j).unwrap_or(0.0) as f64).collect()).collect();
            // Beside a second model, the heatmap is the first one's.
            let model = if s.compared.get() { "Model A, " } else { "" };
            vec![Mat::new(format!("{model}layer {l}, head {h}: rows = queries, columns = keys"), rows, true)
                .labels(&labels, &labels)]
        })
    });
    // Long prompts: one image with position axes instead of a labelled grid.
    let long_heat = NodeRef::<Canvas>::new();
    ctx.paint(move |pal| {
        let c = long_heat.get()?;
        let (l, h, _) = sel.get()?;
        Some(result.with(|r| match r.as_ref().filter(|r| r.t() > LABELLED_MAX) {
            Some(r) => draw_long_heat(&c, pal, r, l, h),
            None => Ok(()),
        }))
    });
    let is_long = is_long();
    let label = move || {
        sel.get()
            .map(|(l, h, _)| format!("Attention of layer {l}, head {h}: query position against key position"))
            .unwrap_or_default()
    };
    view! {
        <div class:hidden=is_long><MatrixGrid ctx=ctx mats=heat min_w=320.0/></div>
        <canvas node_ref=long_heat class="plot long-heat" class:hidden=move || !is_long() role="img"
            aria-label=label></canvas>
    }
}

/// Whether the prompt is too long for token labels (the head view hides, the heatmap has axes).
pub fn is_long() -> impl Fn() -> bool + Copy + Send + Sync + 'static {
    let result = store().result;
    move || result.with(|r| r.as_ref().is_some_and(|r| r.t() > LABELLED_MAX))
}

fn draw_long_heat(
    c: &web_sys::HtmlCanvasElement,
    pal: &crate::kit::theme::Palette,
    r: &Answer,
    l: usize,
    h: usize,
) -> Result<(), String> {
    let t = r.t();
    let f = crate::kit::plot::fit_canvas(c, 0.9, 300.0, 720.0);
    let root = crate::kit::plot::area(c, pal)?;
    if r.weight(l, h, 0, 0).is_none() {
        // This layer was not sent (a long prompt on a large model): the next analysis brings it.
        return Ok(());
    }
    // Image row 0 is the top: query position 0.
    let value = |row: usize, col: usize| r.weight(l, h, row, col).unwrap_or(0.0) as f64;
    let spec = HeatmapSpec {
        rows: t,
        cols: t,
        value: &value,
        vmin: 0.0,
        vmax: 1.0,
        x_range: (0.0, t as f64),
        y_range: (0.0, t as f64),
        rows_down: true,
        x_integer: true,
        x_desc: "key position",
        y_desc: "query position",
        bar_label: "weight",
    };
    draw_heatmap(c, &root, &f, pal, &spec)?;
    Ok(())
}
