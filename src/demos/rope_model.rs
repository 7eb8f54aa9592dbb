//! Demo `rope-model` (chapter "positional"): does only the offset matter in a real model? One
//! word is repeated, so every position holds the same content, and a bundled model in a Web
//! Worker gives one head's queries and keys for it (`Request::HeadQkv`). With RoPE (the
//! Llama-family model) the score of the query at m against the key at n is a function of m − n
//! alone; with GPT-2's learned `wpe` added to the input it depends on m and n. `analyze`
//! (DOM-free, tested natively on the same models) measures how far each diagonal is from
//! constant.

use std::collections::HashMap;

use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::session::protocol::HeadQkv;

crate::options! {
    /// The bundled models (the URL value is the model's folder under `/models/`).
    pub enum Model {
        StoriesLlama = ("stories-llama", "Pet stories, Llama family (RoPE)"),
        Stories = ("stories", "Pet stories, GPT-2 (learned wpe)"),
        Smollm2 = ("smollm2", "SmolLM2-135M, Llama family (once loaded in “A real model, live”)"),
    }
}

crate::params! {
    pub struct Params {
        model: Model = Param::choice("model", "Model", Model::OPTIONS, 0),
        /// the word repeated (a leading space is added to each copy, as inside a sentence)
        word: String = Param::text("word", "Word repeated", 40, "cat"),
        copies: usize = Param::int("copies", "Copies", 4, 100, 48),
        /// the head read (the sliders end at the loaded model's last layer and head; a larger value
        /// moves there, with a notice when the link asked for it)
        layer: usize = Param::int("layer", "Layer", 0, 29, 0),
        head: usize = Param::int("head", "Head", 0, 8, 0),
    }
}

pub struct RopeModelDemo;

impl Demo for RopeModelDemo {
    const ID: &'static str = "rope-model";
    const TITLE: &'static str = "Only the offset matters, in a real model";
    const CAPTION: &'static str = "One word repeated, so that every position holds the same token. One head's score \
        q·k/√d for every query position m (rows) and earlier key position n (columns), and the same scores against \
        the offset m − n for three query positions. With RoPE the curves lie on top of each other.";
    type Params = Params;
    /// The scores come from the model in the worker: without it, what the view asks of it.
    type Output = Inputs;
    /// No "Show numbers": its figures are printed in the readout under the plots.
    const NUMBERS: bool = false;

    fn compute(p: &Params) -> Inputs {
        Inputs {
            model: p.model.key(),
            prompt: prompt(&p.word, p.copies),
            layer: p.layer,
            head: p.head,
            note: "The scores are computed by the model in the browser; the page's Download data adds them.",
        }
    }

    /// The page asks the worker's session for the head's Q and K; here the same session runs on
    /// the model files, and the same `analyze` follows.
    // Natively only: the page fetches and asks the worker; the engine stays out of the page.
    #[cfg(not(target_arch = "wasm32"))]
    fn load(p: &Params, read: &mut super::Reader) -> Option<Result<serde_json::Value, String>> {
        if p.model == Model::Smollm2 {
            return None; // read from the browser's cache only
        }
        let mut run = || {
            let session = super::bundled_session(p.model.key(), read)?;
            let qkv = session.head_qkv(0, &prompt(&p.word, p.copies), p.layer, p.head).map_err(|e| e.to_string())?;
            super::to_json(&analyze(&qkv)?)
        };
        Some(run())
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<RopeModelDemo>();

/// The model, prompt and head the view asks the worker about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inputs {
    pub model: &'static str,
    pub prompt: String,
    pub layer: usize,
    pub head: usize,
    pub note: &'static str,
}

/// `copies` copies of the word, each with a leading space (" cat cat cat"): inside a sentence a
/// word carries its space, so every copy is the same token. An empty word reads as "cat".
pub fn prompt(word: &str, copies: usize) -> String {
    let word = word.split_whitespace().next().unwrap_or("cat");
    format!(" {word}").repeat(copies.max(1))
}

/// What the demo shows for one head.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scores {
    pub tokens: Vec<String>,
    pub layer: usize,
    pub head: usize,
    /// (T, T): q_m · k_n / √d for n ≤ m; NaN above the diagonal (a causal model never compares
    /// a query with a later key).
    pub scores: Vec<Vec<f64>>,
    /// For each offset δ = m − n from 0: the largest spread (max − min) of the scores with that
    /// offset, among pairs whose query tokens and key tokens are the same (same content, different
    /// places).
    pub spread_by_offset: Vec<f64>,
    /// The largest of those: 0 when only the offset matters.
    pub spread: f64,
    /// max − min over all the scores, the scale `spread` is measured against.
    pub range: f64,
    /// Whether every position holds the same token (the word is one token).
    pub one_token: bool,
}

impl Scores {
    /// The spread as a share of the range (0: only the offset matters; 1: as much as anything).
    pub fn relative(&self) -> f64 {
        if self.range > 0.0 {
            self.spread / self.range
        } else {
            0.0
        }
    }
    /// Scores against the offset for query position m: (m − n, score) for n = m down to 0.
    pub fn by_offset(&self, m: usize) -> Vec<(f64, f64)> {
        (0..=m.min(self.scores.len().saturating_sub(1))).map(|n| ((m - n) as f64, self.scores[m][n])).collect()
    }
    /// The query positions whose curves the view draws: the last, two thirds and one third.
    pub fn shown_queries(&self) -> Vec<usize> {
        let t = self.scores.len();
        let mut ms = vec![t.saturating_sub(1), (2 * t) / 3, t / 3];
        ms.dedup();
        ms
    }
}

/// The scores of one head and how far each diagonal is from constant.
pub fn analyze(h: &HeadQkv) -> Result<Scores, String> {
    let (t, d) = (h.tokens.len(), h.d);
    if t == 0 || d == 0 || h.q.len() != t * d || h.k.len() != t * d {
        let (nq, nk) = (h.q.len(), h.k.len());
        return Err(format!("the worker sent {nq} query and {nk} key numbers for {t} tokens of size {d}"));
    }
    fn row(m: &[f32], i: usize, d: usize) -> &[f32] {
        &m[i * d..(i + 1) * d]
    }
    let scale = 1.0 / (d as f64).sqrt();
    // (T, d) · (T, d)ᵀ -> (T, T), lower triangle only
    let scores: Vec<Vec<f64>> = (0..t)
        .map(|m| {
            (0..t)
                .map(|n| {
                    if n > m {
                        return f64::NAN;
                    }
                    let (q, k) = (row(&h.q, m, d), row(&h.k, n, d));
                    let dot: f64 = q.iter().zip(k).map(|(&a, &b)| a as f64 * b as f64).sum();
                    dot * scale
                })
                .collect()
        })
        .collect();
    // Along each diagonal, group the pairs by (query token, key token): within a group the
    // content is the same and only the places differ.
    let ids: Vec<u32> = h.tokens.iter().map(|x| x.id).collect();
    let spread_by_offset: Vec<f64> = (0..t)
        .map(|delta| {
            let mut groups: HashMap<(u32, u32), (f64, f64)> = HashMap::new();
            for m in delta..t {
                let s = scores[m][m - delta];
                let e = groups.entry((ids[m], ids[m - delta])).or_insert((s, s));
                *e = (e.0.min(s), e.1.max(s));
            }
            groups.values().map(|(lo, hi)| hi - lo).fold(0.0, f64::max)
        })
        .collect();
    let all = scores.iter().flatten().copied().filter(|s| s.is_finite());
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), s| (a.min(s), b.max(s)));
    Ok(Scores {
        tokens: h.tokens.iter().map(|x| x.text.clone()).collect(),
        layer: h.layer,
        head: h.head,
        spread: spread_by_offset.iter().copied().fold(0.0, f64::max),
        spread_by_offset,
        range: hi - lo,
        one_token: ids.iter().all(|&i| i == ids[0]),
        scores,
    })
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `rope-model`: a compute worker loads the bundled model and returns one head's Q
    //! and K for the repeated word; the page draws the scores by position and by offset.

    use std::sync::Arc;

    use leptos::html::Canvas;
    use leptos::prelude::*;

    use super::{analyze, prompt, Params, Scores};
    use crate::session::protocol::{HeadQkv, Reply, Request};
    use crate::kit::plot::heatmap::{draw_heatmap, HeatmapSpec};
    use crate::kit::plot::lines::{draw_lines, Curve, Lines};
    use crate::kit::plot::{area, fit_canvas};
    use crate::kit::probe::probe;
    use crate::kit::worker::Event;
    use crate::kit::DemoCtx;
    use crate::numerics::format::num_sig;

    /// The readout: the head, the prompt's tokens, and how far the diagonals are from constant.
    fn status_text(s: &Scores, rope: bool) -> String {
        let t = s.tokens.len();
        let word = s.tokens.last().map_or(String::new(), |w| format!("“{}”", w.trim()));
        let tokens = if s.one_token {
            format!("{t} copies of the token {word}")
        } else {
            format!("{t} tokens (the word is several tokens: pairs are compared with the same tokens only)")
        };
        let verdict = if s.relative() < 1e-3 {
            "every diagonal is one colour: the score depends on the offset m − n alone"
        } else if rope {
            "the diagonals are not constant here: the content differs between positions"
        } else {
            "the diagonals change colour: the score depends on where the two tokens are, not only how far apart"
        };
        format!(
            "Layer {} head {}, {tokens}. Along a diagonal the score varies by at most {} ({}% of the range \
             of all scores, {}): {verdict}.",
            s.layer,
            s.head,
            num_sig(s.spread, 2),
            num_sig(100.0 * s.relative(), 2),
            num_sig(s.range, 2),
        )
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let params = ctx.params::<Params>();
        let ask = move || {
            let (model, word, copies) = params.with(|p| (p.model, p.word.clone(), p.copies));
            let (layer, head) = params.with(|p| (p.layer, p.head));
            let requests = vec![Request::HeadQkv { id: 0, prompt: prompt(&word, copies), layer, head }];
            crate::demos::ask_model(model.key(), model.label(), requests)
        };
        let probe = probe(ctx, ask, |ev| match ev {
            Event::Reply(Reply::HeadQkv(h)) => Some((h.id, h)),
            _ => None,
        });
        probe.limit_layer_head(ctx, <super::RopeModelDemo as crate::demos::Demo>::ID);
        let report = RwSignal::new(None::<Arc<Scores>>);
        Effect::new(move |_| {
            probe.answers.with(|a| {
                // No answer (another model is loading, or is not stored): no plots of the last one.
                let Some(h): Option<&HeadQkv> = a.as_ref().and_then(|v| v.first()) else {
                    if report.with_untracked(Option::is_some) {
                        report.set(None);
                    }
                    return;
                };
                match analyze(h) {
                    Ok(s) => {
                        ctx.computed.set(serde_json::to_value(&s).ok());
                        report.set(Some(Arc::new(s)));
                    }
                    Err(e) => ctx.error.set(Some(e)),
                }
            })
        });

        let (heat, lines) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
        ctx.paint(move |pal| {
            let c = heat.get()?;
            let pal = *pal;
            report.with(|r| {
                let r = r.as_ref()?;
                let t = r.scores.len();
                let f = fit_canvas(&c, 0.9, 240.0, 480.0);
                let value = |m: usize, n: usize| r.scores[m][n];
                let finite = r.scores.iter().flatten().copied().filter(|v| v.is_finite());
                let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
                let spec = HeatmapSpec {
                    rows: t,
                    cols: t,
                    value: &value,
                    vmin: lo,
                    vmax: hi.max(lo + 1e-9),
                    x_range: (0.0, t as f64),
                    y_range: (0.0, t as f64),
                    rows_down: true,
                    x_integer: true,
                    x_desc: "key position n",
                    y_desc: "query position m",
                    bar_label: "score",
                };
                Some(area(&c, &pal).and_then(|root| draw_heatmap(&c, &root, &f, &pal, &spec).map(|_| ())))
            })
        });
        ctx.paint(move |pal| {
            let c = lines.get()?;
            let pal = *pal;
            report.with(|r| {
                let r = r.as_ref()?;
                let colours = [pal.blue, pal.orange, pal.green];
                let labels: Vec<String> = r.shown_queries().iter().map(|m| format!("query at m = {m}")).collect();
                let curves: Vec<Curve> = r
                    .shown_queries()
                    .iter()
                    .zip(&labels)
                    .zip(colours)
                    .map(|((&m, label), colour)| Curve { label, colour, points: r.by_offset(m), dashed: false })
                    .collect();
                let spec =
                    Lines {
                        curves: &curves, x_desc: "offset m − n", y_desc: "score", y_range: None, x_integer: true
                    };
                Some(draw_lines(&c, &pal, &spec))
            })
        });

        let status = move || {
            let model = params.with(|p| p.model);
            if let Some(wait) = probe.waiting(ctx, model.key()) {
                return wait;
            }
            let rope = model != super::Model::Stories;
            report.with(|r| r.as_ref().map_or_else(|| "Computing…".into(), |s| status_text(s, rope)))
        };
        view! {
            <p class="readout rope-model-status" role="status">{status}</p>
            <div class="two-col" hidden=move || report.with(Option::is_none)>
                <figure>
                    <figcaption>"Score of query m against key n"</figcaption>
                    <canvas node_ref=heat class="plot" role="img"
                        aria-label="The head's scores, query positions down, key positions across"></canvas>
                </figure>
                <figure>
                    <figcaption>"The same scores against the offset"</figcaption>
                    <canvas node_ref=lines class="plot" role="img"
                        aria-label="Scores against the offset m minus n for three query positions"></canvas>
                </figure>
            </div>
        }
        .into_any()
    }
}
