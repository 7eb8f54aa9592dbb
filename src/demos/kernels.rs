//! Demo `kernels`: the four kernels K(d) for a width σ (chapter "kernel-regression").

use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::kernel_regression::Kernel;

crate::params! {
    pub struct Params {
        /// bandwidth σ of every kernel
        sigma: f64 = Param::log_float("sigma", "Width σ", 0.05, 5.0, 1.0),
    }
}

pub struct KernelsDemo;

impl Demo for KernelsDemo {
    const ID: &'static str = "kernels";
    const TITLE: &'static str = "Four kernels";
    const CAPTION: &'static str = "K(d) against the distance d = q − k between a query and a key. Normalising makes \
        the constant factors irrelevant; only the shape and the width σ matter.";
    type Params = Params;
    type Output = KernelCurves;

    fn compute(p: &Params) -> KernelCurves {
        compute(p.sigma)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<KernelsDemo>();

/// Distances plotted: 241 points on [−3, 3].
pub const D_MAX: f64 = 3.0;
pub const POINTS: usize = 241;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelCurves {
    pub sigma: f64,
    pub d: Vec<f64>,
    /// (kernel id, K(d) for each d)
    pub curves: Vec<(&'static str, Vec<f64>)>,
}

pub fn compute(sigma: f64) -> KernelCurves {
    let d: Vec<f64> = (0..POINTS).map(|i| -D_MAX + 2.0 * D_MAX * i as f64 / (POINTS - 1) as f64).collect();
    let curves = Kernel::ALL.iter().map(|k| (k.id(), d.iter().map(|&x| k.eval(x, sigma)).collect())).collect();
    KernelCurves { sigma, d, curves }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of the `kernels` demo: K(d) for the four kernels at width σ.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;

    use super::{KernelCurves, KernelsDemo};
    use crate::kit::number_table;
    use crate::kit::plot::{area, err, fit_canvas, legend_band, style_mesh, Mark};
    use crate::kit::theme::Palette;
    use crate::kit::DemoCtx;

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<KernelsDemo>(ctx);
        let canvas = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| canvas.get().map(|c| out.with(|o| draw(&c, pal, o))));
        view! {
            <div>
                <canvas node_ref=canvas class="plot" role="img"
                    aria-label="Line chart of the four kernels against the distance d"></canvas>
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
                std::iter::once(format!("{:.2}", Signed(o.d[i])))
                    .chain(o.curves.iter().map(|(_, v)| format!("{:.4}", Signed(v[i]))))
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
                .draw_series(LineSeries::new(
                    o.d.iter().copied().zip(ys.iter().copied()),
                    cs[i].stroke_width(f.px(2.0)),
                ))
                .map_err(err)?;
        }
        root.present().map_err(err)
    }
}
