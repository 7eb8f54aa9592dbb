//! Demo `temperature`: one softmax, five scores, a temperature T (chapter "scoring"). Dividing
//! the scores by T before the softmax sharpens the weights (T < 1) or flattens them (T > 1);
//! 1/√d in scaled dot-product attention is a temperature fixed by the dimension.

use ndarray::Array1;
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::softmax::softmax;

crate::params! {
    pub struct Params {
        /// the temperature T the scores are divided by
        t: f64 = Param::log_float("t", "Temperature T", 0.05, 20.0, 1.0),
        /// the scores are 2g, g, 0, −g, −2g
        gap: f64 = Param::float("gap", "Gap between scores", 0.0, 3.0, 0.1, 1.0),
    }
}

/// Keys, and the temperatures of the curves (log-spaced over the slider's range).
pub const KEYS: usize = 5;
pub const CURVE_POINTS: usize = 121;
pub const T_MIN: f64 = 0.05;
pub const T_MAX: f64 = 20.0;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Temperature {
    pub t: f64,
    /// the five scores, largest first
    pub scores: Vec<f64>,
    /// softmax(scores / T)
    pub weights: Vec<f64>,
    /// entropy of the weights in bits: 0 for one-hot, log₂ 5 ≈ 2.32 for uniform
    pub entropy_bits: f64,
    /// 2^entropy: how many keys the weight is effectively spread over (1 to 5)
    pub effective_keys: f64,
    /// the temperatures of the curves, and each key's weight at each of them
    pub curve_t: Vec<f64>,
    pub curves: Vec<Vec<f64>>,
}

/// The five scores for a gap g: 2g, g, 0, −g, −2g.
pub fn scores(gap: f64) -> Array1<f64> {
    Array1::from_iter((0..KEYS).map(|i| gap * (2.0 - i as f64)))
}

/// softmax(s / T), the weights at temperature T.
pub fn weights(scores: &Array1<f64>, t: f64) -> Array1<f64> {
    softmax((scores / t).view())
}

/// Entropy in bits, with 0 · log 0 taken as 0 (a weight that underflowed to zero adds nothing).
pub fn entropy_bits(w: &Array1<f64>) -> f64 {
    -w.iter().filter(|&&p| p > 0.0).map(|&p| p * p.log2()).sum::<f64>()
}

pub struct TemperatureDemo;

impl Demo for TemperatureDemo {
    const ID: &'static str = "temperature";
    const TITLE: &'static str = "Softmax temperature";
    const CAPTION: &'static str = "Five scores, divided by a temperature T before the softmax. Below 1 the \
        largest score takes almost all the weight; above 1 the weights even out towards 1/5 each.";
    type Params = Params;
    type Output = Temperature;

    fn compute(p: &Params) -> Temperature {
        let s = scores(p.gap);
        let w = weights(&s, p.t);
        let h = entropy_bits(&w);
        let curve_t: Vec<f64> =
            (0..CURVE_POINTS).map(|i| T_MIN * (T_MAX / T_MIN).powf(i as f64 / (CURVE_POINTS - 1) as f64)).collect();
        let at: Vec<Array1<f64>> = curve_t.iter().map(|&t| weights(&s, t)).collect();
        let curves = (0..KEYS).map(|k| at.iter().map(|w| w[k]).collect()).collect();
        Temperature {
            t: p.t,
            scores: s.to_vec(),
            weights: w.to_vec(),
            entropy_bits: h,
            effective_keys: h.exp2(),
            curve_t,
            curves,
        }
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<TemperatureDemo>();

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: f64, gap: f64) -> Temperature {
        TemperatureDemo::compute(&Params { t, gap })
    }

    #[test]
    fn the_numbers_the_chapter_quotes() {
        // T = 1, g = 1: scores (2, 1, 0, −1, −2). e² ≈ 7.389, e ≈ 2.718, 1, e⁻¹ ≈ 0.368,
        // e⁻² ≈ 0.135, sum ≈ 11.610, so the weights are about (0.636, 0.234, 0.086, 0.032, 0.012).
        let o = at(1.0, 1.0);
        let hand = [0.636, 0.234, 0.086, 0.032, 0.012];
        for (w, h) in o.weights.iter().zip(hand) {
            assert!((w - h).abs() < 5e-4, "{:?}", o.weights);
        }
        // Entropy −Σ p log₂ p: 0.636 · 0.652 + 0.234 · 2.095 + 0.086 · 3.538 + 0.032 · 4.979
        // + 0.012 · 6.417 ≈ 0.415 + 0.490 + 0.305 + 0.158 + 0.075 ≈ 1.44 bits, about 2.72 keys' worth.
        assert!((o.entropy_bits - 1.44).abs() < 0.01, "{}", o.entropy_bits);
        assert!((o.effective_keys - 2.72).abs() < 0.02, "{}", o.effective_keys);
        // T = 0.25: the top score takes over 98% (e⁴ ≈ 54.6 to one against the second).
        assert!(at(0.25, 1.0).weights[0] > 0.98);
        // T = 20: every weight within 0.03 of 1/5.
        assert!(at(20.0, 1.0).weights.iter().all(|w| (w - 0.2).abs() < 0.03));
    }

    #[test]
    fn only_the_gap_over_t_matters() {
        // softmax(s / T) with s = g·(2, 1, 0, −1, −2) depends on g / T alone: double both, nothing moves.
        let (a, b) = (at(0.5, 1.0), at(1.0, 2.0));
        for (x, y) in a.weights.iter().zip(&b.weights) {
            assert!((x - y).abs() < 1e-12);
        }
        // With no gap the weights are uniform whatever T is: log₂ 5 bits, five keys.
        let flat = at(0.05, 0.0);
        assert!((flat.entropy_bits - 5f64.log2()).abs() < 1e-12 && (flat.effective_keys - 5.0).abs() < 1e-9);
    }

    #[test]
    fn the_curves_run_over_the_slider_and_add_up_to_one() {
        let o = at(1.0, 1.0);
        assert_eq!((o.curve_t[0], o.curve_t.len()), (T_MIN, CURVE_POINTS));
        assert!((o.curve_t[CURVE_POINTS - 1] - T_MAX).abs() < 1e-9);
        for i in 0..CURVE_POINTS {
            let sum: f64 = o.curves.iter().map(|c| c[i]).sum();
            assert!((sum - 1.0).abs() < 1e-12);
        }
        // The top key's weight falls as T rises, the bottom key's rises.
        assert!(o.curves[0].windows(2).all(|w| w[1] <= w[0]) && o.curves[4].windows(2).all(|w| w[1] >= w[0]));
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! Bars of the weights at T, and every key's weight against T with a marker at T.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;

    use super::{Temperature, TemperatureDemo};
    use crate::kit::plot::bars::{draw_bars, Bars};
    use crate::kit::plot::{area, err, fit_canvas, legend_band, style_mesh, Mark};
    use crate::kit::theme::Palette;
    use crate::kit::{number_table, DemoCtx};
    use crate::numerics::format::num;

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<TemperatureDemo>(ctx);
        let (bars, curves) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
        ctx.paint(move |pal| {
            let (b, c) = (bars.get()?, curves.get()?);
            let pal = *pal;
            Some(out.with(|o| {
                let cats: Vec<String> = o.scores.iter().map(|&s| format!("s = {}", num(s))).collect();
                draw_bars(
                    &b,
                    &pal,
                    &Bars {
                        categories: &cats,
                        series: &[("weight", pal.blue, &o.weights)],
                        x_desc: "key, by its score",
                        y_desc: "weight",
                        y_max: Some(1.0),
                    },
                )?;
                draw_curves(&c, &pal, o)
            }))
        });
        let readout = move || {
            out.with(|o| {
                format!(
                    "At T = {}: the top key has weight {:.3}; the entropy is {:.2} bits, as spread as {:.2} \
                     equal keys (1 is one-hot, 5 is uniform).",
                    num(o.t),
                    Signed(o.weights[0]),
                    Signed(o.entropy_bits),
                    Signed(o.effective_keys)
                )
            })
        };
        let table = move || {
            out.with(|o| {
                let rows = (0..o.scores.len())
                    .map(|i| vec![i.to_string(), num(o.scores[i]), format!("{:.4}", Signed(o.weights[i]))])
                    .collect();
                let head = vec!["key".into(), "score".into(), "weight".into()];
                number_table(format!("Weights at T = {}", num(o.t)), head, rows)
            })
        };
        view! {
            <div class="two-col">
                <canvas node_ref=bars class="plot" role="img"
                    aria-label="Bar chart of the five softmax weights at the chosen temperature"></canvas>
                <canvas node_ref=curves class="plot" role="img"
                    aria-label="Line chart of each key's weight against the temperature, on a log axis"></canvas>
            </div>
            <p class="readout" aria-live="polite">{readout}</p>
            {move || ctx.show_numbers.get().then(table)}
        }
        .into_any()
    }

    fn draw_curves(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &Temperature) -> Result<(), String> {
        let f = fit_canvas(canvas, 0.62, 220.0, 340.0);
        let root = area(canvas, pal)?;
        let colours = [pal.blue, pal.orange, pal.green, pal.muted, pal.fg];
        let names: Vec<String> = o.scores.iter().map(|&s| format!("s = {}", num(s))).collect();
        let items: Vec<(Mark, RGBColor, &str)> =
            names.iter().zip(colours).map(|(n, c)| (Mark::Line, c, n.as_str())).collect();
        let plot = legend_band(&root, &f, pal, &items)?;
        let (t0, t1) = (o.curve_t[0], o.curve_t[o.curve_t.len() - 1]);
        let mut chart = ChartBuilder::on(&plot)
            .margin(f.px(10.0))
            .x_label_area_size(f.px(40.0))
            .y_label_area_size(f.px(50.0))
            .build_cartesian_2d((t0..t1).log_scale(), 0f64..1.02f64)
            .map_err(err)?;
        style_mesh(&mut chart, &f, pal, "temperature T (log scale)", "weight").draw().map_err(err)?;
        for (k, ys) in o.curves.iter().enumerate() {
            let pts = o.curve_t.iter().copied().zip(ys.iter().copied());
            chart.draw_series(LineSeries::new(pts, colours[k].stroke_width(f.px(2.0)))).map_err(err)?;
        }
        // the chosen T
        let marker = [(o.t, 0.0), (o.t, 1.02)];
        chart.draw_series(LineSeries::new(marker, pal.muted.stroke_width(f.px(1.0)))).map_err(err)?;
        root.present().map_err(err)
    }
}
