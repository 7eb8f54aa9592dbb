//! View of `collapse`: the tokens' spread against depth, and their final cosine similarities.

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;

use super::matrix_canvas::{Mat, MatrixGrid};
use crate::demos::collapse::{compute_with, parts_of, Collapse, D};
use crate::numerics::block::random_layers;
use crate::ui::demo_frame::DemoCtx;
use crate::ui::plot::{area, err, fit_canvas, legend_band, style_mesh, Mark};
use crate::ui::theme::Palette;

pub fn view(ctx: DemoCtx) -> AnyView {
    // The random weights depend on (seed, L) only: drawn once, reused while n or a toggle moves.
    let key = Memo::new(move |_| ctx.values.with(|v| (v.seed("seed"), v.int("layers").max(1) as usize)));
    let weights = Memo::new(move |_| {
        let (seed, layers) = key.get();
        random_layers(D, layers, seed as u64)
    });
    let out = Memo::new(move |_| {
        let (seed, _) = key.get();
        weights.with(|w| ctx.values.with(|v| compute_with(w, v.int("n").max(2) as usize, parts_of(v), seed)))
    });
    let canvas = NodeRef::<Canvas>::new();
    ctx.paint(move |pal| canvas.get().map(|c| out.with(|o| draw(&c, pal, o))));
    let cos = Signal::derive(move || {
        out.with(|o| {
            let toks: Vec<String> = (0..o.cosine.len()).map(|i| format!("t{i}")).collect();
            vec![Mat::new("cosine similarity of the tokens after the last layer", o.cosine.clone(), false)
                .labels(&toks, &toks)]
        })
    });
    view! {
        <canvas node_ref=canvas class="plot" role="img" aria-label="Line chart of the tokens' spread against the number of layers"></canvas>
        <p class="readout">{move || out.with(|o| format!(
            "After {} layers: spread {} with your block, {} with attention alone.",
            o.block.len() - 1, crate::numerics::format::num(o.block[o.block.len() - 1]), crate::numerics::format::num(o.attention_only[o.attention_only.len() - 1])
        ))}</p>
        <MatrixGrid ctx=ctx mats=cos/>
        {move || ctx.show_numbers.get().then(|| out.with(|o| super::number_table(
            "Spread per layer".into(),
            vec!["layer".into(), "attention only".into(), "your block".into()],
            (0..o.block.len()).map(|l| vec![l.to_string(), format!("{:.4}", o.attention_only[l]), format!("{:.4}", o.block[l])]).collect(),
        )))}
    }
    .into_any()
}

fn draw(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &Collapse) -> Result<(), String> {
    let f = fit_canvas(canvas, 0.45, 220.0, 340.0);
    let root = area(canvas, pal)?;
    let plot = legend_band(
        &root,
        &f,
        pal,
        &[(Mark::Line, pal.muted, "attention only"), (Mark::Line, pal.blue, "your block")],
    )?;
    let layers = (o.block.len() - 1).max(1) as f64;
    let top = o.block.iter().chain(&o.attention_only).copied().fold(1.0, f64::max) * 1.05;
    let mut chart = ChartBuilder::on(&plot)
        .margin(f.px(10.0))
        .x_label_area_size(f.px(36.0))
        .y_label_area_size(f.px(44.0))
        .build_cartesian_2d(0f64..layers, 0f64..top)
        .map_err(err)?;
    style_mesh(&mut chart, &f, pal, "layer", "spread ‖X − 1x̄ᵀ‖ / ‖X‖").draw().map_err(err)?;
    for (series, colour) in [(&o.attention_only, pal.muted), (&o.block, pal.blue)] {
        chart
            .draw_series(LineSeries::new(
                series.iter().enumerate().map(|(l, &v)| (l as f64, v)),
                colour.stroke_width(f.px(2.5)),
            ))
            .map_err(err)?;
    }
    root.present().map_err(err)
}
