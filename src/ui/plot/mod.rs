//! Canvas plotting helpers on plotters: sizing for the device pixel ratio, fonts, axes in the
//! theme's colours, a colour map, and a fast matrix blit for heatmaps.
pub mod colormap;
pub mod heatmap;

use leptos::prelude::window;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use web_sys::HtmlCanvasElement;

use super::theme::Palette;

pub type Area = DrawingArea<CanvasBackend, Shift>;

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
    let dpr = window().device_pixel_ratio().clamp(1.0, 3.0);
    let css_w = f64::from(canvas.client_width().max(240));
    let css_h = (css_w * aspect).clamp(min_h, max_h);
    let (w, h) = ((css_w * dpr).round() as u32, (css_h * dpr).round() as u32);
    if canvas.width() != w {
        canvas.set_width(w);
    }
    if canvas.height() != h {
        canvas.set_height(h);
    }
    let _ = canvas.style().set_property("height", &format!("{css_h}px"));
    Frame { scale: dpr, w, h }
}

/// A drawing area over the whole canvas, cleared to the background colour.
pub fn area(canvas: &HtmlCanvasElement, pal: &Palette) -> Result<Area, String> {
    let backend = CanvasBackend::with_canvas_object(canvas.clone()).ok_or("this browser gave no 2D canvas context")?;
    let root = backend.into_drawing_area();
    root.fill(&pal.bg).map_err(err)?;
    Ok(root)
}

pub fn err<E: std::fmt::Display>(e: E) -> String {
    format!("drawing failed: {e}")
}

/// Axis styling shared by every chart: theme colours, scaled fonts, light grid.
pub fn style_mesh<'a, 'b, X, Y>(
    chart: &'b mut ChartContext<'a, CanvasBackend, Cartesian2d<X, Y>>,
    f: &Frame,
    pal: &Palette,
    x_desc: &str,
    y_desc: &str,
) -> plotters::chart::MeshStyle<'a, 'b, X, Y, CanvasBackend>
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
        .light_line_style(TRANSPARENT);
    m
}

/// A legend in the theme's colours.
pub fn draw_legend<X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'_, CanvasBackend, Cartesian2d<X, Y>>,
    f: &Frame,
    pal: &Palette,
    pos: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(pos)
        .background_style(pal.bg.mix(0.85))
        .border_style(pal.grid)
        .label_font(f.font(12.0, pal.fg))
        .margin(f.px(6.0))
        .draw()
        .map_err(err)
}

/// A short line segment for legends.
pub fn legend_line(colour: RGBColor, width: u32) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(width))
}

/// A dot for legends.
pub fn legend_dot(colour: RGBColor, r: u32) -> impl Fn((i32, i32)) -> Circle<(i32, i32), u32> {
    move |(x, y)| Circle::new((x + 9, y), r, colour.filled())
}
