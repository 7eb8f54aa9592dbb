//! Canvas plotting helpers on plotters: sizing for the device pixel ratio, fonts, axes in the
//! theme's colours, a colour map, and a fast matrix blit for heatmaps.
pub mod backend;
pub mod bars;
pub mod colormap;
pub mod heatmap;
pub mod interned;
pub mod lines;
pub mod matrix;
pub mod widths;

use leptos::prelude::window;
use plotters::coord::Shift;
use plotters::prelude::*;
use web_sys::{HtmlCanvasElement, HtmlElement};

use super::theme::Palette;

pub use backend::FastCanvas;

pub type Area = DrawingArea<FastCanvas, Shift>;

/// The canvas's pixel size and the scale from CSS pixels to canvas pixels.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    pub scale: f64,
    pub w: u32,
    pub h: u32,
}

impl Frame {
    /// A length in CSS pixels, in canvas pixels.
    pub fn px(&self, css: f64) -> u32 {
        (css * self.scale).round() as u32
    }

    pub fn font(&self, size: f64, colour: RGBColor) -> TextStyle<'static> {
        ("sans-serif", size * self.scale).into_font().color(&colour)
    }
}

/// Sizes the canvas backing store to its CSS width × devicePixelRatio, with a height of
/// `aspect` × width kept within [min_h, max_h] CSS pixels.
pub fn fit_canvas(canvas: &HtmlCanvasElement, aspect: f64, min_h: f64, max_h: f64) -> Frame {
    fit_canvas_with(canvas, |w| (w * aspect).clamp(min_h, max_h))
}

/// Like `fit_canvas`, with the CSS height computed from the CSS width.
pub fn fit_canvas_with(canvas: &HtmlCanvasElement, height: impl Fn(f64) -> f64) -> Frame {
    let (dpr, css_h, w, h) = measure(canvas, height);
    if canvas.width() != w {
        canvas.set_width(w);
    }
    if canvas.height() != h {
        canvas.set_height(h);
    }
    set_css_height(canvas, css_h);
    Frame { scale: dpr, w, h }
}

/// Like `fit_canvas_with`, except that the canvas's pixel height only grows while its width
/// stays: resizing a canvas reallocates its pixels (3.3 ms of a 12.6 ms `self-attn` frame when
/// the height followed the d slider). `clip`, a box with `overflow: hidden`, takes the CSS height
/// in use and hides the rest; the canvas records that height (`data-used-h`), which "Download
/// image" crops to.
pub fn fit_canvas_growing(canvas: &HtmlCanvasElement, clip: &HtmlElement, height: impl Fn(f64) -> f64) -> Frame {
    let (dpr, css_h, w, h) = measure(canvas, height);
    if canvas.width() != w {
        canvas.set_width(w); // a new width: start again at the height needed now
        canvas.set_height(h);
    } else if canvas.height() < h {
        canvas.set_height(h);
    }
    set_css_height(canvas, canvas.height() as f64 / dpr);
    set_css_height(clip, css_h);
    let _ = canvas.set_attribute("data-used-h", &h.to_string());
    Frame { scale: dpr, w, h }
}

/// The device pixel ratio, the CSS height `height` gives for the canvas's CSS width, and that
/// size in canvas pixels.
fn measure(canvas: &HtmlCanvasElement, height: impl Fn(f64) -> f64) -> (f64, f64, u32, u32) {
    let dpr = window().device_pixel_ratio().clamp(1.0, 3.0);
    let css_w = widths::css_width(canvas).max(120.0);
    let css_h = height(css_w);
    (dpr, css_h, (css_w * dpr).round() as u32, (css_h * dpr).round() as u32)
}

/// Sets an element's CSS height, only when it changes: setting it invalidates the layout, and
/// the next canvas's client_width would then force the browser to lay the page out again
/// (once per canvas).
fn set_css_height(e: &HtmlElement, css_h: f64) {
    let css = format!("{css_h}px");
    let style = e.style();
    if style.get_property_value("height").ok().as_deref() != Some(css.as_str()) {
        let _ = style.set_property("height", &css);
    }
}

/// A drawing area over the whole canvas, cleared to the background colour.
pub fn area(canvas: &HtmlCanvasElement, pal: &Palette) -> Result<Area, String> {
    let backend = FastCanvas::new(canvas).ok_or("this browser gave no 2D canvas context")?;
    let root = backend.into_drawing_area();
    root.fill(&pal.bg).map_err(err)?;
    Ok(root)
}

pub fn err<E: std::fmt::Display>(e: E) -> String {
    format!("drawing failed: {e}")
}

/// Axis styling shared by every chart: theme colours, scaled fonts, light grid.
pub fn style_mesh<'a, 'b, X, Y>(
    chart: &'b mut ChartContext<'a, FastCanvas, Cartesian2d<X, Y>>,
    f: &Frame,
    pal: &Palette,
    x_desc: &str,
    y_desc: &str,
) -> plotters::chart::MeshStyle<'a, 'b, X, Y, FastCanvas>
where
    X: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let mut m = chart.configure_mesh();
    m.x_desc(x_desc.to_string())
        .y_desc(y_desc.to_string())
        .axis_desc_style(f.font(13.0, pal.fg))
        .label_style(f.font(12.0, pal.muted))
        .axis_style(pal.muted)
        .bold_line_style(pal.grid)
        .light_line_style(TRANSPARENT)
        // the book's number format: "20", not "20.0"
        .x_label_formatter(&tick_label)
        .y_label_formatter(&tick_label)
        // About one label per 60 CSS pixels across and per 28 up, at most plotters' ten: on a
        // phone eleven y labels in 130 pixels ran together. A caller may still ask for others.
        .x_labels(((f.w as f64 / f.scale) / 60.0).clamp(2.0, 10.0) as usize)
        .y_labels(((f.h as f64 / f.scale) / 28.0).clamp(3.0, 10.0) as usize);
    m
}

fn tick_label(v: &f64) -> String {
    crate::numerics::format::tick(*v)
}

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy)]
pub enum Mark {
    Line,
    /// A dashed line: a reference curve (a baseline).
    Dashed,
    Dot,
}

/// Draws a legend as a band of entries above the chart (wrapping onto more rows on narrow
/// canvases), so it never covers the data. Returns the area left for the chart.
pub fn legend_band(root: &Area, f: &Frame, pal: &Palette, items: &[(Mark, RGBColor, &str)]) -> Result<Area, String> {
    let font = f.font(12.0, pal.fg);
    let (pad, swatch, gap) = (f.px(10.0) as i32, f.px(20.0) as i32, f.px(16.0) as i32);
    let row_h = f.px(20.0) as i32;
    // Lay the entries out left to right, wrapping when the next one would not fit.
    let mut pos = Vec::with_capacity(items.len());
    let (mut x, mut y) = (pad, f.px(6.0) as i32);
    for (_, _, label) in items {
        let (tw, _) = root.estimate_text_size(label, &font).map_err(err)?;
        let w = swatch + f.px(6.0) as i32 + tw as i32;
        if x > pad && x + w > f.w as i32 - pad {
            x = pad;
            y += row_h;
        }
        pos.push((x, y));
        x += w + gap;
    }
    let band = (y + row_h) as u32;
    let (top, rest) = root.split_vertically(band);
    for ((mark, colour, label), (x, y)) in items.iter().zip(pos) {
        let cy = y + row_h / 2;
        match mark {
            Mark::Line => top.draw(&PathElement::new(vec![(x, cy), (x + swatch, cy)], colour.stroke_width(f.px(2.5)))),
            Mark::Dashed => {
                // Two dashes with a gap between, as the curve's 6-on, 4-off pattern reads at this length.
                let dash = (swatch - f.px(4.0) as i32) / 2;
                let style = colour.stroke_width(f.px(1.5));
                top.draw(&PathElement::new(vec![(x, cy), (x + dash, cy)], style))
                    .and_then(|_| top.draw(&PathElement::new(vec![(x + swatch - dash, cy), (x + swatch, cy)], style)))
            }
            Mark::Dot => top.draw(&Circle::new((x + swatch / 2, cy), f.px(4.5), colour.filled())),
        }
        .map_err(err)?;
        let style = font.clone().pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Left,
            plotters::style::text_anchor::VPos::Center,
        ));
        top.draw(&Text::new(label.to_string(), (x + swatch + f.px(6.0) as i32, cy), style)).map_err(err)?;
    }
    Ok(rest)
}

/// Many dots of one colour as a single canvas path: one fill instead of one per dot
/// (plotters fills each circle separately, which costs milliseconds for a few hundred).
/// `pts` are (x, y, radius) in canvas pixels.
pub fn batch_dots(canvas: &HtmlCanvasElement, pts: &[(i32, i32, f64)], colour: RGBAColor) -> Result<(), String> {
    if pts.is_empty() {
        return Ok(());
    }
    let ctx = heatmap::context(canvas)?;
    ctx.set_fill_style_str(&css(colour));
    ctx.begin_path();
    for &(x, y, r) in pts {
        ctx.move_to(x as f64 + r, y as f64);
        let _ = ctx.arc(x as f64, y as f64, r, 0.0, std::f64::consts::TAU);
    }
    ctx.fill();
    Ok(())
}

/// A line segment's two ends, in canvas pixels.
pub type Segment = ((i32, i32), (i32, i32));

/// Many line segments of one colour as a single canvas path. Segments in canvas pixels.
pub fn batch_segments(
    canvas: &HtmlCanvasElement,
    segs: &[Segment],
    colour: RGBAColor,
    width: f64,
) -> Result<(), String> {
    if segs.is_empty() {
        return Ok(());
    }
    let ctx = heatmap::context(canvas)?;
    ctx.set_stroke_style_str(&css(colour));
    ctx.set_line_width(width);
    ctx.begin_path();
    for &((x0, y0), (x1, y1)) in segs {
        ctx.move_to(x0 as f64, y0 as f64);
        ctx.line_to(x1 as f64, y1 as f64);
    }
    ctx.stroke();
    Ok(())
}

pub fn css(c: RGBAColor) -> String {
    format!("rgba({}, {}, {}, {})", c.0, c.1, c.2, c.3)
}
