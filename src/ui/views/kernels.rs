//! View of the `kernels` demo: K(d) for the four kernels at width σ.

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;

use super::number_table;
use crate::demos::kernels::{compute, KernelCurves};
use crate::ui::demo_frame::DemoCtx;
use crate::ui::plot::{area, err, fit_canvas, legend_band, style_mesh, Mark};
use crate::ui::theme::Palette;

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| compute(ctx.values.with(|v| v.float("sigma"))));
    let canvas = NodeRef::<Canvas>::new();
    ctx.paint(move |pal| canvas.get().map(|c| out.with(|o| draw(&c, pal, o))));
    view! {
        <div>
            <canvas node_ref=canvas class="plot" role="img" aria-label="Line chart of the four kernels against the distance d"></canvas>
            {move || ctx.show_numbers.get().then(|| out.with(table))}
        </div>
    }
    .into_any()
}

fn colours(pal: &Palette) -> [RGBColor; 4] {
    [pal.blue, pal.orange, pal.green, pal.muted]
}

fn table(o: &KernelCurves) -> impl IntoView {
    // every 20th point: d = −3, −2.5, …, 3
    let rows = (0..o.d.len())
        .step_by(20)
        .map(|i| {
            std::iter::once(format!("{:.2}", o.d[i]))
                .chain(o.curves.iter().map(|(_, v)| format!("{:.4}", v[i])))
                .collect()
        })
        .collect();
    let head = std::iter::once("d".to_string()).chain(o.curves.iter().map(|(k, _)| format!("{k} K(d)"))).collect();
    number_table(format!("Kernel values at σ = {}", o.sigma), head, rows)
}

fn draw(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &KernelCurves) -> Result<(), String> {
    let f = fit_canvas(canvas, 0.5, 260.0, 380.0);
    let root = area(canvas, pal)?;
    let names = ["Gaussian", "Boxcar", "Epanechnikov", "Constant"];
    let cs = colours(pal);
    let items: Vec<(Mark, RGBColor, &str)> = (0..4).map(|i| (Mark::Line, cs[i], names[i])).collect();
    let plot = legend_band(&root, &f, pal, &items)?;
    let mut chart = ChartBuilder::on(&plot)
        .margin(f.px(10.0))
        .x_label_area_size(f.px(40.0))
        .y_label_area_size(f.px(50.0))
        .build_cartesian_2d(o.d[0]..o.d[o.d.len() - 1], -0.02f64..1.12f64)
        .map_err(err)?;
    style_mesh(&mut chart, &f, pal, "distance d = q − k", "K(d)").draw().map_err(err)?;
    for (i, (_, ys)) in o.curves.iter().enumerate() {
        chart
            .draw_series(LineSeries::new(o.d.iter().copied().zip(ys.iter().copied()), cs[i].stroke_width(f.px(2.0))))
            .map_err(err)?;
    }
    root.present().map_err(err)
}
