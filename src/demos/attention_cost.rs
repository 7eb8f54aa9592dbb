//! Demo `attention-cost` (chapter "efficient"): what attention costs as the sequence grows,
//! from the formulas (full, sliding window, low rank) and from a benchmark that runs in the
//! reader's browser (naive CPU, tiled CPU, the GPU's fused kernel) in a Web Worker.

use serde::Serialize;

use super::{spec, Demo, DemoSpec};

/// The longest sequence measured and plotted (the URL value is the length).
pub static N_MAX: &[(&str, &str)] =
    &[("1024", "up to 1,024"), ("2048", "up to 2,048"), ("4096", "up to 4,096"), ("8192", "up to 8,192")];

crate::params! {
    pub struct Params {
        n_max: usize = Param::choice("n-max", "Sequence lengths", N_MAX, 1),
        d: usize = Param::int("d", "Head size d", 16, 64, 64),
        window: usize = Param::int("window", "Sliding window w", 16, 1024, 256),
        rank: usize = Param::int("rank", "Low rank k", 16, 1024, 128),
    }
}

pub struct AttentionCostDemo;

impl Demo for AttentionCostDemo {
    const ID: &'static str = "attention-cost";
    const TITLE: &'static str = "What attention costs";
    const CAPTION: &'static str = "The first plot, FLOPs of one head: the work of one attention head as the \
        sequence grows, from the formulas. The second, measured time: the time it takes on this computer, measured \
        when you press Run the benchmark: the naive way, tiled with the online softmax, and fused on the GPU when \
        this browser has WebGPU.";
    type Params = Params;
    /// The formulas' costs (the measured times come from the worker, in the view).
    type Output = Formulas;
    /// No "Show numbers": its measured times are always shown in a table.
    const NUMBERS: bool = false;

    fn compute(p: &Params) -> Formulas {
        let (d, w, k) = (p.d.max(1), p.window.max(1), p.rank.max(1));
        let formulas = lengths(p.n_max)
            .into_iter()
            .map(|n| Costs { n, full: full(n, d), window: window(n, d, w), low_rank: low_rank(n, d, k) })
            .collect();
        Formulas {
            d,
            window: w,
            rank: k,
            formulas,
            note: "Benchmark times are measured in the browser; the page's Download data adds them.",
        }
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<AttentionCostDemo>();

/// The lengths measured and plotted: 128, 256, … up to `max`.
pub fn lengths(max: usize) -> Vec<usize> {
    (7..=13).map(|p| 1usize << p).filter(|&n| n <= max).collect()
}

/// The three costs at each length, for head size `d`, window `window` and rank `rank`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Formulas {
    pub d: usize,
    pub window: usize,
    pub rank: usize,
    pub formulas: Vec<Costs>,
    pub note: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Costs {
    pub n: usize,
    pub full: Cost,
    pub window: Cost,
    pub low_rank: Cost,
}

/// Multiply-adds ×2 (FLOPs) and stored scores (floats) of one head at length n.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Cost {
    pub n: usize,
    pub flops: f64,
    pub scores: f64,
}

/// Full attention: Q Kᵀ is n·n dot products of length d (2n²d FLOPs) and the weighted sum of
/// values as much again, so 4n²d; the n × n scores are stored.
pub fn full(n: usize, d: usize) -> Cost {
    let (n_, d_) = (n as f64, d as f64);
    Cost { n, flops: 4.0 * n_ * n_ * d_, scores: n_ * n_ }
}

/// Sliding window (Mistral): each query sees at most w keys (itself and the w − 1 before it):
/// 4·d FLOPs per (query, key) pair over Σᵢ min(i + 1, w) pairs; that many scores.
pub fn window(n: usize, d: usize, w: usize) -> Cost {
    let pairs: f64 = (0..n).map(|i| (i + 1).min(w) as f64).sum();
    Cost { n, flops: 4.0 * d as f64 * pairs, scores: pairs }
}

/// Linformer: K and V are first projected from n rows to k (E K, F V: 2·(2nkd) FLOPs), then
/// attention runs over k keys (4nkd): 8nkd in all; n × k scores.
pub fn low_rank(n: usize, d: usize, k: usize) -> Cost {
    let (n_, d_, k_) = (n as f64, d as f64, k.min(n) as f64);
    Cost { n, flops: 8.0 * n_ * k_ * d_, scores: n_ * k_ }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `attention-cost`: the formulas' cost curves, and a benchmark run in a Web Worker
    //! (the compute worker of the GPT-2 chapter, which has the CPU kernels and the GPU backend).

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;
    use web_sys::HtmlCanvasElement;

    use super::{lengths, AttentionCostDemo, Cost, Costs, Demo, Params};
    use crate::session::protocol::{Reply, Request};
    use crate::gpu::bench::AttentionRow;
    use crate::kit::plot::{area, err, fit_canvas, legend_band, Mark};
    use crate::kit::theme::Palette;
    use crate::kit::worker::{ComputeWorker, Event};
    use crate::kit::DemoCtx;

    type Series<'a> = (&'a str, RGBColor, Vec<(f64, f64)>);

    /// A log-log chart of several series against n. The x axis is drawn in log₂ n so that each
    /// measured length (128, 256, …) gets its own label.
    fn draw_loglog(
        canvas: &HtmlCanvasElement,
        pal: &Palette,
        title: &str,
        y_desc: &str,
        series: &[Series],
    ) -> Result<(), String> {
        let f = fit_canvas(canvas, 0.7, 220.0, 340.0);
        let root = area(canvas, pal)?;
        let items: Vec<(Mark, RGBColor, &str)> = series.iter().map(|(l, c, _)| (Mark::Line, *c, *l)).collect();
        let rest = legend_band(&root, &f, pal, &items)?;
        let pts = series.iter().flat_map(|s| s.2.iter()).filter(|p| p.1 > 0.0);
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in pts {
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
        if x0 > x1 {
            return Ok(());
        }
        let mut chart = ChartBuilder::on(&rest)
            .margin(f.px(10.0))
            .caption(title, f.font(13.0, pal.fg))
            .x_label_area_size(f.px(36.0))
            .y_label_area_size(f.px(56.0))
            .build_cartesian_2d(x0.log2() - 0.3..x1.log2() + 0.3, (y0 * 0.5..y1 * 2.0).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("sequence length n")
            .y_desc(y_desc)
            .axis_desc_style(f.font(13.0, pal.fg))
            .label_style(f.font(12.0, pal.muted))
            .axis_style(pal.muted)
            .bold_line_style(pal.grid)
            .light_line_style(TRANSPARENT)
            .x_labels((x1.log2() - x0.log2()) as usize + 3)
            .x_label_formatter(&|v| {
                if (v - v.round()).abs() < 1e-6 {
                    format!("{}", 2f64.powi(v.round() as i32))
                } else {
                    String::new()
                }
            })
            // a log axis: "10⁷", not "1e7"
            .y_label_formatter(&|v| {
                let s = crate::numerics::format::num(*v);
                s.strip_prefix("1 × ").map(str::to_string).unwrap_or(s)
            })
            .draw()
            .map_err(err)?;
        for (_, colour, pts) in series {
            let pts: Vec<(f64, f64)> = pts.iter().copied().filter(|p| p.1 > 0.0).map(|(x, y)| (x.log2(), y)).collect();
            chart.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(f.px(2.0)))).map_err(err)?;
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, f.px(3.0), colour.filled()))).map_err(err)?;
        }
        root.present().map_err(err)
    }

    fn mb(bytes: usize) -> String {
        if bytes >= 1_000_000 {
            format!("{:.1} MB", Signed(bytes as f64 / 1e6))
        } else {
            format!("{:.1} KB", Signed(bytes as f64 / 1e3))
        }
    }

    /// The readout: the run's progress or how to start one, the GPU used (or why none), and how
    /// closely the GPU's output matched the CPU's.
    fn status_text(r: &[AttentionRow], running: Option<(usize, Vec<usize>, usize)>) -> String {
        let gpu = r.iter().find_map(|x| x.gpu_name.clone());
        let note = r.iter().find_map(|x| x.gpu_note.clone());
        let worst =
            r.iter().filter_map(|x| x.gpu_max_diff).fold(None, |m: Option<f32>, e| Some(m.map_or(e, |m| m.max(e))));
        let mut parts = Vec::new();
        match (running, r.is_empty()) {
            (Some((i, ns, _)), _) => {
                parts.push(format!("Measuring n = {} ({} of {})…", ns.get(i).copied().unwrap_or(0), i + 1, ns.len()))
            }
            (None, true) => parts.push(
                "Press Run the benchmark to time attention on this computer (one head, causal, CPU and GPU).".into(),
            ),
            (None, false) => {}
        }
        if let Some(g) = gpu {
            parts.push(format!("GPU: {g}."));
        } else if let Some(n) = note {
            parts.push(format!("No GPU column: {n}."));
        }
        if let Some(e) = worst {
            parts.push(format!(
                "The GPU's output matches the naive CPU result to within {} (largest difference over every \
                 output).",
                crate::numerics::format::num(f64::from(e))
            ));
        }
        parts.join(" ")
    }

    /// "Show numbers": the measured rows.
    fn bench_table(r: &[AttentionRow]) -> impl IntoView {
        let body = r
            .iter()
            .map(|x| {
                vec![
                    x.n.to_string(),
                    format!("{:.1} ms", Signed(x.naive_ms)),
                    format!("{:.1} ms", Signed(x.tiled_ms)),
                    x.gpu_ms.map_or("—".into(), |m| format!("{m:.1} ms", m = Signed(m))),
                    mb(x.naive_bytes),
                    mb(x.tiled_bytes),
                ]
            })
            .collect();
        crate::kit::number_table(
            "Measured: one head of causal self-attention".into(),
            ["n", "naive CPU", "tiled CPU", "GPU fused", "naive: stored scores", "tiled: state per row"]
                .map(String::from)
                .to_vec(),
            body,
        )
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let params = ctx.params::<Params>();
        let formulas = Memo::new(move |_| params.with(AttentionCostDemo::compute));
        let rows = RwSignal::new(Vec::<AttentionRow>::new());
        // (next index to measure, lengths to measure) while running.
        let running = RwSignal::new(None::<(usize, Vec<usize>, usize)>);
        let (formula_canvas, time_canvas) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());

        // Asks for the next length, or ends the run: the worker (and what it computes) goes away.
        let send_next = move |w: ComputeWorker| {
            let Some((i, ns, d)) = running.get_untracked() else { return };
            match ns.get(i) {
                Some(&n) => {
                    w.send(Request::AttentionBench { id: 0, n, d });
                }
                None => {
                    running.set(None);
                    w.terminate();
                }
            }
        };
        let worker = ComputeWorker::new(move |w, ev| match ev {
            Event::Reply(Reply::AttentionBench { row, .. }) => {
                rows.update(|r| r.push(row));
                running.update(|r| {
                    if let Some(r) = r {
                        r.0 += 1
                    }
                });
                send_next(w);
            }
            Event::Reply(Reply::Error { message, .. }) | Event::Died(message) => {
                running.set(None);
                ctx.error.set(Some(message));
            }
            _ => {}
        });
        let halt = move || {
            running.set(None);
            worker.terminate();
        };
        let run = move |_| {
            if running.get_untracked().is_some() {
                return;
            }
            let p = ctx.params_now::<Params>();
            let (ns, d) = (lengths(p.n_max), p.d.max(1));
            rows.set(Vec::new());
            running.set(Some((0, ns, d)));
            send_next(worker); // a fresh worker: the first size waits until it listens
        };
        let stop = move |_| halt();

        ctx.paint(move |pal| {
            let c = formula_canvas.get()?;
            let pal = *pal;
            Some(formulas.with(|f| {
                let pts = |cost: &dyn Fn(&Costs) -> Cost| {
                    f.formulas.iter().map(|c| (c.n as f64, cost(c).flops)).collect::<Vec<_>>()
                };
                let (lw, lk) = (format!("sliding window, w = {}", f.window), format!("low rank, k = {}", f.rank));
                draw_loglog(
                    &c,
                    &pal,
                    &format!("FLOPs of one head (d = {})", f.d),
                    "FLOPs",
                    &[
                        ("full: 4n²d", pal.orange, pts(&|c| c.full)),
                        (&lw, pal.blue, pts(&|c| c.window)),
                        (&lk, pal.green, pts(&|c| c.low_rank)),
                    ],
                )
            }))
        });
        ctx.paint(move |pal| {
            let c = time_canvas.get()?;
            let pal = *pal;
            Some(rows.with(|r| {
                let pts = |f: &dyn Fn(&AttentionRow) -> Option<f64>| {
                    r.iter().filter_map(|row| Some((row.n as f64, f(row)?))).collect::<Vec<_>>()
                };
                draw_loglog(
                    &c,
                    &pal,
                    "Measured time on this computer",
                    "milliseconds",
                    &[
                        ("naive CPU (stores n × n)", pal.orange, pts(&|x| Some(x.naive_ms))),
                        ("tiled CPU (online softmax)", pal.blue, pts(&|x| Some(x.tiled_ms))),
                        ("GPU, fused kernel", pal.green, pts(&|x| x.gpu_ms)),
                    ],
                )
            }))
        });
        Effect::new(move |_| {
            let r = rows.get();
            ctx.computed.set((!r.is_empty()).then(|| serde_json::json!({ "benchmark": r })));
        });

        let status = move || status_text(&rows.get(), running.get());
        let table = move || rows.with(|r| (!r.is_empty()).then(|| bench_table(r)));

        view! {
            <div class="attention-cost" data-rows=move || rows.with(Vec::len).to_string()
                data-running=move || running.with(Option::is_some).to_string()>
                <div class="two-col">
                    <canvas node_ref=formula_canvas class="plot" role="img"
                        aria-label="FLOPs of full, sliding-window and low-rank attention against sequence length, \
                            log-log"></canvas>
                    <canvas node_ref=time_canvas class="plot" role="img"
                        aria-label="Measured time of naive, tiled and GPU attention against sequence length, log-log">
                    </canvas>
                </div>
                <div class="row-actions">
                    <button type="button" class="run-bench" on:click=run
                        disabled=move || running.with(Option::is_some)>"Run the benchmark"</button>
                    {move || running.with(Option::is_some).then(|| view! {
                        <button type="button" class="stop" on:click=stop>"Stop"</button>
                    })}
                </div>
                <p class="readout" role="status">{status}</p>
                {table}
            </div>
        }
        .into_any()
    }
}
