//! View of `sinusoidal`: the table, four of its columns, and the similarity of positions.

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;

use crate::demos::sinusoidal::{from_values, Sinusoidal};
use crate::ui::demo_frame::DemoCtx;
use crate::ui::plot::heatmap::{draw_heatmap, HeatmapSpec};
use crate::ui::plot::{area, err, fit_canvas, legend_band, style_mesh, Mark};
use crate::ui::theme::Palette;

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(from_values));
    let (table, lines, sim) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
    ctx.paint(move |pal| {
        let (t, l, s) = (table.get()?, lines.get()?, sim.get()?);
        let pal = *pal;
        Some(out.with(|o| {
            let (len, d) = (o.table.len(), o.d);
            let f = fit_canvas(&t, 0.55, 240.0, 420.0);
            let root = area(&t, &pal)?;
            // position 0 at the top, like every table of positions in the book (wpe's, RoPE's)
            let value = |r: usize, c: usize| o.table[r][c];
            draw_heatmap(
                &t,
                &root,
                &f,
                &pal,
                &HeatmapSpec {
                    rows: len,
                    cols: d,
                    value: &value,
                    vmin: -1.0,
                    vmax: 1.0,
                    x_range: (0.0, d as f64),
                    y_range: (0.0, len as f64),
                    rows_down: true,
                    x_integer: true,
                    x_desc: "dimension",
                    y_desc: "position",
                    bar_label: "PE",
                },
            )?;
            draw_lines(&l, &pal, o)?;
            let f = fit_canvas(&s, 0.8, 240.0, 460.0);
            let root = area(&s, &pal)?;
            let lo = o.similarity.iter().flatten().copied().fold(f64::INFINITY, f64::min);
            let value = |r: usize, c: usize| o.similarity[r][c];
            draw_heatmap(
                &s,
                &root,
                &f,
                &pal,
                &HeatmapSpec {
                    rows: len,
                    cols: len,
                    value: &value,
                    vmin: lo,
                    vmax: d as f64 / 2.0,
                    x_range: (0.0, len as f64),
                    y_range: (0.0, len as f64),
                    rows_down: true,
                    x_integer: true,
                    x_desc: "position q",
                    y_desc: "position p",
                    bar_label: "PE(p)·PE(q)",
                },
            )
            .map(|_| ())
        }))
    });
    view! {
        <canvas node_ref=table class="plot" role="img" aria-label="Heatmap of the sinusoidal encoding: positions by dimensions"></canvas>
        <canvas node_ref=lines class="plot" role="img" aria-label="Line plot of four dimensions of the encoding against position"></canvas>
        <canvas node_ref=sim class="plot" role="img" aria-label="Heatmap of the dot product between the encodings of every two positions"></canvas>
        {move || ctx.show_numbers.get().then(|| out.with(|o| super::number_table(
            "The first 16 positions of the four plotted dimensions".into(),
            std::iter::once("position".to_string()).chain(o.columns.iter().map(|c| format!("dim {c}"))).collect(),
            (0..o.table.len().min(16)).map(|p| std::iter::once(p.to_string()).chain(o.columns.iter().map(|&c| format!("{:.4}", o.table[p][c]))).collect()).collect(),
        )))}
    }
    .into_any()
}

fn draw_lines(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &Sinusoidal) -> Result<(), String> {
    let f = fit_canvas(canvas, 0.4, 220.0, 320.0);
    let root = area(canvas, pal)?;
    let colours = [pal.orange, pal.blue, pal.green, pal.muted];
    let labels: Vec<String> =
        o.columns.iter().zip(&o.wavelengths).map(|(c, w)| format!("dim {c} (wavelength {w:.1})")).collect();
    let items: Vec<(Mark, RGBColor, &str)> =
        labels.iter().enumerate().map(|(i, l)| (Mark::Line, colours[i], l.as_str())).collect();
    let plot = legend_band(&root, &f, pal, &items)?;
    let len = o.table.len();
    let mut chart = ChartBuilder::on(&plot)
        .margin(f.px(10.0))
        .x_label_area_size(f.px(36.0))
        .y_label_area_size(f.px(40.0))
        .build_cartesian_2d(0f64..(len - 1) as f64, -1.1f64..1.1f64)
        .map_err(err)?;
    style_mesh(&mut chart, &f, pal, "position", "PE").y_labels(5).draw().map_err(err)?;
    for (i, &c) in o.columns.iter().enumerate() {
        chart
            .draw_series(LineSeries::new(
                (0..len).map(|p| (p as f64, o.table[p][c])),
                colours[i].stroke_width(f.px(2.0)),
            ))
            .map_err(err)?;
    }
    root.present().map_err(err)
}
