//! Demo `bottleneck` (chapter "why-attention"): accuracy against input length for the
//! fixed-context model and an attention model, from the curve the training script measured
//! (shipped beside the weights), with one length recomputed live in the browser.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::alignment::AttentionModel;
use super::{spec, to_json, Demo, DemoSpec};
use crate::seq2seq::Variant;

/// What `scripts/seq2seq/train.py` measured: per variant, exact-match and per-token accuracy
/// over `n_per_length` held-out strings of each length.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Curve {
    pub lengths: Vec<usize>,
    pub n_per_length: usize,
    pub variants: BTreeMap<String, Series>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Series {
    pub exact: Vec<f64>,
    pub token: Vec<f64>,
}

pub const CURVE_JSON: &str = include_str!("../../static/models/seq2seq/curve.json");

pub fn curve() -> Result<Curve, String> {
    serde_json::from_str(CURVE_JSON).map_err(|e| format!("the shipped curve is unreadable: {e}"))
}

crate::options! {
    /// Which accuracy the plot shows.
    pub enum Measure { Exact = ("exact", "whole word right"), Token = ("token", "letters right") }
}

crate::params! {
    pub struct Params {
        /// the attention model plotted beside the fixed-context one
        model: AttentionModel = Param::choice("model", "Attention model", AttentionModel::OPTIONS, 0),
        measure: Measure = Param::choice("measure", "Measure", Measure::OPTIONS, 0),
        /// the length the button measures in the browser
        length: usize = Param::int("length", "Length to recompute", 1, 30, 20),
        /// draws the strings measured
        seed: u32 = Param::seed("seed", "Strings", 1),
    }
}

/// Strings measured per live recomputation (the script used 200 per length).
pub const LIVE_SAMPLES: usize = 100;

pub struct BottleneckDemo;

impl Demo for BottleneckDemo {
    const ID: &'static str = "bottleneck";
    const TITLE: &'static str = "The bottleneck, measured";
    const CAPTION: &'static str = "Accuracy of the two models on held-out random strings, by length, as the \
        training script measured it. The fixed-context model squeezes every letter into one vector and falls off with \
        length; the attention model does not. Recompute any length here, from the same weights.";
    type Params = Params;
    /// The shipped curve of the fixed-context and the chosen attention model (the view adds the
    /// lengths measured live), or why the shipped curve cannot be read.
    type Output = Result<Curve, String>;

    fn compute(p: &Params) -> Result<Curve, String> {
        let mut c = curve()?;
        let keep = [Variant::Fixed.key(), p.model.variant().key()];
        c.variants.retain(|k, _| keep.contains(&k.as_str()));
        Ok(c)
    }

    fn data(p: &Params) -> Result<serde_json::Value, String> {
        Self::compute(p).and_then(|c| to_json(&c))
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<BottleneckDemo>();

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `bottleneck`: the shipped accuracy-by-length curves of the fixed-context model and
    //! the chosen attention model, and lengths recomputed live from the same weights.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;

    use super::{curve, Curve, Measure, Params, LIVE_SAMPLES};
    use crate::demos::alignment::model_label;
    use crate::kit::plot::{area, err, fit_canvas, legend_band, style_mesh, Mark};
    use crate::kit::seq2seq_models::load_models;
    use crate::kit::DemoCtx;
    use crate::seq2seq::eval::{accuracy, Accuracy};
    use crate::seq2seq::Variant;

    /// One live measurement.
    #[derive(Debug, Clone, PartialEq, serde::Serialize)]
    struct Live {
        variant: Variant,
        length: usize,
        seed: u32,
        acc: Accuracy,
    }

    /// The curves, the lengths measured here as rings, and a dashed line at the length the button
    /// will measure next.
    #[allow(clippy::too_many_arguments)]
    fn draw(
        c: &web_sys::HtmlCanvasElement,
        pal: &crate::kit::theme::Palette,
        curve: &Curve,
        shown: [Variant; 2],
        token: bool,
        live: &[Live],
        next: usize,
    ) -> Result<(), String> {
        let f = fit_canvas(c, 0.6, 240.0, 360.0);
        let root = area(c, pal)?;
        let colours = [pal.orange, pal.blue];
        let mut items: Vec<(Mark, RGBColor, &str)> =
            shown.iter().zip(colours).map(|(&v, c)| (Mark::Line, c, model_label(v))).collect();
        if !live.is_empty() {
            items.push((Mark::Dot, pal.fg, "measured here"));
        }
        let rest = legend_band(&root, &f, pal, &items)?;
        let x1 = curve.lengths.iter().copied().max().unwrap_or(30) as f64;
        let mut chart = ChartBuilder::on(&rest)
            .margin(f.px(10.0))
            .x_label_area_size(f.px(36.0))
            .y_label_area_size(f.px(48.0))
            .build_cartesian_2d(0.0..x1 + 1.0, 0.0..1.02)
            .map_err(err)?;
        style_mesh(
            &mut chart,
            &f,
            pal,
            "input length (letters)",
            if token { "letters right" } else { "whole word right" },
        )
        .y_label_formatter(&|v| format!("{:.0}%", Signed(v * 100.0)))
        .x_label_formatter(&|v| format!("{v:.0}", v = Signed(v)))
        .draw()
        .map_err(err)?;
        let x = next as f64;
        chart
            .draw_series(DashedLineSeries::new(
                [(x, 0.0), (x, 1.02)],
                f.px(4.0),
                f.px(3.0),
                pal.muted.stroke_width(f.px(1.0)),
            ))
            .map_err(err)?;
        for (&v, colour) in shown.iter().zip(colours) {
            let Some(s) = curve.variants.get(v.key()) else { continue };
            let ys = if token { &s.token } else { &s.exact };
            let pts: Vec<(f64, f64)> = curve.lengths.iter().zip(ys).map(|(&l, &y)| (l as f64, y)).collect();
            chart.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(f.px(2.0)))).map_err(err)?;
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, f.px(2.5), colour.filled()))).map_err(err)?;
            for l in live.iter().filter(|l| l.variant == v) {
                let y = if token { l.acc.token } else { l.acc.exact };
                chart
                    .draw_series([Circle::new((l.length as f64, y), f.px(6.0), colour.stroke_width(f.px(2.5)))])
                    .map_err(err)?;
            }
        }
        root.present().map_err(err)
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let models = load_models(ctx);
        let curve = StoredValue::new(curve());
        let live = RwSignal::new(Vec::<Live>::new());
        let busy = RwSignal::new(false);
        let canvas = NodeRef::<Canvas>::new();
        let params = ctx.params::<Params>();
        ctx.paint(move |pal| {
            let c = canvas.get()?;
            let pal = *pal;
            let (v, token, next) =
                params.with(|p| (p.model.variant(), p.measure == Measure::Token, p.length.clamp(1, 30)));
            Some(curve.with_value(|cv| match cv {
                Ok(cv) => live.with(|l| draw(&c, &pal, cv, [Variant::Fixed, v], token, l, next)),
                Err(e) => Err(e.clone()),
            }))
        });
        Effect::new(move |_| {
            let l = live.get();
            ctx.computed.set(
                (!l.is_empty()).then(|| serde_json::json!({ "measured_here": l, "samples_per_length": LIVE_SAMPLES })),
            );
        });
        let measure = move |_| {
            if busy.get_untracked() || models.with_untracked(Option::is_none) {
                return;
            }
            busy.set(true);
            let p = ctx.params_now::<Params>();
            let (v, length, seed) = (p.model.variant(), p.length.clamp(1, 30), p.seed);
            // Let the page paint "Measuring…" before the work, which takes a moment.
            set_timeout(
                move || {
                    if let Some(m) = models.get_untracked() {
                        let rows: Vec<Live> = [Variant::Fixed, v]
                            .into_iter()
                            .map(|variant| Live {
                                variant,
                                length,
                                seed,
                                acc: accuracy(
                                    m.get(variant),
                                    length,
                                    LIVE_SAMPLES,
                                    u64::from(seed) * 1000 + length as u64,
                                ),
                            })
                            .collect();
                        live.update(|l| {
                            l.retain(|x| !rows.iter().any(|r| (r.variant, r.length) == (x.variant, x.length)));
                            l.extend(rows);
                        });
                    }
                    busy.set(false);
                },
                std::time::Duration::from_millis(30),
            );
        };
        // The plotted curves: the training script's accuracy at every length, for both models.
        let curve_table = move || {
            let v = params.with(|p| p.model.variant());
            curve.with_value(|c| {
                c.as_ref().ok().map(|c| {
                    let series = |variant: Variant| c.variants.get(variant.key());
                    let pct = |x: Option<f64>| x.map_or("—".into(), |x| format!("{:.1}%", Signed(x * 100.0)));
                    let mut head = vec!["length".to_string()];
                    for m in [Variant::Fixed, v] {
                        head.push(format!("{}: whole word", model_label(m)));
                        head.push(format!("{}: letters", model_label(m)));
                    }
                    crate::kit::number_table(
                        format!("The plotted curves: the training script's {} strings per length", c.n_per_length),
                        head,
                        c.lengths
                            .iter()
                            .enumerate()
                            .map(|(i, l)| {
                                let mut row = vec![l.to_string()];
                                for m in [Variant::Fixed, v] {
                                    let s = series(m);
                                    row.push(pct(s.and_then(|s| s.exact.get(i).copied())));
                                    row.push(pct(s.and_then(|s| s.token.get(i).copied())));
                                }
                                row
                            })
                            .collect(),
                    )
                })
            })
        };
        let button_label = move || {
            let l = params.with(|p| p.length);
            if busy.get() {
                format!("Measuring length {l}…")
            } else {
                format!("Measure length {l} here ({LIVE_SAMPLES} new strings)")
            }
        };
        let table = move || {
            let rows = live.get();
            (!rows.is_empty()).then(|| {
                let shipped = |r: &Live| {
                    curve.with_value(|c| {
                        c.as_ref().ok().and_then(|c| {
                            let i = c.lengths.iter().position(|&l| l == r.length)?;
                            Some(c.variants.get(r.variant.key())?.exact[i])
                        })
                    })
                };
                crate::kit::number_table(
                    format!("Measured in this browser, {LIVE_SAMPLES} random strings per length"),
                    ["model", "length", "whole word right", "letters right", "training script (200 strings)"]
                        .map(String::from)
                        .to_vec(),
                    rows.iter()
                        .map(|r| {
                            vec![
                                model_label(r.variant).to_string(),
                                r.length.to_string(),
                                format!("{:.0}%", Signed(r.acc.exact * 100.0)),
                                format!("{:.1}%", Signed(r.acc.token * 100.0)),
                                shipped(r).map_or("—".into(), |x| format!("{:.0}%", Signed(x * 100.0))),
                            ]
                        })
                        .collect(),
                )
            })
        };
        view! {
            <canvas node_ref=canvas class="plot" role="img"
                aria-label="Accuracy against input length for the fixed-context and the attention model"></canvas>
            <div class="row-actions">
                <button type="button" class="measure" on:click=measure
                    disabled=move || busy.get() || models.with(Option::is_none)>{button_label}</button>
            </div>
            <div class="bottleneck-live" data-rows=move || live.with(Vec::len).to_string()>{table}</div>
            {move || ctx.show_numbers.get().then(curve_table)}
        }
        .into_any()
    }
}
