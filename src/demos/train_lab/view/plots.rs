//! The run's curves: loss and accuracy against the step, and each head's scores against the
//! step, with the step shown marked.

use crate::numerics::format::Signed;
use plotters::prelude::*;

use super::super::run::RunLog;
use crate::kit::plot::{area, err, fit_canvas, legend_band, style_mesh, Mark};
use crate::kit::theme::Palette;

/// At most this many points per curve: a 20,000-step run is averaged in buckets, which also
/// smooths the batch-to-batch noise.
const POINTS: usize = 400;

/// (step, mean of `f`) over consecutive buckets of the history.
fn buckets(log: &RunLog, f: impl Fn(&crate::train::StepStats) -> f32) -> Vec<(f64, f64)> {
    let size = log.history.len().div_ceil(POINTS).max(1);
    log.history
        .chunks(size)
        .map(|c| {
            let last = c[c.len() - 1].step as f64;
            (last, c.iter().map(|s| f(s) as f64).sum::<f64>() / c.len() as f64)
        })
        .collect()
}

/// A vertical line at the step shown (when scrubbed back).
fn marker<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    step: Option<usize>,
    (y0, y1): (f64, f64),
    colour: RGBColor,
    width: u32,
) -> Result<(), String> {
    if let Some(s) = step {
        let x = s as f64;
        chart
            .draw_series(std::iter::once(PathElement::new(vec![(x, y0), (x, y1)], colour.stroke_width(width))))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Loss (left axis, from 0 to the highest seen) and accuracy (drawn on the same 0–1 scaled
/// axis as a fraction of the loss range's top: the legend says so) against the step.
pub fn draw_loss(
    canvas: &web_sys::HtmlCanvasElement,
    pal: &Palette,
    log: &RunLog,
    shown: Option<usize>,
) -> Result<(), String> {
    let f = fit_canvas(canvas, 0.45, 220.0, 320.0);
    let root = area(canvas, pal)?;
    let items = [(Mark::Line, pal.blue, "loss (nats)"), (Mark::Line, pal.orange, "accuracy (right axis)")];
    let plot = legend_band(&root, &f, pal, &items)?;
    let steps = log.config.as_ref().map_or(100, |c| c.steps).max(1) as f64;
    let loss = buckets(log, |s| s.loss);
    let top = loss.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1.0) * 1.05;
    let mut chart = ChartBuilder::on(&plot)
        .margin(f.px(10.0))
        .x_label_area_size(f.px(40.0))
        .y_label_area_size(f.px(50.0))
        .right_y_label_area_size(f.px(56.0))
        .build_cartesian_2d(0.0..steps, 0.0..top)
        .map_err(err)?
        .set_secondary_coord(0.0..steps, 0.0..1.0);
    style_mesh(&mut chart, &f, pal, "step", "loss").draw().map_err(err)?;
    chart
        .configure_secondary_axes()
        .y_desc("accuracy")
        .axis_desc_style(f.font(13.0, pal.fg))
        .label_style(f.font(12.0, pal.muted))
        .axis_style(pal.muted)
        .y_label_formatter(&|v| format!("{:.0}%", Signed(v * 100.0)))
        .draw()
        .map_err(err)?;
    chart.draw_series(LineSeries::new(loss, pal.blue.stroke_width(f.px(2.0)))).map_err(err)?;
    chart
        .draw_secondary_series(LineSeries::new(buckets(log, |s| s.accuracy), pal.orange.stroke_width(f.px(1.5))))
        .map_err(err)?;
    marker(&mut chart, shown, (0.0, top), pal.fg, f.px(1.0))?;
    root.present().map_err(err)
}

/// Distinct colours for up to 32 heads: the palette's three, then hues around the wheel.
pub fn head_colour(pal: &Palette, k: usize) -> RGBColor {
    match k {
        0 => pal.blue,
        1 => pal.orange,
        2 => pal.green,
        _ => {
            let HSLColor(h, s, l) = HSLColor(((k as f64) * 0.381966) % 1.0, 0.65, 0.5);
            let c = HSLColor(h, s, l).to_rgba();
            RGBColor(c.0, c.1, c.2)
        }
    }
}

/// One score of every head against the step (from the snapshots), 0 to 1.
pub fn draw_scores(
    canvas: &web_sys::HtmlCanvasElement,
    pal: &Palette,
    log: &RunLog,
    heads: (usize, usize),
    induction: bool,
    shown: Option<usize>,
) -> Result<(), String> {
    let f = fit_canvas(canvas, 0.6, 200.0, 300.0);
    let root = area(canvas, pal)?;
    let (nl, nh) = heads;
    let names: Vec<String> = (0..nl * nh).map(|k| format!("L{}H{}", k / nh, k % nh)).collect();
    let items: Vec<(Mark, RGBColor, &str)> =
        names.iter().enumerate().map(|(k, n)| (Mark::Line, head_colour(pal, k), n.as_str())).collect();
    let plot = legend_band(&root, &f, pal, &items)?;
    let steps = log.config.as_ref().map_or(100, |c| c.steps).max(1) as f64;
    let title = if induction { "induction score" } else { "previous-token score" };
    let mut chart = ChartBuilder::on(&plot)
        .margin(f.px(10.0))
        // Room for the last step's label at the right end of the x axis.
        .margin_right(f.px(20.0))
        .x_label_area_size(f.px(40.0))
        .y_label_area_size(f.px(44.0))
        .build_cartesian_2d(0.0..steps, 0.0..1.0)
        .map_err(err)?;
    style_mesh(&mut chart, &f, pal, "step", title).draw().map_err(err)?;
    for k in 0..nl * nh {
        let pts = log.snapshots.iter().filter_map(|s| {
            let v = if induction { s.induction.get(k) } else { s.previous.get(k) };
            v.map(|&v| (s.step as f64, v as f64))
        });
        chart.draw_series(LineSeries::new(pts, head_colour(pal, k).stroke_width(f.px(2.0)))).map_err(err)?;
    }
    marker(&mut chart, shown, (0.0, 1.0), pal.fg, f.px(1.0))?;
    root.present().map_err(err)
}
