//! Demo `nw`: Nadaraya–Watson regression as attention pooling (chapter "kernel-regression").

use ndarray::{arr1, Array1};
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::kernel_regression::{estimate, loo_loss, query_grid, sample, truth, weights, Kernel, LooLoss};

crate::options! {
    /// The kernel control's options (URL values are the kernels' ids).
    pub enum KernelChoice {
        Gaussian = ("gaussian", "Gaussian"),
        Boxcar = ("boxcar", "Boxcar"),
        Epanechnikov = ("epanechnikov", "Epanechnikov"),
        Constant = ("constant", "Constant"),
    }
}

impl KernelChoice {
    pub fn kernel(self) -> Kernel {
        match self {
            KernelChoice::Gaussian => Kernel::Gaussian,
            KernelChoice::Boxcar => Kernel::Boxcar,
            KernelChoice::Epanechnikov => Kernel::Epanechnikov,
            KernelChoice::Constant => Kernel::Constant,
        }
    }
}

crate::params! {
    pub struct Params {
        /// training points drawn from 2 sin x + x plus noise
        n: usize = Param::int("n", "Training points n", 5, 200, 40),
        seed: u32 = Param::seed("seed", "Noise seed", 1),
        kernel: KernelChoice = Param::choice("kernel", "Kernel", KernelChoice::OPTIONS, 0),
        /// the kernel's width
        sigma: f64 = Param::log_float("sigma", "Width σ", 0.01, 10.0, 0.5),
        /// the query whose weights are shown
        q: f64 = Param::float("q", "Query q", 0.0, 5.0, 0.01, 2.5),
    }
}

pub struct NwDemo;

impl Demo for NwDemo {
    const ID: &'static str = "nw";
    const TITLE: &'static str = "Nadaraya–Watson regression as attention pooling";
    const CAPTION: &'static str = "Keys are the training inputs xᵢ, values their targets yᵢ; a query q attends to \
        every key with weight K(q − xᵢ) / Σⱼ K(q − xⱼ), and the estimate f(q) is the weighted average of the values.";
    type Params = Params;
    type Output = NwOutput;

    fn compute(p: &Params) -> NwOutput {
        compute(p)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<NwDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NwOutput {
    pub kernel: &'static str,
    pub sigma: f64,
    /// Training inputs (keys), sorted ascending, and targets (values).
    pub x_train: Vec<f64>,
    pub y_train: Vec<f64>,
    /// The query grid and, at each query, the truth 2 sin(q) + q and the estimate f(q)
    /// (null where every kernel weight is 0).
    pub queries: Vec<f64>,
    pub truth: Vec<f64>,
    pub estimate: Vec<Option<f64>>,
    /// How many grid queries have no estimate.
    pub undefined: usize,
    /// Attention weights, one row per grid query (rows of undefined queries are all 0).
    pub weights: Vec<Vec<f64>>,
    /// The selected query q, its weights over the training points and its estimate.
    pub q: f64,
    pub q_weights: Vec<f64>,
    pub q_estimate: Option<f64>,
    /// Leave-one-out squared error at this σ (null if no point can be predicted).
    pub loo: Option<LooLoss>,
}

pub fn compute(p: &Params) -> NwOutput {
    let kernel = p.kernel.kernel();
    let (x, y) = training_data(p);
    let queries = query_grid();
    let w = weights(queries.view(), x.view(), kernel, p.sigma); // (101, n)
    let est = estimate(&w, y.view());
    let qw = weights(arr1(&[p.q]).view(), x.view(), kernel, p.sigma); // (1, n)
    let q_est = estimate(&qw, y.view())[0];
    NwOutput {
        kernel: kernel.id(),
        sigma: p.sigma,
        truth: queries.iter().map(|&q| truth(q)).collect(),
        undefined: est.iter().filter(|e| e.is_none()).count(),
        estimate: est,
        weights: w.w.rows().into_iter().map(|r| r.to_vec()).collect(),
        q: p.q,
        q_weights: qw.w.row(0).to_vec(),
        q_estimate: q_est,
        loo: loo_loss(x.view(), y.view(), kernel, p.sigma),
        queries: queries.to_vec(),
        x_train: x.to_vec(),
        y_train: y.to_vec(),
    }
}

/// The training data alone (for the fitting loop, which must not redo the plots' work).
pub fn training_data(p: &Params) -> (Array1<f64>, Array1<f64>) {
    sample(p.n.max(1), p.seed)
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of the `nw` demo: data, truth and estimate; the selected query's weights over the
    //! keys; the attention matrix as a heatmap (click a row to pick that query); fitting σ by
    //! leave-one-out gradient descent, with its loss plotted per step.

    use crate::numerics::format::Signed;
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    use leptos::html::Canvas;
    use leptos::prelude::*;
    use ndarray::Array1;
    use plotters::prelude::*;

    use super::{training_data, NwDemo, NwOutput, Params};
    use crate::kit::controls::round_sig;
    use crate::kit::plot::heatmap::{draw_heatmap, CellRect, HeatmapSpec};
    use crate::kit::plot::{area, batch_dots, batch_segments, err, fit_canvas, legend_band, style_mesh, Frame, Mark};
    use crate::kit::theme::Palette;
    use crate::kit::DemoCtx;
    use crate::kit::{f4, number_table};
    use crate::numerics::kernel_regression::{Kernel, SigmaFit, GRID, X_MAX};
    use crate::state::fmt_num;

    const MAX_FIT_STEPS: usize = 80;

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<NwDemo>(ctx);
        let main_c = NodeRef::<Canvas>::new();
        let row_c = NodeRef::<Canvas>::new();
        let heat_c = NodeRef::<Canvas>::new();
        let loss_c = NodeRef::<Canvas>::new();
        let cells = StoredValue::new(CellRect::default());
        let history = RwSignal::new(Vec::<(f64, f64)>::new()); // (σ, LOO error) per fitting step
        let fitting = RwSignal::new(false);
        let fit_msg = RwSignal::new(String::new());

        ctx.paint(move |pal| {
            let (m, r, h) = (main_c.get()?, row_c.get()?, heat_c.get()?);
            Some(out.with(|o| {
                draw_main(&m, pal, o)?;
                draw_row(&r, pal, o)?;
                cells.set_value(draw_heat(&h, pal, o)?);
                Ok(())
            }))
        });
        ctx.paint(move |pal| loss_c.get().map(|c| history.with(|h| draw_loss(&c, pal, h))));

        // Clicking (or dragging on) the heatmap picks the query of that row.
        let pick = move |ev: web_sys::MouseEvent| {
            let Some(c) = heat_c.get_untracked() else { return };
            let scale = f64::from(c.width()) / f64::from(c.client_width().max(1));
            let rect = cells.get_value();
            let y = f64::from(ev.offset_y()) * scale;
            if rect.h <= 0.0 || y < rect.y || y > rect.y + rect.h {
                return;
            }
            let row = (((y - rect.y) / rect.h) * GRID as f64).floor().min(GRID as f64 - 1.0);
            // Row 0 is the top of the image: the largest query.
            let q = X_MAX * (GRID as f64 - 1.0 - row) / (GRID as f64 - 1.0);
            ctx.set_params::<Params>(|p| p.q = round_sig(q, 3));
        };

        let on_fit = move |_| {
            if fitting.get_untracked() {
                fitting.set(false);
                return;
            }
            let s = ctx.params_now::<Params>();
            let kernel = s.kernel.kernel();
            if !kernel.fittable() {
                fit_msg.set(match kernel {
                    Kernel::Boxcar => "The boxcar's leave-one-out error is a step function of σ: its gradient is 0 \
                                       almost everywhere, so gradient descent cannot move. Try the Gaussian or \
                                       Epanechnikov kernel."
                        .into(),
                    _ => "The constant kernel has no width to fit: every σ gives the same weights.".into(),
                });
                return;
            }
            let (x, y) = training_data(&s);
            let Some(fit) = SigmaFit::start(x.view(), y.view(), kernel, s.sigma) else {
                fit_msg.set("Fitting needs at least two training points.".into());
                return;
            };
            history.set(vec![(s.sigma, fit.current.loss)]);
            fit_msg.set("Fitting σ…".into());
            fitting.set(true);
            fit_loop(ctx, Rc::new(RefCell::new(fit)), Rc::new((x, y)), s, history, fitting, fit_msg, 0);
        };

        let status = move || {
            out.with(|o| {
                let loo = o
                    .loo
                    .map(|l| {
                        format!("Leave-one-out error at σ = {}: {:.3}.", fmt_num(round_sig(o.sigma, 3)), Signed(l.loss))
                    })
                    .unwrap_or_default();
                let qe = match o.q_estimate {
                    Some(v) => {
                        format!("f({}) = {:.3} (truth {:.3}).", fmt_num(o.q), Signed(v), Signed(2.0 * o.q.sin() + o.q))
                    }
                    None => format!("f({}) is undefined: no training point is within σ of q.", fmt_num(o.q)),
                };
                (qe, loo)
            })
        };
        let gap_note = move || {
            out.with(|o| {
                (o.undefined > 0).then(|| {
                    format!(
                        "At {} of {} query points no training point lies within σ = {} of q, so every kernel \
                         weight is 0 and the estimate would be 0/0. It is left undefined there: those are the gaps \
                         in the blue curve and the empty rows of the heatmap.",
                        o.undefined,
                        o.queries.len(),
                        fmt_num(round_sig(o.sigma, 3))
                    )
                })
            })
        };

        view! {
            <div class="nw-demo">
                <canvas node_ref=main_c class="plot" role="img"
                    aria-label="Scatter plot of the training data with the true function, the kernel regression \
                                estimate and the selected query"></canvas>
                <p class="readout">{move || status().0}" "{move || status().1}</p>
                {move || gap_note().map(|t| view! { <p class="notice gap-note" role="note">{t}</p> })}
                <canvas node_ref=row_c class="plot short" role="img"
                    aria-label="Stem plot of the selected query's attention weight on each training point"></canvas>
                <canvas node_ref=heat_c class="plot heat" role="img"
                    aria-label="Heatmap of the attention weights: queries by keys; click a row to pick that query"
                    on:click=pick
                    on:mousemove=move |ev: web_sys::MouseEvent| if ev.buttons() == 1 { pick(ev) }></canvas>
                <div class="fit-row">
                    <button type="button" class="fit-sigma" on:click=on_fit>
                        {move || if fitting.get() { "Stop fitting" } else { "Fit σ (leave-one-out)" }}
                    </button>
                    <span class="fit-msg" aria-live="polite">{move || fit_msg.get()}</span>
                </div>
                <canvas node_ref=loss_c class="plot short" class:hidden=move || history.with(|h| h.is_empty())
                    role="img" aria-label="Line chart of the leave-one-out error per fitting step"></canvas>
                {move || ctx.show_numbers.get().then(|| out.with(tables))}
            </div>
        }
        .into_any()
    }

    /// One fitting step every 35 ms, so the reader watches σ and the loss move.
    #[allow(clippy::too_many_arguments)]
    fn fit_loop(
        ctx: DemoCtx,
        fit: Rc<RefCell<SigmaFit>>,
        data: Rc<(Array1<f64>, Array1<f64>)>,
        start: Params,
        history: RwSignal<Vec<(f64, f64)>>,
        fitting: RwSignal<bool>,
        msg: RwSignal<String>,
        step: usize,
    ) {
        set_timeout(
            move || {
                if !fitting.get_untracked() {
                    msg.set("Fitting stopped.".into());
                    return;
                }
                let now = ctx.params_now::<Params>();
                if (now.n, now.seed, now.kernel) != (start.n, start.seed, start.kernel) {
                    fitting.set(false);
                    msg.set("Fitting stopped: the data or the kernel changed.".into());
                    return;
                }
                let (x, y) = (&data.0, &data.1);
                let more = fit.borrow_mut().step(x.view(), y.view(), start.kernel.kernel());
                let f = *fit.borrow();
                history.update(|h| h.push((f.sigma(), f.current.loss)));
                ctx.set_params::<Params>(|p| p.sigma = round_sig(f.sigma(), 4));
                if more && step + 1 < MAX_FIT_STEPS {
                    fit_loop(ctx, fit, data, start, history, fitting, msg, step + 1);
                } else {
                    fitting.set(false);
                    msg.set(format!(
                        "Fitted σ = {} after {} steps: leave-one-out error {:.3}. The link now holds this σ.",
                        fmt_num(round_sig(f.sigma(), 4)),
                        step + 1,
                        Signed(f.current.loss)
                    ));
                }
            },
            Duration::from_millis(35),
        );
    }

    fn tables(o: &NwOutput) -> impl IntoView {
        let rows = (0..o.x_train.len())
            .map(|i| {
                vec![
                    i.to_string(),
                    format!("{:.4}", Signed(o.x_train[i])),
                    format!("{:.4}", Signed(o.y_train[i])),
                    format!("{:.6}", Signed(o.q_weights[i])),
                ]
            })
            .collect();
        let grid_rows = (0..o.queries.len())
            .step_by(10)
            .map(|i| {
                vec![format!("{:.2}", Signed(o.queries[i])), format!("{:.4}", Signed(o.truth[i])), f4(o.estimate[i])]
            })
            .collect();
        view! {
            {number_table(
                format!("Training data and the weights of query q = {}", fmt_num(o.q)),
                vec!["i".into(), "key xᵢ".into(), "value yᵢ".into(), "α(q, xᵢ)".into()],
                rows,
            )}
            {number_table(
                "The estimate at every tenth grid query".into(),
                vec!["query q".into(), "truth 2 sin q + q".into(), "estimate f(q)".into()],
                grid_rows,
            )}
        }
    }

    fn y_range(o: &NwOutput) -> (f64, f64) {
        let lo = o.y_train.iter().chain(&o.truth).copied().fold(f64::INFINITY, f64::min);
        let hi = o.y_train.iter().chain(&o.truth).copied().fold(f64::NEG_INFINITY, f64::max);
        let span = (hi - lo).max(1.0);
        (lo - 0.06 * span, hi + 0.06 * span)
    }

    fn draw_main(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &NwOutput) -> Result<(), String> {
        let f = fit_canvas(canvas, 0.55, 280.0, 440.0);
        let root = area(canvas, pal)?;
        let plot = legend_band(
            &root,
            &f,
            pal,
            &[
                (Mark::Dot, pal.points, "training data (size ∝ weight for q)"),
                (Mark::Line, pal.green, "truth 2 sin x + x"),
                (Mark::Line, pal.blue, "estimate f(q)"),
                (Mark::Line, pal.orange, "query q"),
            ],
        )?;
        let (lo, hi) = y_range(o);
        let mut chart = ChartBuilder::on(&plot)
            .margin(f.px(10.0))
            .x_label_area_size(f.px(40.0))
            .y_label_area_size(f.px(46.0))
            .build_cartesian_2d(0f64..X_MAX, lo..hi)
            .map_err(err)?;
        style_mesh(&mut chart, &f, pal, "x", "y").draw().map_err(err)?;
        // The query: a vertical line at q.
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(o.q, lo), (o.q, hi)],
                pal.orange.mix(0.7).stroke_width(f.px(1.5)),
            )))
            .map_err(err)?;
        // Training points, batched by colour: the radius grows with the selected query's weight.
        let wmax = o.q_weights.iter().copied().fold(0.0, f64::max).max(1e-12);
        let (mut hot, mut cold) = (Vec::new(), Vec::new());
        for ((&x, &y), &w) in o.x_train.iter().zip(&o.y_train).zip(&o.q_weights) {
            let (px, py) = chart.backend_coord(&(x, y));
            let r = f.scale * (2.5 + 5.0 * (w / wmax).sqrt());
            if w > 1e-3 * wmax {
                hot.push((px, py, r))
            } else {
                cold.push((px, py, r))
            }
        }
        batch_dots(canvas, &cold, pal.points.mix(0.8))?;
        batch_dots(canvas, &hot, pal.orange.mix(0.75))?;
        chart
            .draw_series(LineSeries::new(
                o.queries.iter().copied().zip(o.truth.iter().copied()),
                pal.green.stroke_width(f.px(2.0)),
            ))
            .map_err(err)?;
        // The estimate, broken into runs where it is defined (gaps where the weights are 0/0).
        let mut run: Vec<(f64, f64)> = Vec::new();
        let mut runs = Vec::new();
        for (&q, e) in o.queries.iter().zip(&o.estimate) {
            match e {
                Some(v) => run.push((q, *v)),
                None if !run.is_empty() => runs.push(std::mem::take(&mut run)),
                None => {}
            }
        }
        if !run.is_empty() {
            runs.push(run);
        }
        for r in runs {
            if r.len() == 1 {
                chart.draw_series(std::iter::once(Circle::new(r[0], f.px(2.0), pal.blue.filled()))).map_err(err)?;
            } else {
                chart.draw_series(LineSeries::new(r, pal.blue.stroke_width(f.px(2.5)))).map_err(err)?;
            }
        }
        if let Some(v) = o.q_estimate {
            let (px, py) = chart.backend_coord(&(o.q, v));
            batch_dots(canvas, &[(px, py, f.scale * 5.0)], pal.blue.to_rgba())?;
        }
        root.present().map_err(err)
    }

    fn draw_row(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &NwOutput) -> Result<(), String> {
        let f = fit_canvas(canvas, 0.28, 170.0, 240.0);
        let root = area(canvas, pal)?;
        let wmax = o.q_weights.iter().copied().fold(0.0, f64::max);
        let top = if wmax > 0.0 { wmax * 1.15 } else { 1.0 };
        let mut chart = ChartBuilder::on(&root)
            .margin(f.px(10.0))
            .x_label_area_size(f.px(40.0))
            .y_label_area_size(f.px(46.0))
            .caption(format!("weights of the query q = {}", fmt_num(o.q)), f.font(13.0, pal.fg))
            .build_cartesian_2d(0f64..X_MAX, 0f64..top)
            .map_err(err)?;
        style_mesh(&mut chart, &f, pal, "key xᵢ", "α(q, xᵢ)").y_labels(4).draw().map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(o.q, 0.0), (o.q, top)],
                pal.orange.mix(0.5).stroke_width(f.px(1.0)),
            )))
            .map_err(err)?;
        let stems: Vec<_> = o
            .x_train
            .iter()
            .zip(&o.q_weights)
            .map(|(&x, &w)| (chart.backend_coord(&(x, 0.0)), chart.backend_coord(&(x, w))))
            .collect();
        batch_segments(canvas, &stems, pal.orange.to_rgba(), f.scale * 2.0)?;
        let heads: Vec<_> = stems.iter().map(|&(_, (x, y))| (x, y, f.scale * 2.5)).collect();
        batch_dots(canvas, &heads, pal.orange.to_rgba())?;
        root.present().map_err(err)
    }

    fn draw_heat(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &NwOutput) -> Result<CellRect, String> {
        let f = fit_canvas(canvas, 0.6, 260.0, 460.0);
        let root = area(canvas, pal)?;
        let n = o.x_train.len();
        let rows = o.weights.len();
        let vmax = o.weights.iter().flatten().copied().fold(0.0, f64::max).max(1e-12);
        let undefined: Vec<bool> = o.estimate.iter().map(Option::is_none).collect();
        // Queries grow upwards, like the plot's q axis: the largest at the top.
        let value = |qi: usize, c: usize| {
            if undefined[qi] {
                f64::NAN
            } else {
                o.weights[qi][c]
            }
        };
        let spec = HeatmapSpec {
            rows,
            cols: n,
            value: &value,
            vmin: 0.0,
            vmax,
            x_range: (0.0, n as f64),
            y_range: (0.0, X_MAX),
            rows_down: false,
            x_integer: true,
            x_desc: "key index i (keys sorted by xᵢ)",
            y_desc: "query q",
            bar_label: "weight α",
        };
        let rect = draw_heatmap(canvas, &root, &f, pal, &spec)?;
        mark_query(canvas, &f, pal, rect, o.q)?;
        Ok(rect)
    }

    /// A line across the heatmap at the selected query's row.
    fn mark_query(
        canvas: &web_sys::HtmlCanvasElement,
        f: &Frame,
        pal: &Palette,
        rect: CellRect,
        q: f64,
    ) -> Result<(), String> {
        let ctx = crate::kit::plot::heatmap::context(canvas)?;
        let y = rect.y + rect.h * (1.0 - q / X_MAX);
        ctx.set_stroke_style_str(&crate::kit::plot::interned::rgb(pal.orange));
        ctx.set_line_width(f.scale * 1.5);
        ctx.begin_path();
        ctx.move_to(rect.x - 6.0 * f.scale, y);
        ctx.line_to(rect.x + rect.w, y);
        ctx.stroke();
        Ok(())
    }

    fn draw_loss(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, h: &[(f64, f64)]) -> Result<(), String> {
        if h.is_empty() {
            return Ok(());
        }
        let f = fit_canvas(canvas, 0.3, 180.0, 240.0);
        let root = area(canvas, pal)?;
        let lo = h.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let hi = h.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let pad = 0.1 * (hi - lo).max(1e-3);
        let last = h[h.len() - 1];
        let mut chart = ChartBuilder::on(&root)
            .margin(f.px(10.0))
            .x_label_area_size(f.px(40.0))
            .y_label_area_size(f.px(52.0))
            .caption(
                format!("fitting: σ = {} after {} steps", fmt_num(round_sig(last.0, 4)), h.len() - 1),
                f.font(13.0, pal.fg),
            )
            .build_cartesian_2d(0f64..((h.len() - 1).max(1) as f64), (lo - pad)..(hi + pad))
            .map_err(err)?;
        style_mesh(&mut chart, &f, pal, "step", "leave-one-out error").y_labels(4).draw().map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                h.iter().enumerate().map(|(i, p)| (i as f64, p.1)),
                pal.blue.stroke_width(f.px(2.0)),
            ))
            .map_err(err)?;
        chart
            .draw_series(h.iter().enumerate().map(|(i, p)| Circle::new((i as f64, p.1), f.px(2.5), pal.blue.filled())))
            .map_err(err)?;
        root.present().map_err(err)
    }
}
