//! Small labelled matrices (Q, K, V, scores, weights …) drawn directly on a 2D canvas: a title
//! with the shape, row and column labels, one coloured cell per entry and, when the cells are
//! big enough, the value printed in each. Signed matrices use a blue–white–red scale centred
//! on 0; weight matrices use viridis on [0, 1], so heads and sequences compare at a glance.

use crate::numerics::format::Signed;
use ndarray::ArrayView2;
use web_sys::HtmlCanvasElement;

use super::colormap::viridis;
use super::heatmap::{blit_pixels, context, CellRect};
use super::interned;
use super::Frame;
use crate::kit::theme::Palette;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Values of either sign: blue (negative) – white (0) – red (positive), ± max |v|.
    Signed,
    /// Attention weights: viridis from 0 to 1.
    Weights,
}

pub struct MatrixPlot<'a> {
    pub title: &'a str,
    pub m: ArrayView2<'a, f64>,
    pub rows: &'a [String],
    pub cols: &'a [String],
    pub scale: Scale,
    /// Rows with no softmax (every key masked with −∞): drawn hatched, labelled "0/0".
    pub undefined_rows: Option<&'a [bool]>,
    /// Print each value in its cell (when the cell is big enough to read it).
    pub annotate: bool,
}

pub fn diverging(t: f64) -> [u8; 3] {
    // t in [−1, 1]: −1 blue (37, 99, 235), 0 white, +1 red (220, 38, 38)
    let t = t.clamp(-1.0, 1.0);
    let (end, u) = if t < 0.0 { ([37.0, 99.0, 235.0], -t) } else { ([220.0, 38.0, 38.0], t) };
    [0, 1, 2].map(|k| (255.0 + u * (end[k] - 255.0)).round() as u8)
}

/// A panel of the canvas, in canvas pixels.
#[derive(Debug, Clone, Copy)]
pub struct Panel {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// The height in CSS pixels a matrix needs at panel width `w` (CSS pixels).
pub fn panel_height(w: f64, nr: usize, nc: usize, label_chars: usize) -> f64 {
    let label_w = 8.0 + 7.0 * label_chars.max(1) as f64;
    44.0 + nr as f64 * cell_size(w, label_w, nc) + 4.0
}

fn cell_size(w: f64, label_w: f64, nc: usize) -> f64 {
    ((w - label_w - 6.0) / nc.max(1) as f64).clamp(8.0, 46.0)
}

/// Label every `k`-th row or column so that labels `label` pixels long never overlap on cells
/// `cell` pixels apart.
pub fn label_stride(label: f64, cell: f64) -> usize {
    if cell <= 0.0 || !label.is_finite() {
        return 1;
    }
    ((label / cell).ceil() as usize).max(1)
}

/// `label` in at most `chars` characters: whole, or its first `chars − 1` and "…".
pub fn cut_label(label: &str, chars: usize) -> String {
    if label.chars().count() <= chars {
        return label.to_string();
    }
    let mut cut: String = label.chars().take(chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Draws the matrix in `panel` of the canvas. Returns the cell size in canvas pixels.
pub fn draw_matrix(
    canvas: &HtmlCanvasElement,
    f: &Frame,
    pal: &Palette,
    p: &MatrixPlot,
    panel: Panel,
) -> Result<f64, String> {
    let ctx = context(canvas)?;
    ctx.save();
    let _ = ctx.translate(panel.x, panel.y);
    let r = draw_at_origin(canvas, &ctx, f, pal, p, panel);
    ctx.restore();
    r
}

fn draw_at_origin(
    canvas: &HtmlCanvasElement,
    ctx: &web_sys::CanvasRenderingContext2d,
    f: &Frame,
    pal: &Palette,
    p: &MatrixPlot,
    panel: Panel,
) -> Result<f64, String> {
    let (nr, nc) = p.m.dim();
    let s = f.scale;
    let font = |px: f64| interned::font(format!("{}px sans-serif", (px * s).round()));
    ctx.set_font(&font(12.0));
    // One measurement, of the longest label (by characters): labels are short and alike, and
    // measureText per label was a tenth of a 12-matrix frame.
    let longest = p.rows.iter().max_by_key(|r| r.chars().count()).map_or("", String::as_str);
    let label_w = ctx.measure_text(longest).map(|m| m.width()).unwrap_or(0.0) + 8.0 * s;
    let (top, left) = (40.0 * s, label_w.max(12.0 * s));
    let cell =
        ((panel.w - left - 6.0 * s) / nc.max(1) as f64).min((panel.h - top - 4.0 * s) / nr.max(1) as f64).max(1.0);
    let rgb = |c: [u8; 3]| format!("rgb({}, {}, {})", c[0], c[1], c[2]);
    let (fg, muted) = (interned::rgb(pal.fg), interned::rgb(pal.muted));
    // title
    ctx.set_fill_style_str(&fg);
    ctx.set_text_align("left");
    ctx.set_text_baseline("top");
    ctx.set_font(&interned::font(format!("600 {}", font(13.0))));
    let _ = ctx.fill_text(p.title, 2.0 * s, 2.0 * s);
    // column labels
    ctx.set_font(&font(11.0));
    ctx.set_fill_style_str(&muted);
    ctx.set_text_align("center");
    ctx.set_text_baseline("bottom");
    // Labels wider than their column are cut to fit ("quic…"), so that every column keeps a
    // label (two columns of the same word stay told apart; the row labels give the whole words);
    // only where not even three characters fit is every k-th column labelled, k from the widest
    // label. Either way no two drawn labels come closer than 4 px.
    let widest = p.cols.iter().max_by_key(|c| c.chars().count()).map_or("", String::as_str);
    let col_w = ctx.measure_text(widest).map(|m| m.width()).unwrap_or(0.0) + 4.0 * s;
    let per_char = (col_w - 4.0 * s) / widest.chars().count().max(1) as f64;
    let fit = if per_char > 0.0 { ((cell - 4.0 * s) / per_char).floor() as usize } else { usize::MAX };
    let col_step = if fit >= 3 { 1 } else { label_stride(col_w, cell) };
    // A label's measured width fits its column with 4 px to spare (only labels that need cutting
    // are measured: characters differ in width, so the estimate above is only where to start).
    let fits = |t: &str| ctx.measure_text(t).map(|m| m.width()).unwrap_or(0.0) + 4.0 * s <= cell;
    for (j, c) in p.cols.iter().enumerate().take(nc).step_by(col_step) {
        let mut shown = c.clone();
        let chars = c.chars().count();
        // A label a character or more under the estimate fits; longer ones are measured.
        if col_step == 1 && chars >= fit && !fits(c) {
            let mut k = fit.min(chars);
            shown = cut_label(c, k);
            while k > 2 && !fits(&shown) {
                k -= 1;
                shown = cut_label(c, k);
            }
        }
        let _ = ctx.fill_text(&shown, left + (j as f64 + 0.5) * cell, top - 3.0 * s);
    }
    // row labels, every k-th when rows are shorter than a line of text
    ctx.set_text_align("right");
    ctx.set_text_baseline("middle");
    for (i, r) in p.rows.iter().enumerate().take(nr).step_by(label_stride(12.0 * s, cell)) {
        let _ = ctx.fill_text(r, left - 5.0 * s, top + (i as f64 + 0.5) * cell);
    }
    let vmax = p.m.iter().filter(|v| v.is_finite()).fold(0.0f64, |a, v| a.max(v.abs())).max(1e-12);
    // Printing a value costs one fillText per cell (tens of µs each without a GPU): only
    // where the caller allows it and the cell is big enough to read.
    let annotate = p.annotate && cell >= 34.0 * s;
    let colour_of = |i: usize, j: usize| {
        let (undefined, v) = (p.undefined_rows.is_some_and(|u| u.get(i).copied().unwrap_or(false)), p.m[[i, j]]);
        if undefined || !v.is_finite() {
            [pal.grid.0, pal.grid.1, pal.grid.2]
        } else {
            match p.scale {
                Scale::Signed => diverging(v / vmax),
                Scale::Weights => viridis(v),
            }
        }
    };
    if !annotate {
        // Colours only: the whole matrix as one image scaled up with smoothing off, then the
        // 1-pixel gaps between cells as one stroked path (a fillStyle and a fillRect per cell
        // cost most of a 12-matrix frame).
        let mut px = Vec::with_capacity(nr * nc * 4);
        for i in 0..nr {
            for j in 0..nc {
                let [r, g, b] = colour_of(i, j);
                px.extend_from_slice(&[r, g, b, 255]);
            }
        }
        // In panel coordinates: drawImage follows the context's translation to the panel.
        blit_pixels(canvas, CellRect { x: left, y: top, w: nc as f64 * cell, h: nr as f64 * cell }, nc, nr, &px)?;
        ctx.set_stroke_style_str(&interned::rgb(pal.bg));
        ctx.set_line_width(1.0 * s);
        ctx.begin_path();
        for j in 0..=nc {
            ctx.move_to(left + j as f64 * cell, top);
            ctx.line_to(left + j as f64 * cell, top + nr as f64 * cell);
        }
        for i in 0..=nr {
            ctx.move_to(left, top + i as f64 * cell);
            ctx.line_to(left + nc as f64 * cell, top + i as f64 * cell);
        }
        ctx.stroke();
        return Ok(cell);
    }
    ctx.set_text_align("center");
    ctx.set_font(&font(if cell >= 44.0 * s { 11.0 } else { 9.5 }));
    for i in 0..nr {
        let undefined = p.undefined_rows.is_some_and(|u| u.get(i).copied().unwrap_or(false));
        for j in 0..nc {
            let v = p.m[[i, j]];
            let (x, y) = (left + j as f64 * cell, top + i as f64 * cell);
            let colour = colour_of(i, j);
            ctx.set_fill_style_str(&rgb(colour));
            ctx.fill_rect(x + 0.5 * s, y + 0.5 * s, cell - 1.0 * s, cell - 1.0 * s);
            let text = if undefined {
                "0/0".to_string()
            } else if v == f64::NEG_INFINITY {
                "−∞".to_string()
            } else {
                short(v)
            };
            // dark text on light cells, light on dark
            let lum = 0.299 * colour[0] as f64 + 0.587 * colour[1] as f64 + 0.114 * colour[2] as f64;
            ctx.set_fill_style_str(if lum > 140.0 { "#111" } else { "#f5f5f5" });
            let _ = ctx.fill_text(&text, x + cell / 2.0, y + cell / 2.0);
        }
    }
    Ok(cell)
}

/// Where the colour key stands under a grid `css_w` CSS pixels wide: both keys on one line
/// (`false`), or one line each (`true`), and whether the signed key's note is the short one.
/// The keys take about 170 and 360 CSS pixels (their texts at 11 px).
pub fn legend_layout(css_w: f64, weights: bool, signed: bool) -> (bool, bool) {
    (weights && signed && css_w < 560.0, signed && css_w < 380.0)
}

/// The colour key under a grid of matrices, in canvas pixels at (x, y): the weight scale
/// (viridis, 0 to 1) and/or the signed scale (blue, white, red, per matrix ± its largest |v|),
/// laid out by [`legend_layout`] for a canvas `css_w` CSS pixels wide; lines `line` apart.
#[allow(clippy::too_many_arguments)]
pub fn draw_legend(
    ctx: &web_sys::CanvasRenderingContext2d,
    f: &Frame,
    pal: &Palette,
    x: f64,
    y: f64,
    line: f64,
    css_w: f64,
    weights: bool,
    signed: bool,
) {
    let (two_lines, short) = legend_layout(css_w, weights, signed);
    let s = f.scale;
    let fg = interned::rgb(pal.muted);
    ctx.set_font(&interned::font(format!("{}px sans-serif", (11.0 * s).round())));
    ctx.set_text_baseline("middle");
    ctx.set_text_align("left");
    let (bar_w, bar_h, steps) = (90.0 * s, 10.0 * s, 30);
    // One key at (cx, y): its end, where the next may start.
    let key = |cx: f64, y: f64, label_lo: &str, label_hi: &str, note: &str, colour: &dyn Fn(f64) -> [u8; 3]| {
        ctx.set_fill_style_str(&fg);
        let _ = ctx.fill_text(label_lo, cx, y);
        let cx = cx + ctx.measure_text(label_lo).map(|m| m.width()).unwrap_or(0.0) + 4.0 * s;
        for i in 0..steps {
            let c = colour(i as f64 / (steps - 1) as f64);
            ctx.set_fill_style_str(&format!("rgb({}, {}, {})", c[0], c[1], c[2]));
            ctx.fill_rect(cx + i as f64 * bar_w / steps as f64, y - bar_h / 2.0, bar_w / steps as f64 + 0.5, bar_h);
        }
        let cx = cx + bar_w + 4.0 * s;
        ctx.set_fill_style_str(&fg);
        let text = format!("{label_hi}{note}");
        let _ = ctx.fill_text(&text, cx, y);
        cx + ctx.measure_text(&text).map(|m| m.width()).unwrap_or(0.0) + 16.0 * s
    };
    let mut cx = x;
    if weights {
        cx = key(cx, y, "weight 0", "1", "", &|t| viridis(t));
    }
    if signed {
        let note = if short { " (per matrix)" } else { " (each matrix: its largest |value|)" };
        let (cx, y) = if two_lines { (x, y + line) } else { (cx, y) };
        key(cx, y, "−max", "+max", note, &|t| diverging(2.0 * t - 1.0));
    }
}

/// A matrix cell: two decimals below 10 (0.12, −1.23), one below 100 (12.3), none below 1000,
/// and from 1000 the book's number format (`numerics::format::num`).
pub fn short(v: f64) -> String {
    // A weight of 0.004 reads "0.00" among two-decimal cells, not "4e−3" (and −0.004 too:
    // never "−0.00").
    let v = if v.abs() < 0.005 { 0.0 } else { v };
    let a = v.abs();
    if a >= 1000.0 {
        crate::numerics::format::num(v)
    } else if a >= 100.0 {
        format!("{v:.0}", v = Signed(v))
    } else if a >= 10.0 {
        format!("{v:.1}", v = Signed(v))
    } else {
        format!("{v:.2}", v = Signed(v))
    }
}
