//! Demo `translation` (chapter "why-attention"): the real thing. A trained translation Transformer
//! (a Marian encoder–decoder) translates the reader's text in the compute worker, and the page
//! draws the three attentions of the original Transformer on it: cross-attention (each written
//! token over the source: the alignment of this chapter), the encoder's self-attention over the
//! source (no mask) and the decoder's masked self-attention over the translation, per layer and
//! head or as the heads' mean, with heads knocked out on request and beam search's steps listed.

use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::session::protocol::{AttentionKind, Token, TranslateQuery, Translation};

crate::options! {
    /// The translation model. New options come last: a link names one by its key.
    pub enum Model {
        Dates = ("dates", "Dates in words → ISO dates (bundled, 2 MB)"),
    }
}

crate::options! {
    /// Which of the three attentions the matrix shows.
    pub enum Kind {
        Cross = ("cross", "Cross-attention: each written token over the source"),
        Encoder = ("encoder", "Encoder self-attention: the source over itself, no mask"),
        Decoder = ("decoder", "Decoder self-attention: the translation over itself, masked"),
    }
}

impl Model {
    /// The model's folder under the book's static files.
    pub fn folder(self) -> &'static str {
        match self {
            Model::Dates => "dates-marian",
        }
    }
}

impl Kind {
    pub fn attention(self) -> AttentionKind {
        match self {
            Kind::Cross => AttentionKind::Cross,
            Kind::Encoder => AttentionKind::Encoder,
            Kind::Decoder => AttentionKind::Decoder,
        }
    }
}

/// The text the demo opens with: the source says the day first and the year last, the ISO date
/// the other way round, so the alignment crosses.
pub const DEFAULT_TEXT: &str = "the twenty-third of march, nineteen ninety-eight";

/// Tokens a translation writes at most (the bundled model's dates take 11 and `</s>`).
pub const MAX_NEW: usize = 40;

crate::params! {
    pub struct Params {
        model: Model = Param::choice("model", "Model", Model::OPTIONS, 0),
        text: String = Param::text("text", "Text to translate", 300, DEFAULT_TEXT),
        beams: usize = Param::int("beams", "Beams (1 = greedy decoding)", 1, 8, 4),
        kind: Kind = Param::choice("attention", "Attention shown", Kind::OPTIONS, 0),
        layer: usize = Param::int("layer", "Layer", 0, 15, 2),
        mean: bool = Param::boolean("mean", "Mean of the heads", true),
        head: usize = Param::int("head", "Head (when not the mean)", 0, 15, 0),
        knock: String = Param::text("knock-out", "Knocked-out heads (kind.layer.head, e.g. cross.2.1)", 200, ""),
    }
}

pub struct TranslationDemo;

impl Demo for TranslationDemo {
    const ID: &'static str = "translation";
    const TITLE: &'static str = "The real thing: a translation Transformer";
    const CAPTION: &'static str = "A trained encoder–decoder Transformer translates your text on this computer. The \
        matrix shows one of its three attentions: cross-attention (rows: tokens written, columns: source tokens), \
        the encoder's self-attention over the source, or the decoder's masked self-attention over the translation.";
    type Params = Params;
    type Output = Result<TranslateQuery, String>;
    const MAIN: &'static [&'static str] = &["text", "attention", "layer", "mean"];

    /// The query the page sends (the translation itself comes from the worker).
    fn compute(p: &Params) -> Result<TranslateQuery, String> {
        query(p)
    }

    fn data(p: &Params) -> Result<serde_json::Value, String> {
        let mut out = serde_json::json!({ "model": p.model.key(), "query": super::to_json(&query(p)?)? });
        out["note"] = "The translation is computed in the browser; the page's Download data adds it.".into();
        Ok(out)
    }

    /// The bundled model's real answer: the worker's translation session on the model's files.
    fn load(p: &Params, read: &mut super::Reader) -> Option<Result<serde_json::Value, String>> {
        let mut run = || {
            let dir = format!("models/{}", p.model.folder());
            let text = |read: &mut super::Reader, f: &str| {
                String::from_utf8(read(&format!("{dir}/{f}"))?).map_err(|e| e.to_string())
            };
            let (config, vocab) = (text(read, "config.json")?, text(read, "vocab.json")?);
            let weights = read(&format!("{dir}/model.safetensors"))?;
            let (src, tgt) = (read(&format!("{dir}/source.spm"))?, read(&format!("{dir}/target.spm"))?);
            let session = crate::session::translate::TranslationSession::load(&config, &weights, (&src, &tgt, &vocab))
                .map_err(|e| e.to_string())?;
            let t = session.translate(&query(p)?).map_err(|e| e.to_string())?;
            super::to_json(&summary(&t, p))
        };
        Some(run())
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<TranslationDemo>();

/// Reads knocked-out heads written `kind.layer.head` (kind `cross`, `encoder` or `decoder`),
/// separated by spaces or commas; an entry that is not one is refused with the reason.
pub fn knock_outs(text: &str) -> Result<Vec<(AttentionKind, usize, usize)>, String> {
    let mut out = Vec::new();
    for entry in text.split([' ', ',']).filter(|e| !e.is_empty()) {
        let bad = || {
            format!("“{entry}” is not a head: write kind.layer.head, the kind cross, encoder or decoder (cross.2.1)")
        };
        let mut parts = entry.split('.');
        let kind = match parts.next() {
            Some("cross") => AttentionKind::Cross,
            Some("encoder") => AttentionKind::Encoder,
            Some("decoder") => AttentionKind::Decoder,
            _ => return Err(bad()),
        };
        let mut num = || parts.next().and_then(|n| n.parse::<usize>().ok()).ok_or_else(bad);
        let (layer, head) = (num()?, num()?);
        if parts.next().is_some() {
            return Err(bad());
        }
        if !out.contains(&(kind, layer, head)) {
            out.push((kind, layer, head));
        }
    }
    Ok(out)
}

/// What the page asks the worker.
pub fn query(p: &Params) -> Result<TranslateQuery, String> {
    let knock_out = knock_outs(&p.knock)?;
    Ok(TranslateQuery { id: 0, text: p.text.clone(), beams: p.beams, max_new: MAX_NEW, knock_out })
}

/// The matrix shown: which attention, layer and head (`None`: the heads' mean), its weights
/// (rows queries, columns keys) and the tokens that label them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shown {
    pub title: String,
    pub layer: usize,
    pub head: Option<usize>,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    pub weights: Vec<Vec<f32>>,
}

/// The layers and heads of `kind` in a translation.
pub fn shape(t: &Translation, kind: Kind) -> (usize, usize) {
    let layers = match kind {
        Kind::Encoder => &t.encoder,
        Kind::Decoder => &t.decoder,
        Kind::Cross => &t.cross,
    };
    (layers.len(), layers.first().map_or(0, |a| a.dim().0))
}

/// The matrix the parameters ask for, its layer and head kept within the model's.
pub fn shown(t: &Translation, p: &Params) -> Option<Shown> {
    let (layers, heads) = shape(t, p.kind);
    let layer = p.layer.min(layers.checked_sub(1)?);
    let head = (!p.mean).then(|| p.head.min(heads.saturating_sub(1)));
    let w = t.weights(p.kind.attention(), layer, head)?;
    let text = |tokens: &[Token]| -> Vec<String> { tokens.iter().map(|t| t.text.clone()).collect() };
    // The decoder reads the start token and what it wrote before: its row i is the pass that wrote
    // target token i, whose query is the token before it.
    let inputs = || {
        let mut v: Vec<String> = vec!["start".into()];
        v.extend(text(&t.target[..t.target.len().saturating_sub(1)]));
        v
    };
    let (rows, cols) = match p.kind {
        Kind::Encoder => (text(&t.source), text(&t.source)),
        Kind::Decoder => (inputs(), inputs()),
        Kind::Cross => (text(&t.target), text(&t.source)),
    };
    let which = head.map_or("mean of the heads".to_string(), |h| format!("head {h}"));
    let title = match p.kind {
        Kind::Cross => format!("cross-attention, layer {layer}, {which} (rows: written, columns: source)"),
        Kind::Encoder => format!("encoder self-attention, layer {layer}, {which} (rows: queries, columns: keys)"),
        Kind::Decoder => {
            format!("decoder self-attention, layer {layer}, {which} (rows: queries, columns: keys; masked)")
        }
    };
    let weights = w.outer_iter().map(|r| r.to_vec()).collect();
    Some(Shown { title, layer, head, rows, cols, weights })
}

/// For each row of a matrix, the column of its largest weight.
pub fn strongest(weights: &[Vec<f32>]) -> Vec<usize> {
    weights
        .iter()
        .map(|r| r.iter().enumerate().fold((0, f32::MIN), |m, (j, &x)| if x > m.1 { (j, x) } else { m }).0)
        .collect()
}

/// What "Download data" and the tests read: the translation, its hypotheses and the matrix shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub text: String,
    pub source: Vec<String>,
    pub target: Vec<String>,
    pub hypotheses: Vec<crate::session::protocol::Hypothesis>,
    pub steps: Vec<crate::session::protocol::BeamStep>,
    pub shown: Option<Shown>,
    /// Row by row, the column of the largest weight of the matrix shown.
    pub strongest: Vec<usize>,
}

pub fn summary(t: &Translation, p: &Params) -> Summary {
    let shown = shown(t, p);
    Summary {
        text: t.text.clone(),
        source: t.source.iter().map(|x| x.text.clone()).collect(),
        target: t.target.iter().map(|x| x.text.clone()).collect(),
        hypotheses: t.hypotheses.clone(),
        steps: t.steps.clone(),
        strongest: shown.as_ref().map_or_else(Vec::new, |s| strongest(&s.weights)),
        shown,
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `translation`: the worker loads the model and translates; the page lists the
    //! translation and beam search's hypotheses and steps, and draws the attention chosen.

    use std::sync::Arc;

    use leptos::prelude::*;

    use super::{query, shape, shown, summary, Kind, Params, Shown, TranslationDemo};
    use crate::demos::Demo;
    use crate::kit::matrix_canvas::{mat_table, Mat, MatrixGrid};
    use crate::kit::worker::{ComputeWorker, Event};
    use crate::kit::DemoCtx;
    use crate::numerics::format::Signed;
    use crate::session::protocol::{BeamStep, Phase, Reply, Request, Translation, TranslatorInfo};

    fn matrix(s: &Shown) -> Mat {
        let rows = s.weights.iter().map(|r| r.iter().map(|&x| f64::from(x)).collect()).collect();
        Mat::new(s.title.clone(), rows, true).labels(&s.rows, &s.cols)
    }

    fn score(x: Option<f32>) -> String {
        x.map_or(String::new(), |s| format!(" ({:.3})", Signed(f64::from(s))))
    }

    /// Beam search's steps as a table: each step's running hypotheses and those finished so far.
    fn steps_table(steps: &[BeamStep]) -> impl IntoView {
        let list = |h: &[crate::session::protocol::Hypothesis]| {
            h.iter().map(|h| format!("{}{}", h.text, score(h.score))).collect::<Vec<_>>().join(" · ")
        };
        let body = steps
            .iter()
            .enumerate()
            .map(|(i, s)| vec![(i + 1).to_string(), list(&s.running), list(&s.finished)])
            .collect();
        crate::kit::number_table(
            "Beam search, step by step (scores: summed log-probability; finished ones divided by their length)".into(),
            vec!["step".into(), "beams kept, best first".into(), "finished".into()],
            body,
        )
    }

    fn info_line(i: &TranslatorInfo) -> String {
        format!(
            "{}: {} encoder and {} decoder layers, {} heads each, {:.1} M parameters, on this computer's CPU.",
            i.name,
            i.encoder_layers,
            i.decoder_layers,
            i.encoder_heads,
            Signed(i.params as f64 / 1e6)
        )
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let params = ctx.params::<Params>();
        let info = RwSignal::new(None::<TranslatorInfo>);
        let status = RwSignal::new("Starting the compute worker…".to_string());
        let result = RwSignal::new(None::<Arc<Translation>>);
        let failed = RwSignal::new(None::<String>);
        // The id of the latest translation asked for: earlier answers are dropped.
        let latest = StoredValue::new(0u64);
        let load = move |w: ComputeWorker| {
            let m = params.with_untracked(|p| p.model);
            info.set(None);
            w.send(Request::LoadTranslator {
                name: m.label().split(" (").next().unwrap_or_default().to_string(),
                base: format!("/models/{}/", m.folder()),
                load: 1,
            });
        };
        let ask = move |w: ComputeWorker| {
            if info.with_untracked(Option::is_none) {
                return;
            }
            match params.with_untracked(query) {
                Ok(q) => {
                    failed.set(None);
                    if let Some(id) = w.send(Request::Translate(q)) {
                        latest.set_value(id);
                    }
                }
                Err(e) => failed.set(Some(e)),
            }
        };
        let worker = ComputeWorker::new(move |w, ev| match ev {
            Event::Ready => load(w),
            Event::Progress(p) => status.set(match p.phase {
                Phase::Parse => "Preparing the model…".into(),
                _ => "Loading the model’s five files…".into(),
            }),
            Event::Reply(Reply::TranslatorLoaded { info: i, .. }) => {
                status.set(info_line(&i));
                info.set(Some(i));
                ask(w);
            }
            Event::Translation(t) if t.id == latest.get_value() => {
                failed.set(None);
                result.set(Some(Arc::new(*t)));
            }
            Event::Reply(Reply::Error { id: None, message, .. }) => {
                status.set(format!("The model did not load: {message}"))
            }
            Event::Reply(Reply::Error { id: Some(id), message, .. }) if id == latest.get_value() => {
                failed.set(Some(message))
            }
            Event::Died(message) => ctx.error.set(Some(message)),
            _ => {}
        });
        worker.start();
        // A new text, beam count or knock-out asks again (the matrix shown changes on the page).
        let asked = Memo::new(move |_| params.with(|p| (p.model, p.text.clone(), p.beams, p.knock.clone())));
        Effect::new(move |prev: Option<super::Model>| {
            let model = asked.with(|a| a.0);
            if prev.is_some_and(|m| m != model) {
                load(worker);
            } else {
                ask(worker);
            }
            model
        });
        // The layer and head sliders follow the model's shape for the attention shown.
        let limits = move || {
            let kind = params.with(|p| p.kind);
            result.with(|r| r.as_ref().map(|t| shape(t, kind))).map_or_else(Vec::new, |(l, h)| {
                vec![("layer", l.saturating_sub(1) as i64), ("head", h.saturating_sub(1) as i64)]
            })
        };
        ctx.limit_ints(TranslationDemo::ID, limits, DemoCtx::model_limit);
        let shown_now = Memo::new(move |_| result.with(|r| r.as_ref().and_then(|t| params.with(|p| shown(t, p)))));
        Effect::new(move |_| {
            if let Some(t) = result.get() {
                ctx.computed.set(params.with(|p| serde_json::to_value(summary(&t, p)).ok()));
            }
        });
        let mats = Signal::derive(move || shown_now.with(|s| s.iter().map(matrix).collect::<Vec<_>>()));
        let answer = move || {
            result.with(|r| {
                r.as_ref().map(|t| {
                    let hyps = (t.hypotheses.len() > 1).then(|| {
                        let items = t
                            .hypotheses
                            .iter()
                            .map(|h| view! { <li><code>{h.text.clone()}</code>{score(h.score)}</li> })
                            .collect_view();
                        view! {
                            <p class="muted">"Finished hypotheses, best first (score: log-probability ÷ length):"</p>
                            <ol class="hypotheses">{items}</ol>
                        }
                    });
                    let steps = (!t.steps.is_empty()).then(|| {
                        let table = steps_table(&t.steps);
                        view! {
                            <details class="beam-steps">
                                <summary>"Beam search, step by step"</summary>
                                {table}
                            </details>
                        }
                    });
                    let source = t.source.iter().map(|x| x.text.clone()).collect::<Vec<_>>().join(" ");
                    view! {
                        <dl class="answers">
                            <dt>"Source tokens"</dt><dd><code>{source}</code></dd>
                            <dt>"Translation"</dt>
                            <dd class="answer translated"><code>{t.text.clone()}</code></dd>
                        </dl>
                        <p class="muted">{format!("Translated in {:.0} ms.", Signed(t.compute_ms))}</p>
                        {hyps}
                        {steps}
                    }
                })
            })
        };
        let kind_note = move || {
            params.with(|p| match p.kind {
                Kind::Cross => "Each row is one written token; its weights over the source add up to 1.",
                Kind::Encoder => "Each source token attends to every source token, before and after it: no mask.",
                Kind::Decoder => {
                    "Row i is the pass that writes token i: its query is the token before, and it attends to the \
                     start token and the tokens written so far, never to a later one (the mask)."
                }
            })
        };
        view! {
            <p class="readout" role="status">{move || status.get()}</p>
            {move || failed.get().map(|e| view! { <p class="notice" role="alert">{e}</p> })}
            <div class="translation" data-loaded=move || info.with(Option::is_some).to_string()
                data-text=move || result.with(|r| r.as_ref().map(|t| t.text.clone()).unwrap_or_default())>
                {answer}
            </div>
            <p class="muted">{kind_note}</p>
            <MatrixGrid ctx=ctx mats=mats min_w=420.0/>
            {move || ctx.show_numbers.get().then(|| shown_now.with(|s| s.as_ref().map(|s| mat_table(&matrix(s)))))}
        }
        .into_any()
    }
}
