//! View of `vision`: the worker loads the model and classifies the picture; the page takes the
//! reader's picture (drawn, dropped, pasted, chosen or taken), lists the prediction, and draws the
//! maps over the picture the model saw.

use std::sync::Arc;

use leptos::prelude::*;

use super::{check_knock_outs, maps, query, sample, summary, Params, Picture, VisionDemo, SAMPLE};
use crate::demos::Demo;
use crate::kit::image_maps::{ImageMaps, Overlay};
use crate::kit::load_status::{progress_line, source_words, status_view, Status};
use crate::kit::picture::{PictureInput, Rgba};
use crate::kit::worker::{ComputeWorker, Event};
use crate::kit::DemoCtx;
use crate::numerics::format::Signed;
use crate::session::protocol::{Prediction, Reply, Request, Source, Vision, VisionInfo};

/// Tests set this localStorage key to "1" to make the model's next GPU run fail on purpose.
const GPU_FAULT_KEY: &str = "attention-live:gpu-fault";

/// What the page says while "your picture" has none yet.
const ASK_FOR_PICTURE: &str = "Draw on the pad, or choose, drop or paste a picture.";

fn info_line(i: &VisionInfo, source: Source) -> String {
    let extra = if i.extra_tokens == 2 { "a class and a distillation token" } else { "a class token" };
    format!(
        "{}{}: {} with {} layers of {} heads, {:.2} M parameters; {} × {} pixels in patches of {} ({} × {} patches, \
         plus {extra}). Runs on {}.",
        i.name,
        source_words(source),
        i.family,
        i.layers,
        i.heads,
        Signed(i.params as f64 / 1e6),
        i.image_size,
        i.image_size,
        i.patch_size,
        i.grid,
        i.grid,
        i.backend
    )
}

/// The five likeliest classes, with bars; beside them, with heads knocked out, the same classes
/// without the knock-outs.
fn prediction_view(v: &Vision) -> impl IntoView {
    let pct = |p: f32| match f64::from(p) * 100.0 {
        x if x < 0.1 => "< 0.1%".to_string(),
        x if x >= 99.5 => format!("{:.2}%", Signed(x)),
        x => format!("{:.1}%", Signed(x)),
    };
    let bar = |p: f32| view! { <span class="prob-bar" style:width=format!("{:.2}rem", 6.0 * p)></span> };
    let rows = v
        .top
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let without = v.unablated.as_ref().and_then(|u| u.get(i)).map(|u| view! { <td>{pct(u.prob)}</td> });
            view! {
                <tr><td>{p.label.clone()}</td><td class="prob">{bar(p.prob)}{pct(p.prob)}</td>{without}</tr>
            }
        })
        .collect_view();
    let knocked = v.unablated.is_some();
    const COUNTS: [&str; 4] = ["two", "three", "four", "five"];
    let caption = match v.top.len() {
        1 => "The model's likeliest class".to_string(),
        n => format!("The model's {} likeliest classes", COUNTS.get(n.saturating_sub(2)).unwrap_or(&"five")),
    };
    view! {
        <div class="prediction-scroll"><table class="prediction">
            <caption>{caption}</caption>
            <thead><tr>
                <th scope="col">"class"</th>
                <th scope="col">{if knocked { "probability, heads knocked out" } else { "probability" }}</th>
                {knocked.then(|| view! { <th scope="col">"without the knock-outs"</th> })}
            </tr></thead>
            <tbody>{rows}</tbody>
        </table></div>
        <p class="muted">{format!("Computed in {:.0} ms on {}.", Signed(v.compute_ms), v.backend)}</p>
        {v.notice.clone().map(|n| view! { <p class="notice" role="status">{n}</p> })}
    }
}

/// A map's values as a table, for "Show numbers" (figure 7's tiles are left out: too many).
fn numbers(m: &super::Map) -> Option<impl IntoView> {
    if !m.picture && m.outline.is_none() {
        return None;
    }
    let rows = m.values.chunks(m.side.max(1)).map(|r| r.iter().map(|&x| f64::from(x)).collect()).collect();
    Some(crate::kit::matrix_canvas::mat_table(&crate::kit::matrix_canvas::Mat::new(m.title.clone(), rows, true)))
}

fn best(v: Option<&Vision>) -> Option<Prediction> {
    v.and_then(|v| v.top.first().cloned())
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let params = ctx.params::<Params>();
    let info = RwSignal::new(None::<VisionInfo>);
    let status = RwSignal::new(Status::Loading("Starting the compute worker…".into(), None));
    let result = RwSignal::new(None::<Arc<Vision>>);
    let failed = RwSignal::new(None::<String>);
    // The reader's picture (none until they give one), and a count that changes with it.
    let yours = StoredValue::new(None::<Rgba>);
    let given = RwSignal::new(0u32);
    let note = RwSignal::new(None::<String>);
    let latest = StoredValue::new(0u64);
    let (busy, again) = (StoredValue::new(false), StoredValue::new(false));
    let loads = StoredValue::new(0u64);
    let loaded_from = StoredValue::new(Source::Network);
    let halted = StoredValue::new(false);
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
        w.send(Request::LoadVision {
            name: m.name().to_string(),
            base,
            cache: !bundled,
            only_cached: !bundled && !fetch,
            load: loads.get_value(),
            backend,
            fault: crate::kit::browser::local_get(GPU_FAULT_KEY).as_deref() == Some("1"),
        });
    };
    // The picture asked about: a drawn one, or the reader's.
    let pixels = move |p: &Params| match p.picture {
        Picture::Yours => yours.get_value().ok_or_else(|| ASK_FOR_PICTURE.to_string()),
        shape => sample(shape)
            .map(|(width, height, rgba)| Rgba { width, height, bytes: Arc::new(rgba), note: None })
            .ok_or_else(|| "no such picture".to_string()),
    };
    let ask = move |w: ComputeWorker| {
        let Some(model) = info.get_untracked() else { return };
        if busy.get_value() {
            return again.set_value(true);
        }
        let asked = params.with_untracked(|p| {
            let px = pixels(p)?;
            let q = query(p, px.width, px.height)?;
            check_knock_outs(&q.knock_out, &model)?;
            Ok::<_, String>((q, px))
        });
        match asked {
            Ok((q, px)) => {
                failed.set(None);
                let buffer = js_sys::Uint8Array::from(&px.bytes[..]).buffer();
                if let Some(id) = w.send_with(Request::Classify(q), Some(buffer.into())) {
                    latest.set_value(id);
                    busy.set_value(true);
                }
            }
            Err(e) => {
                // No picture of the reader's yet: the last answer is not about it.
                if params.with_untracked(|p| p.picture) == Picture::Yours {
                    result.set(None);
                }
                failed.set(Some(e))
            }
        }
    };
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
        Event::Reply(Reply::VisionLoaded { info: i, source, load: l }) if current(l) => {
            loaded_from.set_value(source);
            status.set(Status::Ready(info_line(&i, source)));
            info.set(Some(i));
            ask(w);
        }
        Event::Reply(Reply::NotCached { load: l, .. }) if current(l) => status.set(Status::Waiting),
        Event::Vision(v) if v.id == latest.get_value() => {
            failed.set(None);
            if let (Some(_), Some(mut i)) = (&v.notice, info.get_untracked()) {
                i.backend = "the CPU (after a WebGPU failure)".into();
                status.set(Status::Ready(info_line(&i, loaded_from.get_value())));
                info.set(Some(i));
            }
            result.set(Some(Arc::new(*v)));
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
    let model = Memo::new(move |_| params.with(|p| (p.model, p.model.base(&p.base), p.backend)));
    Effect::new(move |prev: Option<()>| {
        model.with(|_| ());
        if prev.is_some() {
            load(worker, false);
        }
    });
    let asked = Memo::new(move |_| params.with(|p| (p.picture, p.knock.clone())));
    Effect::new(move |_| {
        asked.with(|_| ());
        given.track();
        ask(worker);
    });
    let stop = move |_| {
        halted.set_value(true);
        loads.update_value(|l| *l += 1);
        worker.start();
        status.set(Status::Failed("Stopped. Nothing was kept; choose Download the model to start again.".into()));
    };
    let download = move |_| load(worker, true);
    let limits = move || {
        info.with(|i| {
            i.as_ref().map_or_else(Vec::new, |i| {
                let top = |n: usize| n.saturating_sub(1) as i64;
                vec![("layer", top(i.layers)), ("head", top(i.heads)), ("patch", top(i.grid * i.grid))]
            })
        })
    };
    ctx.limit_ints(VisionDemo::ID, limits, DemoCtx::model_limit);
    // The reader's picture: kept, chosen, and asked about.
    let take = Callback::new(move |r: Result<Rgba, String>| match r {
        Ok(p) => {
            note.set(p.note.clone());
            yours.set_value(Some(p));
            if params.with_untracked(|p| p.picture) == Picture::Yours {
                given.update(|g| *g += 1);
            } else {
                ctx.set_params::<Params>(|p| p.picture = Picture::Yours);
            }
        }
        Err(e) => {
            note.set(None);
            failed.set(Some(e))
        }
    });
    let shown = Memo::new(move |_| {
        result.with(|r| {
            let (Some(v), Some(i)) = (r.as_ref(), info.get()) else { return Vec::new() };
            params.with(|p| maps(v, &i, p))
        })
    });
    Effect::new(move |_| {
        if let (Some(v), Some(i)) = (result.get(), info.get()) {
            ctx.computed.set(params.with(|p| serde_json::to_value(summary(&v, &i, p)).ok()));
        }
    });
    let overlays = Signal::derive(move || {
        shown.with(|m| {
            m.iter()
                .map(|m| Overlay {
                    title: m.title.clone(),
                    side: m.side,
                    values: m.values.clone(),
                    picture: m.picture,
                    outline: m.outline,
                })
                .collect::<Vec<_>>()
        })
    });
    // Copied once per answer, not at every paint of every map.
    let seen = Memo::new(move |_| result.with(|r| r.as_ref().map(|v| Arc::new(v.seen.clone()))));
    // A click on a map (but the tiles of figure 7) picks the patch.
    let pick = Callback::new(move |(i, cell): (usize, usize)| {
        let tiles = shown.with(|m| m.get(i).is_some_and(|m| m.outline.is_none() && !m.picture));
        if !tiles {
            ctx.set_params::<Params>(|p| p.patch = cell);
        }
    });
    let status_view = move || {
        params.with_untracked(|p| {
            let waiting = format!(
                "{} is not in this browser's storage yet. Download it (kept for next time)?",
                p.model.name()
            );
            status_view(&status.get(), p.model.folder().is_none(), waiting, download, stop)
        })
    };
    let answer = move || result.with(|r| r.as_deref().map(prediction_view));
    view! {
        <div class="vision-status" data-status=move || status.with(Status::key)>{status_view}</div>
        <PictureInput pad=SAMPLE as u32 take=take note=note/>
        {move || failed.get().map(|e| view! { <p class="notice" role="alert">{e}</p> })}
        <div class="vision" data-loaded=move || info.with(Option::is_some).to_string()
            data-id=move || result.with(|r| r.as_ref().map_or(0, |v| v.id)).to_string()
            data-compute-ms=move || result.with(|r| r.as_ref().map_or(0.0, |v| v.compute_ms)).to_string()
            data-label=move || result.with(|r| best(r.as_deref()).map(|p| p.label).unwrap_or_default())
            data-prob=move || result.with(|r| best(r.as_deref()).map_or(0.0, |p| p.prob)).to_string()
            data-backend=move || result.with(|r| match r {
                Some(v) if v.backend.starts_with("WebGPU") => "webgpu",
                Some(_) => "cpu",
                None => "",
            })>
            {answer}
        </div>
        <div class="vision-maps" style:display=move || if result.with(Option::is_none) { "none" } else { "" }>
            <ImageMaps ctx=ctx seen=seen maps=overlays pick=pick/>
        </div>
        {move || ctx.show_numbers.get().then(|| shown.with(|m| m.iter().filter_map(numbers).collect_view()))}
    }
    .into_any()
}
