//! Demo `linformer` (chapter "efficient"): how low-rank real attention matrices are. A bundled
//! GPT-2 model in a Web Worker gives one head's Q, K and V for a text (`Request::HeadQkv`);
//! `analyze` (DOM-free, tested natively on the same model) computes the attention matrix, its
//! singular values, the error of the best rank-k approximation and of Linformer's projection.

use ndarray::Array2;
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::session::protocol::HeadQkv;
#[cfg(not(target_arch = "wasm32"))]
use crate::session::Gpt2Session as Session;
use crate::numerics::attention::{attention, causal_mask, MaskFill};
use crate::numerics::low_rank::{linformer_errors, output_errors, svd, truncation_errors, Svd};

crate::options! {
    /// The bundled models (the URL value is the model's folder under `/models/`).
    pub enum Model {
        Stories = ("stories", "Pet stories (4 layers × 4 heads)"),
        Induction = ("induction", "Induction (2 layers × 4 heads)"),
    }
}

/// The text each model reads: the kind it was trained on, long enough for a 40-60 row matrix.
pub fn text_for(model: &str) -> &'static str {
    match model {
        "induction" => "Q F K B X R T M W Q F K B X R T M W Q F K B X R T M W Q F K B X R T M",
        _ => {
            "Tom has a little dog named Max. Max likes to run in the park. One day Max saw a cat in a tree. \
             He barked at it, and the cat looked down at him. Tom laughed and threw a ball, and Max ran after it."
        }
    }
}

crate::params! {
    pub struct Params {
        model: Model = Param::choice("model", "Model", Model::OPTIONS, 0),
        /// the head read (the sliders end at the loaded model's last layer and head; a larger value
        /// moves there, with a notice when the link asked for it)
        layer: usize = Param::int("layer", "Layer", 0, 3, 0),
        head: usize = Param::int("head", "Head", 0, 3, 0),
        causal: bool = Param::boolean("causal", "Causal mask", false),
        /// the rank of the approximations drawn and quoted
        k: usize = Param::int("k", "Rank k", 1, 64, 8),
    }
}

pub struct LinformerDemo;

impl Demo for LinformerDemo {
    const ID: &'static str = "linformer";
    const TITLE: &'static str = "How low-rank is real attention?";
    const CAPTION: &'static str = "One head of a bundled GPT-2 model reads a text. Its attention matrix, the matrix \
        rebuilt from the k largest singular values, and the output error of two rank-k shortcuts: P replaced by its \
        best rank-k approximation (SVD), and Linformer's projection of keys and values onto k averaged positions.";
    type Params = Params;
    /// The matrices come from the model in the worker: without it, what the view asks of it.
    type Output = Inputs;
    /// No "Show numbers": its errors are printed in the readout under the plot.
    const NUMBERS: bool = false;

    fn compute(p: &Params) -> Inputs {
        Inputs {
            model: p.model.key(),
            text: text_for(p.model.key()),
            layer: p.layer,
            head: p.head,
            causal: p.causal,
            k: p.k,
            note: "The matrices are computed by the model in the browser; the page's Download data adds them.",
        }
    }

    /// The page asks the worker's session for the head's Q, K and V; here the same session runs
    /// on the model files, and the same `analyze` follows.
    // Natively only: the page fetches and asks the worker; the engine stays out of the page.
    #[cfg(not(target_arch = "wasm32"))]
    fn load(p: &Params, read: &mut super::Reader) -> Option<Result<serde_json::Value, String>> {
        let mut run = || {
            let dir = format!("models/{}", p.model.key());
            let config = String::from_utf8(read(&format!("{dir}/config.json"))?).map_err(|e| e.to_string())?;
            let session =
                Session::new(&config, &read(&format!("{dir}/model.safetensors"))?).map_err(|e| e.to_string())?;
            let qkv = session.head_qkv(0, text_for(p.model.key()), p.layer, p.head).map_err(|e| e.to_string())?;
            super::to_json(&analyze(&qkv, p.causal)?)
        };
        Some(run())
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<LinformerDemo>();

/// The model, text and head the view asks the worker about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inputs {
    pub model: &'static str,
    pub text: &'static str,
    pub layer: usize,
    pub head: usize,
    pub causal: bool,
    pub k: usize,
    pub note: &'static str,
}

/// What the demo shows for one head.
#[derive(Serialize)]
pub struct LowRank {
    pub tokens: Vec<String>,
    pub causal: bool,
    /// The (n, n) attention weights softmax(QKᵀ/√d), masked or not.
    pub weights: Vec<Vec<f64>>,
    /// Singular values, largest first.
    pub sigma: Vec<f64>,
    /// For k = 0 ..= n: ‖P − P_k‖_F/‖P‖_F and ‖(P − P_k)V‖_F/‖PV‖_F (P_k: the best rank-k approximation of P).
    pub matrix_error: Vec<f64>,
    pub output_error: Vec<f64>,
    /// For k = 1 ..= n, without the mask only: Linformer with E = F = segment means.
    pub linformer_error: Option<Vec<f64>>,
    #[serde(skip)]
    svd: Svd,
}

impl LowRank {
    /// The best rank-k approximation U_k Σ_k V_kᵀ, for the heatmap beside the original.
    pub fn approx(&self, k: usize) -> Vec<Vec<f64>> {
        let n = self.sigma.len();
        let k = k.min(n);
        let mut a = Array2::<f64>::zeros((n, n));
        for i in 0..k {
            for r in 0..n {
                let x = self.svd.sigma[i] * self.svd.u[[r, i]];
                for c in 0..n {
                    a[[r, c]] += x * self.svd.v[[c, i]];
                }
            }
        }
        a.rows().into_iter().map(|r| r.to_vec()).collect()
    }

    /// The smallest k whose best approximation keeps the output within `tol` (relative).
    pub fn rank_for(&self, tol: f64) -> usize {
        self.output_error.iter().position(|&e| e <= tol).unwrap_or(self.sigma.len())
    }
}

pub fn analyze(h: &HeadQkv, causal: bool) -> Result<LowRank, String> {
    let n = h.tokens.len();
    let mat = |x: &[f32]| {
        Array2::from_shape_vec((n, h.d), x.iter().map(|&v| f64::from(v)).collect())
            .map_err(|e| format!("the worker sent a malformed matrix: {e}"))
    };
    let (q, k, v) = (mat(&h.q)?, mat(&h.k)?, mat(&h.v)?);
    if n == 0 {
        return Err("the text has no tokens".into());
    }
    // With the causal mask, keys after the query get −∞ before the softmax, so weight exactly 0.
    let mask = causal_mask(n);
    let p = attention(q.view(), k.view(), v.view(), causal.then(|| mask.view()), MaskFill::NegInf, true).weights;
    let s = svd(p.view());
    Ok(LowRank {
        tokens: h.tokens.iter().map(|t| t.text.clone()).collect(),
        causal,
        weights: p.rows().into_iter().map(|r| r.to_vec()).collect(),
        sigma: s.sigma.to_vec(),
        matrix_error: truncation_errors(s.sigma.as_slice().unwrap_or(&[])),
        output_error: output_errors(p.view(), &s, v.view()),
        linformer_error: (!causal).then(|| linformer_errors(q.view(), k.view(), v.view())),
        svd: s,
    })
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `linformer`: a compute worker loads a bundled model and returns one head's Q, K, V;
    //! the page draws the attention matrix and its rank-k rebuild, the singular values and the
    //! errors of the rank-k shortcuts against k.

    use crate::numerics::format::Signed;
    use std::sync::Arc;

    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;
    use web_sys::HtmlCanvasElement;

    use super::{analyze, text_for, LowRank, Params};
    use crate::session::protocol::{HeadQkv, Reply, Request};
    use crate::kit::plot::heatmap::{draw_heatmap, HeatmapSpec};
    use crate::kit::plot::{area, err, fit_canvas, legend_band, style_mesh, Mark};
    use crate::kit::probe::{probe, Probe};
    use crate::kit::theme::Palette;
    use crate::kit::worker::Event;
    use crate::kit::DemoCtx;

    type Series<'a> = (&'a str, RGBColor, Vec<(f64, f64)>);

    /// Curves against an integer x on a log y axis, with an optional vertical marker at `mark`.
    fn draw_log_y(
        canvas: &HtmlCanvasElement,
        pal: &Palette,
        title: &str,
        x_desc: &str,
        y_desc: &str,
        series: &[Series],
        mark: Option<f64>,
    ) -> Result<(), String> {
        let f = fit_canvas(canvas, 0.7, 220.0, 320.0);
        let root = area(canvas, pal)?;
        let items: Vec<(Mark, RGBColor, &str)> = series.iter().map(|(l, c, _)| (Mark::Line, *c, *l)).collect();
        let rest = legend_band(&root, &f, pal, &items)?;
        let floor = 1e-4;
        let x1 = series.iter().flat_map(|s| s.2.iter().map(|p| p.0)).fold(1.0, f64::max);
        let mut chart = ChartBuilder::on(&rest)
            .margin(f.px(10.0))
            .caption(title, f.font(13.0, pal.fg))
            .x_label_area_size(f.px(36.0))
            .y_label_area_size(f.px(52.0))
            .build_cartesian_2d(0.0..x1 + 1.0, (floor..1.5).log_scale())
            .map_err(err)?;
        style_mesh(&mut chart, &f, pal, x_desc, y_desc)
            .x_labels(8)
            .x_label_formatter(&|v| {
                if (v - v.round()).abs() < 1e-9 {
                    format!("{v:.0}", v = Signed(v))
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| crate::kit::plot::matrix::short(*v))
            .draw()
            .map_err(err)?;
        if let Some(k) = mark {
            chart
                .draw_series(LineSeries::new([(k, floor), (k, 1.5)], pal.muted.stroke_width(f.px(1.0))))
                .map_err(err)?;
        }
        for (_, colour, pts) in series {
            let pts: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (x, y.max(floor))).collect();
            chart.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(f.px(2.0)))).map_err(err)?;
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, f.px(2.0), colour.filled()))).map_err(err)?;
        }
        root.present().map_err(err)
    }

    fn pct(x: f64) -> String {
        if x < 0.001 {
            format!("{:.2}%", Signed(x * 100.0))
        } else {
            format!("{:.1}%", Signed(x * 100.0))
        }
    }

    /// The chosen head's Q, K and V, from the bundled model the controls name (loaded first).
    fn ask(ctx: DemoCtx, params: Memo<Params>) -> Probe<HeadQkv> {
        let ask = move || {
            let (model, layer, head) = params.with(|p| (p.model, p.layer, p.head));
            let requests = vec![Request::HeadQkv { id: 0, prompt: text_for(model.key()).into(), layer, head }];
            crate::demos::ask_model(model.key(), model.label(), requests)
        };
        let probe = probe(ctx, ask, |ev| match ev {
            Event::Reply(Reply::HeadQkv(h)) => Some((h.id, h)),
            _ => None,
        });
        probe.limit_layer_head(ctx, <super::LinformerDemo as crate::demos::Demo>::ID);
        probe
    }

    /// P or its rank-k rebuild, on one colour scale up to `vmax`.
    fn heat(c: &HtmlCanvasElement, pal: &Palette, m: &[Vec<f64>], vmax: f64) -> Result<(), String> {
        let n = m.len();
        let f = crate::kit::plot::fit_canvas(c, 0.9, 240.0, 480.0);
        let root = area(c, pal)?;
        let value = |r: usize, col: usize| m[r][col];
        let spec = HeatmapSpec {
            rows: n,
            cols: n,
            value: &value,
            vmin: 0.0,
            vmax,
            x_range: (0.0, n as f64),
            y_range: (0.0, n as f64),
            rows_down: true,
            x_integer: true,
            x_desc: "key position",
            y_desc: "query position",
            bar_label: "weight",
        };
        draw_heatmap(c, &root, &f, pal, &spec).map(|_| ())
    }

    /// The readout: the head, P's size, the errors at rank k, the rank for 1% output error.
    fn status_text(h: &HeadQkv, r: &LowRank, k: usize, (want_l, want_h): (usize, usize)) -> String {
        let n = r.sigma.len();
        let k = k.min(n);
        let clamped = if (want_l, want_h) != (h.layer, h.head) {
            " (this model has fewer layers or heads than asked; showing its last)"
        } else {
            ""
        };
        let mut s = format!(
            "Layer {} head {}{clamped}: {} tokens, so P is {n} × {n}. Keeping the {k} largest singular values \
             leaves {} of P and {} of the output. Rank needed for 1% output error: {}.",
            h.layer,
            h.head,
            n,
            pct(r.matrix_error[k]),
            pct(r.output_error[k]),
            r.rank_for(0.01)
        );
        match &r.linformer_error {
            Some(l) => s.push_str(&format!(" Linformer with {k} averaged positions: {} error.", pct(l[k - 1]))),
            None => s.push_str(
                " Linformer's curve needs the mask off: projecting the positions mixes future keys into the past.",
            ),
        }
        s
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let params = ctx.params::<Params>();
        let probe = ask(ctx, params);
        let qkv = Memo::new(move |_| probe.answers.with(|a| a.as_ref().and_then(|v| v.first().cloned())));

        let report = RwSignal::new(None::<Arc<LowRank>>);
        // Memos, so that moving the k slider re-runs neither the analysis nor the drawing of P.
        let causal = Memo::new(move |_| params.with(|p| p.causal));
        Effect::new(move |_| {
            let causal = causal.get();
            qkv.with(|h| match h {
                Some(h) => match analyze(h, causal) {
                    Ok(r) => {
                        ctx.computed.set(serde_json::to_value(&r).ok());
                        report.set(Some(Arc::new(r)));
                    }
                    Err(e) => ctx.error.set(Some(e)),
                },
                // No answer (another model is loading, or is not stored): no plots of the last one.
                None if report.with_untracked(Option::is_some) => report.set(None),
                None => {}
            });
        });
        let k_memo = Memo::new(move |_| params.with(|p| p.k.max(1)));
        let k = move || k_memo.get();

        // P and its rank-k rebuild share one colour scale, up to P's largest weight, so that a
        // diffuse head is not drawn all dark. (P_k may dip slightly below 0: drawn as 0.)
        let (p_canvas, pk_canvas) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
        let vmax = |r: &LowRank| r.weights.iter().flatten().fold(0.0f64, |a, &b| a.max(b)).max(1e-9);
        ctx.paint(move |pal| {
            let c = p_canvas.get()?;
            let pal = *pal;
            report.with(|r| r.as_ref().map(|r| heat(&c, &pal, &r.weights, vmax(r))))
        });
        ctx.paint(move |pal| {
            let ck = pk_canvas.get()?;
            let pal = *pal;
            let k = k();
            report.with(|r| r.as_ref().map(|r| heat(&ck, &pal, &r.approx(k), vmax(r))))
        });
        let (sv_canvas, err_canvas) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
        ctx.paint(move |pal| {
            let c = sv_canvas.get()?;
            let pal = *pal;
            report.with(|r| {
                let r = r.as_ref()?;
                let top = r.sigma.first().copied().unwrap_or(1.0).max(f64::MIN_POSITIVE);
                let pts = r.sigma.iter().enumerate().map(|(i, s)| ((i + 1) as f64, s / top)).collect();
                Some(draw_log_y(
                    &c,
                    &pal,
                    "Singular values of P",
                    "index i",
                    "σᵢ / σ₁",
                    &[("σᵢ / σ₁", pal.blue, pts)],
                    Some(k() as f64),
                ))
            })
        });
        ctx.paint(move |pal| {
            let c = err_canvas.get()?;
            let pal = *pal;
            report.with(|r| {
                let r = r.as_ref()?;
                let best: Vec<(f64, f64)> =
                    r.output_error.iter().enumerate().skip(1).map(|(k, &e)| (k as f64, e)).collect();
                let mut series = vec![("P → its best rank-k P_k (SVD)", pal.blue, best)];
                if let Some(l) = &r.linformer_error {
                    series.push((
                        "Linformer, k averaged positions",
                        pal.orange,
                        l.iter().enumerate().map(|(i, &e)| ((i + 1) as f64, e)).collect(),
                    ));
                }
                Some(draw_log_y(
                    &c,
                    &pal,
                    "Error of the attention output",
                    "rank k",
                    "relative error",
                    &series,
                    Some(k() as f64),
                ))
            })
        });

        let status = move || {
            if let Some(wait) = probe.waiting(ctx, params.with(|p| p.model.key())) {
                return wait;
            }
            let (Some(h), Some(r)) = (qkv.get(), report.get()) else { return "Computing…".into() };
            status_text(&h, &r, k(), params.with(|p| (p.layer, p.head)))
        };
        view! {
            <p class="readout linformer-status" role="status">{status}</p>
            <div class="two-col" hidden=move || report.with(Option::is_none)>
                <figure>
                    <figcaption>"Attention weights P"</figcaption>
                    <canvas node_ref=p_canvas class="plot" role="img"
                        aria-label="The head's attention weights, queries down, keys across"></canvas>
                </figure>
                <figure>
                    <figcaption>{move || format!("Rebuilt from the {} largest singular values", k())}</figcaption>
                    <canvas node_ref=pk_canvas class="plot" role="img"
                        aria-label="The attention matrix rebuilt from the k largest singular values"></canvas>
                </figure>
            </div>
            <div class="two-col" hidden=move || report.with(Option::is_none)>
                <canvas node_ref=sv_canvas class="plot" role="img"
                    aria-label="Singular values of the attention matrix, largest first, relative to the largest">
                </canvas>
                <canvas node_ref=err_canvas class="plot" role="img"
                    aria-label="Relative error of the attention output against the rank k"></canvas>
            </div>
        }
        .into_any()
    }
}
