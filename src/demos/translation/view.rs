//! View of `translation`: the worker loads the model and translates; the page lists the
//! translation and beam search's hypotheses and steps, and draws the attention chosen.

use std::sync::Arc;

use leptos::prelude::*;

use super::{
    check_knock_outs, complete, query, shape, shown, summary, switch_featured, Kind, Model, Params, Shown,
    TranslationDemo,
};
use crate::demos::Demo;
use crate::kit::matrix_canvas::{mat_table, Mat, MatrixGrid};
use crate::kit::worker::{ComputeWorker, Event};
use crate::kit::load_status::{progress_line, source_words, status_view, Status};
use crate::kit::DemoCtx;
use crate::numerics::format::Signed;
use crate::session::protocol::{BeamStep, Reply, Request, Source, Translation, TranslatorInfo};

/// Tests set this localStorage key to "1" to make the model's next GPU run fail on purpose.
const GPU_FAULT_KEY: &str = "attention-live:gpu-fault";

fn matrix(s: &Shown) -> Mat {
    let rows = s.weights.iter().map(|r| r.iter().map(|&x| f64::from(x)).collect()).collect();
    Mat::new(s.title.clone(), rows, true).labels(&s.rows, &s.cols)
}

fn score(x: Option<f32>) -> String {
    x.map_or(String::new(), |s| format!(" ({:.4})", Signed(f64::from(s))))
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

fn info_line(i: &TranslatorInfo, source: Source) -> String {
    let from = source_words(source);
    let heads = if i.encoder_heads == i.decoder_heads {
        format!("{} heads each", i.encoder_heads)
    } else {
        format!("{} and {} heads", i.encoder_heads, i.decoder_heads)
    };
    format!(
        "{}{from}: {} encoder and {} decoder layers, {heads}, {:.1} M parameters. Runs on {}.",
        i.name,
        i.encoder_layers,
        i.decoder_layers,
        Signed(i.params as f64 / 1e6),
        i.backend
    )
}

/// The model's label without its parenthesis.
fn model_name(m: Model) -> String {
    m.label().split(" (").next().unwrap_or_default().to_string()
}

/// The line that asks for a download.
fn waiting_line(model: Model) -> String {
    if model == Model::OpusEnDe {
        let name = model_name(model);
        format!("{name} is not in this browser's storage yet. Download it (about 300 MB, kept for next time)?")
    } else {
        "This checkpoint is not in this browser's storage yet. Download it (kept for next time)?".into()
    }
}

/// The translation: the source's tokens, the text, the time, a notice when the length limit cut
/// it, and beam search's hypotheses and steps.
fn answer_view(t: &Translation) -> impl IntoView {
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
    let cut = (!complete(t)).then(|| {
        let line = format!(
            "The translation stopped at {} tokens, the most the demo writes for a text of {} tokens: it is cut short.",
            t.target.len(),
            t.source.len()
        );
        view! { <p class="notice" role="status">{line}</p> }
    });
    let source = t.source.iter().map(|x| x.text.clone()).collect::<Vec<_>>().join(" ");
    view! {
        <dl class="answers">
            <dt>"Source tokens"</dt><dd><code>{source}</code></dd>
            <dt>"Translation"</dt>
            <dd class="answer translated"><code>{t.text.clone()}</code></dd>
        </dl>
        <p class="muted">{timing(t)}</p>
        {t.notice.clone().map(|n| view! { <p class="notice" role="status">{n}</p> })}
        {cut}
        {hyps}
        {steps}
    }
}

/// How long the worker took, and on what: the search, then the pass that captures the attentions.
fn timing(t: &Translation) -> String {
    let rest = t.compute_ms - t.search_ms;
    format!(
        "Translated in {:.0} ms on {} (the search {:.0} ms, then {:.0} ms to capture every attention).",
        Signed(t.compute_ms),
        t.backend,
        Signed(t.search_ms),
        Signed(rest.max(0.0))
    )
}

/// "webgpu" or "cpu": what computed the translation shown (none yet: "").
fn backend_key(t: Option<&Translation>) -> &'static str {
    match t {
        Some(t) if t.backend.starts_with("WebGPU") => "webgpu",
        Some(_) => "cpu",
        None => "",
    }
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let params = ctx.params::<Params>();
    let info = RwSignal::new(None::<TranslatorInfo>);
    let status = RwSignal::new(Status::Loading("Starting the compute worker…".into(), None));
    let result = RwSignal::new(None::<Arc<Translation>>);
    let failed = RwSignal::new(None::<String>);
    // The id of the latest translation asked for (0: none), and the latest load: earlier answers
    // are dropped. One translation at a time: what the reader changes meanwhile is asked for
    // (`again`) once it is back, so that typing never queues stale work.
    let latest = StoredValue::new(0u64);
    let (busy, again) = (StoredValue::new(false), StoredValue::new(false));
    let loads = StoredValue::new(0u64);
    // Where the loaded model came from, for the status line when the backend changes under it.
    let loaded_from = StoredValue::new(Source::Network);
    // The reader stopped a download: the fresh worker waits to be asked again.
    let halted = StoredValue::new(false);
    // Loads the chosen model: a bundled one at once, a download only once the reader asks
    // (`fetch`) unless this browser kept it.
    let load = move |w: ComputeWorker, fetch: bool| {
        halted.set_value(false);
        let (m, base, backend) = params.with_untracked(|p| (p.model, p.model.base(&p.base), p.backend.choice()));
        info.set(None);
        result.set(None);
        latest.set_value(0);
        busy.set_value(false);
        again.set_value(false);
        let base = match base {
            Ok(b) => b,
            Err(e) => return status.set(Status::Failed(e)),
        };
        loads.update_value(|l| *l += 1);
        let bundled = m.folder().is_some();
        status.set(Status::Loading("Looking for the model…".into(), None));
        w.send(Request::LoadTranslator {
            name: model_name(m),
            base,
            cache: !bundled,
            only_cached: !bundled && !fetch,
            load: loads.get_value(),
            backend,
            fault: crate::kit::browser::local_get(GPU_FAULT_KEY).as_deref() == Some("1"),
        });
    };
    let ask = move |w: ComputeWorker| {
        let Some(model) = info.get_untracked() else { return };
        if busy.get_value() {
            return again.set_value(true);
        }
        let q = params.with_untracked(query).and_then(|q| check_knock_outs(&q.knock_out, &model).map(|()| q));
        match q {
            Ok(q) => {
                failed.set(None);
                if let Some(id) = w.send(Request::Translate(q)) {
                    latest.set_value(id);
                    busy.set_value(true);
                }
            }
            Err(e) => failed.set(Some(e)),
        }
    };
    // The latest translation is back: ask for what changed meanwhile.
    let back = move |w: ComputeWorker| {
        busy.set_value(false);
        if again.get_value() {
            again.set_value(false);
            ask(w);
        }
    };
    let current = move |l: u64| l == loads.get_value();
    let worker = ComputeWorker::new(move |w, ev| match ev {
        Event::Ready if !halted.get_value() => load(w, false),
        Event::Progress(p) if current(p.load) => {
            let (line, frac) = progress_line(p.phase, p.loaded, p.total);
            status.set(Status::Loading(line, frac))
        }
        Event::Reply(Reply::TranslatorLoaded { info: i, source, load: l }) if current(l) => {
            loaded_from.set_value(source);
            status.set(Status::Ready(info_line(&i, source)));
            info.set(Some(i));
            ask(w);
        }
        Event::Reply(Reply::NotCached { load: l, .. }) if current(l) => status.set(Status::Waiting),
        Event::Translation(t) if t.id == latest.get_value() => {
            failed.set(None);
            // The GPU failed and the model moved to the CPU: the status line says where it runs now.
            if let (Some(_), Some(mut i)) = (&t.notice, info.get_untracked()) {
                i.backend = "the CPU (after a WebGPU failure)".into();
                status.set(Status::Ready(info_line(&i, loaded_from.get_value())));
                info.set(Some(i));
            }
            result.set(Some(Arc::new(*t)));
            back(w);
        }
        Event::Reply(Reply::Error { id: None, message, load: l }) if current(l) => {
            status.set(Status::Failed(format!("The model did not load: {message}")))
        }
        Event::Reply(Reply::Error { id: Some(id), message, .. }) if id == latest.get_value() => {
            failed.set(Some(message));
            back(w);
        }
        Event::Died(message) => status.set(Status::Failed(message)),
        _ => {}
    });
    worker.start();
    // Another model loads (its own text and layer replace the old one's where the reader kept
    // them); a new text, beam count or knock-out asks again (the matrix shown changes in the page).
    let model = Memo::new(move |_| params.with(|p| (p.model, p.model.base(&p.base), p.backend)));
    Effect::new(move |prev: Option<Model>| {
        let m = model.with(|m| m.0);
        if let Some(from) = prev {
            if from != m {
                ctx.set_params::<Params>(|p| switch_featured(p, from));
            }
            load(worker, false);
        }
        m
    });
    let asked = Memo::new(move |_| params.with(|p| (p.text.clone(), p.beams, p.knock.clone())));
    Effect::new(move |_| {
        // Read, not only tracked: a memo nobody reads is never computed, and never changes.
        asked.with(|_| ());
        ask(worker);
    });
    // Stop: a fresh worker, which forgets the download (it asks the storage again).
    let stop = move |_| {
        halted.set_value(true);
        loads.update_value(|l| *l += 1);
        worker.start();
        status.set(Status::Failed("Stopped. Nothing was kept; choose Download the model to start again.".into()));
    };
    let download = move |_| load(worker, true);
    // The layer and head sliders follow the model's shape for the attention shown.
    let limits = move || {
        let kind = params.with(|p| p.kind);
        result.with(|r| r.as_ref().map(|t| shape(t, kind))).map_or_else(Vec::new, |(l, h)| {
            vec![("layer", l.saturating_sub(1) as i64), ("head", h.saturating_sub(1) as i64)]
        })
    };
    ctx.limit_ints(TranslationDemo::ID, limits, DemoCtx::model_limit);
    let shown_now =
        Memo::new(move |_| result.with(|r| r.as_ref().map_or_else(Vec::new, |t| params.with(|p| shown(t, p)))));
    Effect::new(move |_| {
        if let Some(t) = result.get() {
            ctx.computed.set(params.with(|p| serde_json::to_value(summary(&t, p)).ok()));
        }
    });
    let mats = Signal::derive(move || shown_now.with(|s| s.iter().map(matrix).collect::<Vec<_>>()));
    let status_view = move || {
        params.with_untracked(|p| {
            status_view(&status.get(), p.model.folder().is_none(), waiting_line(p.model), download, stop)
        })
    };
    let answer = move || result.with(|r| r.as_deref().map(answer_view));
    let kind_note = move || {
        params.with(|p| match p.kind {
            Kind::Cross => "Each row is one written token; its weights over the source add up to 1.",
            Kind::Encoder => "Each source token attends to every source token, before and after it: no mask.",
            Kind::Decoder => {
                "Row i is the pass that writes token i: its query is the token before, and it attends to the \
                 start token and the tokens written so far, never to a later one (the mask)."
            }
            Kind::All => {
                "The Transformer's three attentions in one layer: the encoder's over the source (no mask), the \
                 decoder's over what it wrote (masked), and cross-attention from the translation to the source."
            }
        })
    };
    view! {
        <div class="translation-status" data-status=move || status.with(Status::key)>{status_view}</div>
        {move || failed.get().map(|e| view! { <p class="notice" role="alert">{e}</p> })}
        <div class="translation" data-loaded=move || info.with(Option::is_some).to_string()
            data-text=move || result.with(|r| r.as_ref().map(|t| t.text.clone()).unwrap_or_default())
            data-id=move || result.with(|r| r.as_ref().map_or(0, |t| t.id)).to_string()
            data-compute-ms=move || result.with(|r| r.as_ref().map_or(0.0, |t| t.compute_ms)).to_string()
            data-search-ms=move || result.with(|r| r.as_ref().map_or(0.0, |t| t.search_ms)).to_string()
            data-tokens=move || result.with(|r| r.as_ref().map_or(0, |t| t.target.len())).to_string()
            data-source-tokens=move || result.with(|r| r.as_ref().map_or(0, |t| t.source.len())).to_string()
            data-backend=move || result.with(|r| backend_key(r.as_deref()))>
            {answer}
        </div>
        // The plots wait for a translation (a download not asked for yet shows none).
        <div class="translation-plots" style:display=move || if result.with(Option::is_none) { "none" } else { "" }>
            <p class="muted">{kind_note}</p>
            <MatrixGrid ctx=ctx mats=mats min_w=420.0/>
        </div>
        {move || {
        ctx.show_numbers.get().then(|| shown_now.with(|s| s.iter().map(|s| mat_table(&matrix(s))).collect_view()))
    }}
    }
    .into_any()
}
