//! Demo `gauss-dot`: from the Gaussian kernel to the dot product (chapter "scoring").
//! −½‖q − k‖² = qᵀk − ½‖k‖² − ½‖q‖²: the last term is the same for every key, so softmax
//! removes it; when every key has the same length the middle one goes too, leaving qᵀk.

use ndarray::{arr1, Array1};
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::softmax::softmax;

crate::params! {
    pub struct Params {
        /// the query's angle from the x axis
        theta: f64 = Param::float("theta", "Query direction θ (degrees)", 0.0, 360.0, 1.0, 40.0),
        /// the query's length
        r: f64 = Param::float("r", "Query length ‖q‖", 0.2, 3.0, 0.05, 1.5),
        /// rescale every key to length 1.5, so −½‖k‖² is the same for all
        equal: bool = Param::boolean("equal", "Give every key length 1.5", false),
    }
}

pub struct GaussDotDemo;

impl Demo for GaussDotDemo {
    const ID: &'static str = "gauss-dot";
    const TITLE: &'static str = "From the Gaussian kernel to the dot product";
    const CAPTION: &'static str = "−½‖q − k‖² = qᵀk − ½‖k‖² − ½‖q‖². The query's own term is the same for every key \
        and cancels in the softmax; with equal key lengths the key term cancels too, and only qᵀk is left.";
    type Params = Params;
    type Output = GaussDot;
    /// No "Show numbers": its numbers are always shown in the table under the plot.
    const NUMBERS: bool = false;

    fn compute(p: &Params) -> GaussDot {
        compute(p.theta, p.r, p.equal)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<GaussDotDemo>();

/// The four keys, in the plane.
pub const KEYS: [[f64; 2]; 4] = [[2.0, 0.5], [0.5, 1.5], [-1.0, 1.0], [0.3, -2.5]];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GaussDot {
    pub q: [f64; 2],
    pub keys: Vec<[f64; 2]>,
    /// −½‖q − kᵢ‖²
    pub gauss: Vec<f64>,
    /// qᵀkᵢ
    pub dot: Vec<f64>,
    /// −½‖kᵢ‖²
    pub key_term: Vec<f64>,
    /// −½‖q‖², the same for every key
    pub query_term: f64,
    /// softmax of the Gaussian scores, and of the dot products alone
    pub w_gauss: Vec<f64>,
    pub w_dot: Vec<f64>,
    /// max |w_gauss − w_dot|: 0 when all keys have the same length
    pub max_diff: f64,
}

pub fn compute(theta_deg: f64, r: f64, equal: bool) -> GaussDot {
    let t = theta_deg.to_radians();
    let q = arr1(&[r * t.cos(), r * t.sin()]);
    let keys: Vec<Array1<f64>> = KEYS
        .iter()
        .map(|k| {
            let k = arr1(k);
            if equal {
                &k * (1.5 / k.dot(&k).sqrt())
            } else {
                k
            }
        })
        .collect();
    let gauss: Array1<f64> = keys.iter().map(|k| -0.5 * (&q - k).mapv(|x| x * x).sum()).collect();
    let dot: Array1<f64> = keys.iter().map(|k| q.dot(k)).collect();
    let w_gauss = softmax(gauss.view());
    let w_dot = softmax(dot.view());
    GaussDot {
        q: [q[0], q[1]],
        keys: keys.iter().map(|k| [k[0], k[1]]).collect(),
        key_term: keys.iter().map(|k| -0.5 * k.dot(k)).collect(),
        query_term: -0.5 * q.dot(&q),
        max_diff: (&w_gauss - &w_dot).iter().fold(0.0, |a, d| a.max(d.abs())),
        gauss: gauss.to_vec(),
        dot: dot.to_vec(),
        w_gauss: w_gauss.to_vec(),
        w_dot: w_dot.to_vec(),
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `gauss-dot`: the query and keys in the plane, both sets of weights, and the terms.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;

    use super::{GaussDot, GaussDotDemo};
    use crate::kit::plot::bars::{draw_bars, Bars};
    use crate::kit::plot::{area, batch_dots, err, fit_canvas, style_mesh};
    use crate::kit::theme::Palette;
    use crate::kit::DemoCtx;

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<GaussDotDemo>(ctx);
        let plane = NodeRef::<Canvas>::new();
        let bars = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| {
            let (p, b) = (plane.get()?, bars.get()?);
            let pal = *pal;
            Some(out.with(|o| {
                draw_plane(&p, &pal, o)?;
                let cats: Vec<String> = (0..4).map(|i| format!("k{i}")).collect();
                draw_bars(
                    &b,
                    &pal,
                    &Bars {
                        categories: &cats,
                        series: &[
                            ("softmax of −½‖q − k‖²", pal.blue, &o.w_gauss),
                            ("softmax of qᵀk", pal.orange, &o.w_dot),
                        ],
                        x_desc: "key",
                        y_desc: "weight",
                        y_max: Some(1.0),
                    },
                )
            }))
        });
        let f = |x: f64| format!("{x:.3}", x = Signed(x));
        view! {
            <div class="two-col">
                <canvas node_ref=plane class="plot" role="img"
                    aria-label="The query vector and the four keys in the plane"></canvas>
                <canvas node_ref=bars class="plot" role="img"
                    aria-label="Bar chart: weights from Gaussian scores and from dot products, per key"></canvas>
            </div>
            <div class="table-wrap" role="region" tabindex="0" aria-label="The terms of the expansion, per key">
                <table class="numbers terms">
                    <caption>"−½‖q − k‖² = qᵀk − ½‖k‖² − ½‖q‖², per key"</caption>
                    <thead>
                        <tr>
                            <th>"key"</th><th>"−½‖q − k‖²"</th><th>"qᵀk"</th><th>"−½‖k‖²"</th><th>"−½‖q‖²"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || out.with(|o| (0..4).map(|i| view! {
                            <tr>
                                <td>{format!("k{i}")}</td><td>{f(o.gauss[i])}</td><td>{f(o.dot[i])}</td>
                                <td>{f(o.key_term[i])}</td><td>{f(o.query_term)}</td>
                            </tr>
                        }).collect_view())}
                    </tbody>
                </table>
            </div>
            <p class="readout">{move || out.with(|o| format!(
                "Largest difference between the two sets of weights: {}{}",
                crate::numerics::format::num(o.max_diff),
                if o.max_diff < 1e-12 {
                    " (equal up to rounding: the keys have the same length)"
                } else {
                    " (the keys' lengths differ, so −½‖k‖² changes the ranking)"
                }
            ))}</p>
        }
        .into_any()
    }

    fn draw_plane(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &GaussDot) -> Result<(), String> {
        let f = fit_canvas(canvas, 0.85, 240.0, 360.0);
        let root = area(canvas, pal)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(f.px(10.0))
            .x_label_area_size(f.px(30.0))
            .y_label_area_size(f.px(36.0))
            .build_cartesian_2d(-3.2f64..3.2f64, -3.2f64..3.2f64)
            .map_err(err)?;
        style_mesh(&mut chart, &f, pal, "", "").x_labels(7).y_labels(7).draw().map_err(err)?;
        let origin = (0.0, 0.0);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![origin, (o.q[0], o.q[1])],
                pal.orange.stroke_width(f.px(3.0)),
            )))
            .map_err(err)?;
        let pts: Vec<_> = o
            .keys
            .iter()
            .map(|k| {
                let (x, y) = chart.backend_coord(&(k[0], k[1]));
                (x, y, 5.0 * f.scale)
            })
            .collect();
        batch_dots(canvas, &pts, pal.blue.to_rgba())?;
        let (qx, qy) = chart.backend_coord(&(o.q[0], o.q[1]));
        batch_dots(canvas, &[(qx, qy, 5.0 * f.scale)], pal.orange.to_rgba())?;
        let font = f.font(13.0, pal.fg);
        chart
            .draw_series(
                o.keys
                    .iter()
                    .enumerate()
                    .map(|(i, k)| Text::new(format!("k{i}"), (k[0] + 0.12, k[1] + 0.12), font.clone())),
            )
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                "q".to_string(),
                (o.q[0] + 0.12, o.q[1] + 0.12),
                f.font(14.0, pal.orange),
            )))
            .map_err(err)?;
        root.present().map_err(err)
    }
}
