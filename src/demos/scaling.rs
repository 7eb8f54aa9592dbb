//! Demo `scaling`: why scores are divided by √d (chapter "scoring"). For q, k with independent
//! unit-variance entries, qᵀk has variance d; divided by √d it has variance 1, and the softmax
//! over n keys stays soft instead of turning one-hot as d grows.

use ndarray::Array1;
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::rng::{normal_matrix, Rng};
use crate::numerics::softmax::softmax;

crate::params! {
    pub struct Params {
        /// the dimension of q and k
        d: usize = Param::log_int("d", "Dimension d", 1, 1024, 64),
        /// the number of keys the softmax runs over
        n: usize = Param::int("n", "Keys n", 2, 64, 16),
        seed: u32 = Param::seed("seed", "Random draw", 1),
    }
}

pub struct ScalingDemo;

impl Demo for ScalingDemo {
    const ID: &'static str = "scaling";
    const TITLE: &'static str = "Why divide by √d";
    const CAPTION: &'static str = "Dot products of random unit-variance vectors spread out as d grows (variance d); \
        dividing by √d keeps their variance at 1, and keeps the softmax from collapsing onto one key.";
    type Params = Params;
    type Output = Scaling;

    fn compute(p: &Params) -> Scaling {
        compute(p.d.max(1), p.n.max(1), p.seed)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<ScalingDemo>();

/// Samples of qᵀk for the histograms.
pub const PAIRS: usize = 256;
pub const BINS: usize = 24;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Histogram {
    pub lo: f64,
    pub width: f64,
    pub counts: Vec<usize>,
}

impl Histogram {
    /// BINS equal bins over ±4 × the expected standard deviation.
    fn new(xs: &[f64], sd: f64) -> Histogram {
        let (lo, width) = (-4.0 * sd, 8.0 * sd / BINS as f64);
        let mut counts = vec![0; BINS];
        for &x in xs {
            let b = ((x - lo) / width).floor();
            if b >= 0.0 && (b as usize) < BINS {
                counts[b as usize] += 1;
            }
        }
        Histogram { lo, width, counts }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scaling {
    pub d: usize,
    /// PAIRS samples of qᵀk, and of qᵀk / √d
    pub raw: Vec<f64>,
    pub scaled: Vec<f64>,
    /// sample variances (expected d and 1)
    pub var_raw: f64,
    pub var_scaled: f64,
    pub hist_raw: Histogram,
    pub hist_scaled: Histogram,
    /// one query against n keys: softmax weights without and with scaling, largest first
    pub w_raw: Vec<f64>,
    pub w_scaled: Vec<f64>,
}

fn variance(x: &[f64]) -> f64 {
    let m = x.iter().sum::<f64>() / x.len() as f64;
    x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64
}

pub fn compute(d: usize, n: usize, seed: u32) -> Scaling {
    let mut rng = Rng::new(seed as u64);
    // qᵀk = Σᵢ qᵢ kᵢ over d independent N(0, 1) pairs. Marsaglia's polar method yields two
    // independent normals per accepted point (one ln and one sqrt, no sin or cos): exactly one
    // (qᵢ, kᵢ) pair. This is the demo's hot loop at d = 1024 (2 × 256 × 1024 normals).
    let mut pair = || loop {
        let (u, v) = (2.0 * rng.uniform() - 1.0, 2.0 * rng.uniform() - 1.0);
        let s = u * u + v * v;
        if s > 0.0 && s < 1.0 {
            let m = (-2.0 * s.ln() / s).sqrt();
            return (u * m) * (v * m);
        }
    };
    let raw: Vec<f64> = (0..PAIRS).map(|_| (0..d).map(|_| pair()).sum()).collect();
    let sqrt_d = (d as f64).sqrt();
    let scaled: Vec<f64> = raw.iter().map(|x| x / sqrt_d).collect();
    let q = normal_matrix(1, d, seed as u64 ^ 0xABCD, 1.0); // (1, d)
    let k = normal_matrix(n, d, seed as u64 ^ 0x1234, 1.0); // (n, d)
    let s: Array1<f64> = k.dot(&q.row(0)); // (n, d) x (d,) -> (n,)
    let sort = |w: Array1<f64>| {
        let mut v = w.to_vec();
        v.sort_by(|a, b| b.total_cmp(a));
        v
    };
    Scaling {
        d,
        var_raw: variance(&raw),
        var_scaled: variance(&scaled),
        hist_raw: Histogram::new(&raw, sqrt_d),
        hist_scaled: Histogram::new(&scaled, 1.0),
        w_raw: sort(softmax(s.view())),
        w_scaled: sort(softmax((&s / sqrt_d).view())),
        raw,
        scaled,
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `scaling`: histograms of qᵀk with and without 1/√d, and the softmax over n keys.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;

    use super::{Histogram, ScalingDemo};
    use crate::kit::plot::bars::{draw_bars, Bars};
    use crate::kit::plot::{area, err, fit_canvas, style_mesh};
    use crate::kit::theme::Palette;
    use crate::kit::DemoCtx;

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<ScalingDemo>(ctx);
        let (raw, scaled, soft) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
        ctx.paint(move |pal| {
            let (a, b, c) = (raw.get()?, scaled.get()?, soft.get()?);
            let pal = *pal;
            Some(out.with(|o| {
                draw_hist(
                    &a,
                    &pal,
                    &o.hist_raw,
                    &format!("qᵀk (d = {}): variance {:.1}", o.d, Signed(o.var_raw)),
                    pal.orange,
                )?;
                draw_hist(
                    &b,
                    &pal,
                    &o.hist_scaled,
                    &format!("qᵀk / √d: variance {:.2}", Signed(o.var_scaled)),
                    pal.blue,
                )?;
                let cats: Vec<String> = (0..o.w_raw.len()).map(|i| i.to_string()).collect();
                draw_bars(
                    &c,
                    &pal,
                    &Bars {
                        categories: &cats,
                        series: &[("softmax(qᵀk)", pal.orange, &o.w_raw), ("softmax(qᵀk / √d)", pal.blue, &o.w_scaled)],
                        x_desc: "keys, largest weight first",
                        y_desc: "weight",
                        y_max: Some(1.0),
                    },
                )
            }))
        });
        view! {
            <div class="two-col">
                <canvas node_ref=raw class="plot" role="img" aria-label="Histogram of unscaled dot products"></canvas>
                <canvas node_ref=scaled class="plot" role="img" aria-label="Histogram of scaled dot products"></canvas>
            </div>
            <canvas node_ref=soft class="plot" role="img"
                aria-label="Bar chart of softmax weights over the keys, unscaled and scaled"></canvas>
            <p class="readout">{move || out.with(|o| format!(
                "Largest weight: {:.3} unscaled, {:.3} scaled by 1/√d.", Signed(o.w_raw[0]), Signed(o.w_scaled[0])
            ))}</p>
            {move || ctx.show_numbers.get().then(|| out.with(|o| crate::kit::number_table(
                "Sorted softmax weights".into(),
                vec!["rank".into(), "softmax(qᵀk)".into(), "softmax(qᵀk/√d)".into()],
                (0..o.w_raw.len())
                    .map(|i| {
                        let f = |x: f64| format!("{:.4}", Signed(x));
                        vec![i.to_string(), f(o.w_raw[i]), f(o.w_scaled[i])]
                    })
                    .collect(),
            )))}
        }
        .into_any()
    }

    fn draw_hist(
        canvas: &web_sys::HtmlCanvasElement,
        pal: &Palette,
        h: &Histogram,
        title: &str,
        colour: RGBColor,
    ) -> Result<(), String> {
        let f = fit_canvas(canvas, 0.62, 200.0, 300.0);
        let root = area(canvas, pal)?;
        let top = h.counts.iter().copied().max().unwrap_or(1).max(1) as f64 * 1.15;
        let hi = h.lo + h.width * h.counts.len() as f64;
        let mut chart = ChartBuilder::on(&root)
            .margin(f.px(10.0))
            .caption(title, f.font(13.0, pal.fg))
            .x_label_area_size(f.px(36.0))
            .y_label_area_size(f.px(52.0)) // room for "count" beside four-digit ticks
            .build_cartesian_2d(h.lo..hi, 0f64..top)
            .map_err(err)?;
        style_mesh(&mut chart, &f, pal, "score", "count").x_labels(5).y_labels(4).draw().map_err(err)?;
        chart
            .draw_series(h.counts.iter().enumerate().map(|(i, &c)| {
                let x0 = h.lo + i as f64 * h.width;
                Rectangle::new([(x0, 0.0), (x0 + h.width * 0.95, c as f64)], colour.filled())
            }))
            .map_err(err)?;
        root.present().map_err(err)
    }
}
