//! Curves against x on linear axes, with a legend band: the plot of the demos that follow a
//! number across positions, offsets or turns. A dashed series is a reference (a baseline).

use crate::numerics::format::Signed;
use plotters::prelude::*;
use web_sys::HtmlCanvasElement;

use super::{area, err, fit_canvas_with, legend_band, style_mesh, Mark};
use crate::kit::theme::Palette;

/// One curve: its legend entry, colour, points (x ascending) and whether it is a dashed reference.
pub struct Curve<'a> {
    pub label: &'a str,
    pub colour: RGBColor,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
}

pub struct Lines<'a> {
    pub curves: &'a [Curve<'a>],
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    /// The y axis's range (None: from the data, with a margin).
    pub y_range: Option<(f64, f64)>,
    /// Label x with whole numbers only (an index axis).
    pub x_integer: bool,
}

pub fn draw_lines(canvas: &HtmlCanvasElement, pal: &Palette, l: &Lines) -> Result<(), String> {
    // The legend wraps on a narrow canvas: give its rows height of their own, so that the plot
    // keeps its size on a phone (an entry is about 7 px a character plus 42 px of swatch and gap).
    let legend_w: f64 = l.curves.iter().map(|c| 7.0 * c.label.chars().count() as f64 + 42.0).sum();
    let f = fit_canvas_with(canvas, |w| {
        let rows = (legend_w / (w - 20.0).max(100.0)).ceil().max(1.0);
        (w * 0.6).clamp(220.0, 340.0) + 20.0 * (rows - 1.0)
    });
    let root = area(canvas, pal)?;
    let items: Vec<(Mark, RGBColor, &str)> =
        l.curves.iter().map(|c| (if c.dashed { Mark::Dashed } else { Mark::Line }, c.colour, c.label)).collect();
    let plot = legend_band(&root, &f, pal, &items)?;
    let xs = l.curves.iter().flat_map(|c| c.points.iter().map(|p| p.0));
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let (x0, x1) = if x0 < x1 { (x0, x1) } else { (x0.min(0.0), x0.max(0.0) + 1.0) };
    let (y0, y1) = l.y_range.unwrap_or_else(|| {
        let ys = l.curves.iter().flat_map(|c| c.points.iter().map(|p| p.1)).filter(|y| y.is_finite());
        let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y), b.max(y)));
        let pad = ((hi - lo) * 0.08).max(1e-9);
        if lo <= hi {
            (lo - pad, hi + pad)
        } else {
            (0.0, 1.0)
        }
    });
    let mut chart = ChartBuilder::on(&plot)
        .margin(f.px(10.0))
        .x_label_area_size(f.px(40.0))
        .y_label_area_size(f.px(56.0))
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    let mut mesh = style_mesh(&mut chart, &f, pal, l.x_desc, l.y_desc);
    if l.x_integer {
        mesh.x_label_formatter(&|v| {
            if (v - v.round()).abs() < 1e-9 {
                format!("{v:.0}", v = Signed(v))
            } else {
                String::new()
            }
        });
    }
    mesh.draw().map_err(err)?;
    for c in l.curves {
        let pts: Vec<(f64, f64)> = c.points.iter().copied().filter(|p| p.1.is_finite()).collect();
        if c.dashed {
            let style = c.colour.stroke_width(f.px(1.5));
            chart.draw_series(DashedLineSeries::new(pts, f.px(6.0), f.px(4.0), style)).map_err(err)?;
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), c.colour.stroke_width(f.px(2.0)))).map_err(err)?;
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, f.px(2.0), c.colour.filled()))).map_err(err)?;
        }
    }
    root.present().map_err(err)
}
