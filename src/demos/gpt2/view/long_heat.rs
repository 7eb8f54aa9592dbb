//! The selected head's attention for long prompts: one image with position axes.

use super::Result_;
use crate::kit::plot::heatmap::{draw_heatmap, HeatmapSpec};

/// Above this many tokens the heatmap shows positions on its axes instead of token labels.
pub const LABELLED_MAX: usize = 40;

pub fn draw_long_heat(
    c: &web_sys::HtmlCanvasElement,
    pal: &crate::kit::theme::Palette,
    r: &Result_,
    l: usize,
    h: usize,
) -> Result<(), String> {
    let t = r.t();
    let f = crate::kit::plot::fit_canvas(c, 0.9, 300.0, 720.0);
    let root = crate::kit::plot::area(c, pal)?;
    if r.weight(l, h, 0, 0).is_none() {
        return Ok(()); // this layer was not sent (a long prompt on a large model): the next analysis brings it
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
