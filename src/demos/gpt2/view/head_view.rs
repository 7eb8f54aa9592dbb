//! bertviz's head view on a canvas: lines from the query token to the tokens it attends to.

use super::super::clip_label;
use super::Result_;
use crate::kit::plot::fit_canvas_with;

/// Twelve distinguishable colours, one per head (GPT-2 small has 12 heads per layer).
pub fn head_colour(h: usize) -> [u8; 3] {
    const C: [[u8; 3]; 12] = [
        [31, 119, 180],
        [255, 127, 14],
        [44, 160, 44],
        [214, 39, 40],
        [148, 103, 189],
        [140, 86, 75],
        [227, 119, 194],
        [127, 127, 127],
        [188, 189, 34],
        [23, 190, 207],
        [0, 0, 128],
        [128, 0, 0],
    ];
    C[h % C.len()]
}

pub const HEAD_VIEW_TOP: f64 = 8.0;
pub const HEAD_VIEW_ROW: f64 = 18.0;

/// bertviz's head view: queries on the left, keys on the right, a line from the selected query
/// to each key with opacity = weight, for every head of the layer (the focused head on top).
pub fn draw_head_view(
    c: &web_sys::HtmlCanvasElement,
    pal: &crate::kit::theme::Palette,
    r: &Result_,
    l: usize,
    sel: usize,
    focus: Option<usize>,
) -> Result<(), String> {
    let t = r.t();
    let f = fit_canvas_with(c, |_| HEAD_VIEW_TOP * 2.0 + HEAD_VIEW_ROW * t as f64);
    let s = f.scale;
    let w = f.w as f64 / s;
    let ctx = crate::kit::plot::heatmap::context(c)?;
    ctx.set_fill_style_str(&crate::kit::plot::interned::rgb(pal.bg));
    ctx.fill_rect(0.0, 0.0, f.w as f64, f.h as f64);
    let (left, right) = (w * 0.36, w * 0.64);
    let y = |i: usize| (HEAD_VIEW_TOP + (i as f64 + 0.5) * HEAD_VIEW_ROW) * s;
    ctx.set_font(&format!("{}px ui-monospace, monospace", (12.0 * s).round()));
    ctx.set_text_baseline("middle");
    // Rows are taller than the text, so labels cannot meet vertically; across, each column of
    // labels gets the space beside the lines (a monospace font: one measured character).
    let char_w = ctx.measure_text("M").map(|m| m.width() / s).unwrap_or(7.2).max(1.0);
    let max_chars = ((left - 8.0) / char_w).floor().max(1.0) as usize;
    for (i, tok) in r.a.tokens.iter().enumerate() {
        let text = clip_label(&tok.text.replace(' ', "·").replace('\n', "↵"), max_chars);
        let strong = i == sel;
        let colour =
            if strong { crate::kit::plot::interned::rgb(pal.orange) } else { crate::kit::plot::interned::rgb(pal.fg) };
        ctx.set_fill_style_str(&colour);
        ctx.set_text_align("right");
        let _ = ctx.fill_text(&text, (left - 6.0) * s, y(i));
        ctx.set_text_align("left");
        ctx.set_fill_style_str(&crate::kit::plot::interned::rgb(pal.fg));
        let _ = ctx.fill_text(&text, (right + 6.0) * s, y(i));
    }
    ctx.set_line_width(2.0 * s);
    let heads: Vec<usize> = (0..r.a.n_head).filter(|&h| Some(h) != focus).chain(focus).collect();
    for h in heads {
        let [cr, cg, cb] = head_colour(h);
        let dim = if focus.is_some_and(|f| f != h) { 0.12 } else { 1.0 };
        for j in 0..=sel {
            let wgt = r.weight(l, h, sel, j).unwrap_or(0.0) as f64;
            if wgt < 0.01 {
                continue;
            }
            ctx.set_stroke_style_str(&format!("rgba({cr}, {cg}, {cb}, {:.3})", (wgt * dim).min(1.0)));
            ctx.begin_path();
            ctx.move_to(left * s, y(sel));
            ctx.line_to(right * s, y(j));
            ctx.stroke();
        }
    }
    Ok(())
}
