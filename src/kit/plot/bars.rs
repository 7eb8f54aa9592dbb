//! Grouped bar charts: one group per category, one bar per series, with a legend band.

use plotters::prelude::*;
use web_sys::HtmlCanvasElement;

use super::{area, err, fit_canvas, legend_band, style_mesh, Mark};
use crate::kit::theme::Palette;

pub struct Bars<'a> {
    pub categories: &'a [String],
    pub series: &'a [(&'a str, RGBColor, &'a [f64])],
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    /// Top of the y axis (None: from the data).
    pub y_max: Option<f64>,
}

pub fn draw_bars(canvas: &HtmlCanvasElement, pal: &Palette, b: &Bars) -> Result<(), String> {
    let f = fit_canvas(canvas, 0.5, 220.0, 340.0);
    let root = area(canvas, pal)?;
    let items: Vec<(Mark, RGBColor, &str)> = b.series.iter().map(|(n, c, _)| (Mark::Dot, *c, *n)).collect();
    let plot = if b.series.len() > 1 { legend_band(&root, &f, pal, &items)? } else { root.clone() };
    let n = b.categories.len();
    let lo = b.series.iter().flat_map(|s| s.2.iter()).copied().fold(0.0, f64::min);
    let hi = b
        .y_max
        .unwrap_or_else(|| b.series.iter().flat_map(|s| s.2.iter()).copied().fold(0.0, f64::max) * 1.1)
        .max(1e-9);
    let mut chart = ChartBuilder::on(&plot)
        .margin(f.px(10.0))
        .x_label_area_size(f.px(40.0))
        .y_label_area_size(f.px(50.0))
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (lo * 1.1).min(0.0)..hi)
        .map_err(err)?;
    let cats = b.categories;
    style_mesh(&mut chart, &f, pal, b.x_desc, b.y_desc)
        .x_labels(n.min(16))
        .x_label_formatter(&|x| {
            let r = x.round();
            if (x - r).abs() < 1e-6 && r >= 0.0 && (r as usize) < n {
                cats[r as usize].clone()
            } else {
                String::new()
            }
        })
        .y_labels(5)
        .draw()
        .map_err(err)?;
    let k = b.series.len().max(1) as f64;
    let width = 0.8 / k;
    for (s, (_, colour, vals)) in b.series.iter().enumerate() {
        chart
            .draw_series(vals.iter().enumerate().map(|(i, &v)| {
                let x0 = i as f64 - 0.4 + s as f64 * width;
                Rectangle::new([(x0, 0.0), (x0 + width * 0.92, v)], colour.filled())
            }))
            .map_err(err)?;
    }
    root.present().map_err(err)
}
