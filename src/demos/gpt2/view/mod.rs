//! View of `gpt2`: talks to the GPT-2 Web Worker (loading, progress, cancel, local files) and
//! draws its answers: the tokens as chips (`chips`), the model view (`model_view`), the head
//! view (`head_view`), the selected head's heatmap (`long_heat` for long prompts), the
//! next-token distribution, generation, head knock-outs and a second prompt side by side.

use std::sync::Arc;

use js_sys::Reflect;
use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageEvent, Worker};

use super::{
    fit_selection, format_ablate, model_base, next_rows, parse_ablate, query, slider_max, NextRow, CANDIDATES, MODELS,
    SHOWN, SHOWN_COMPARE,
};
use crate::gpt2::protocol::{Analysis, Attention, BackendChoice, Reply, Request};
use crate::kit::browser::{local_get, now_ms};
use crate::kit::matrix_canvas::{Mat, MatrixGrid};
use crate::kit::number_table;
use crate::kit::DemoCtx;
use crate::state::{Notice, Value};

mod chips;
mod head_view;
mod long_heat;
mod model_view;

use chips::{focus_sibling, roving_key, static_chips, token_chips};
use head_view::{draw_head_view, head_colour, HEAD_VIEW_ROW, HEAD_VIEW_TOP};
use long_heat::{draw_long_heat, LABELLED_MAX};
use model_view::draw_model_view;

#[derive(Debug, Clone, PartialEq)]
enum Status {
    Starting,
    Loading {
        name: String,
        phase: String,
        loaded: u64,
        total: Option<u64>,
        rate: Option<f64>,
    },
    /// A downloadable model that is not in the browser's cache: waits for the reader's go.
    NotCached {
        name: String,
        size: Option<u64>,
    },
    /// "From local files" is chosen but no files are picked yet.
    NeedFiles,
    /// "From a URL" is chosen but no URL is given.
    NeedUrl,
    Ready {
        name: String,
        source: String,
        n_layer: usize,
        n_head: usize,
        n_positions: usize,
        params: usize,
    },
    Failed(String),
}

/// What runs the model, as the worker last said: ("webgpu" | "cpu", adapter name or reason).
#[derive(Debug, Clone, PartialEq)]
struct Backend {
    name: String,
    detail: String,
}

/// Tests set this localStorage key to "1" to make the next GPU run fail on purpose.
const GPU_FAULT_KEY: &str = "attention-live:gpu-fault";

/// The worker's latest analysis and its attention weights.
#[derive(Debug, PartialEq)]
pub(super) struct Result_ {
    pub(super) a: Analysis,
    pub(super) w: Attention,
}

impl Result_ {
    pub(super) fn t(&self) -> usize {
        self.a.tokens.len()
    }
    /// Weight from query i to key j in (layer, head), if that layer was sent.
    pub(super) fn weight(&self, layer: usize, head: usize, i: usize, j: usize) -> Option<f32> {
        self.w.weight(layer, head, i, j)
    }
    /// The weights of (layer, head) as a matrix: the full (T, T) one when that layer was sent,
    /// else the worker's max-pooled thumbnail of it (long prompts: thumbnails follow the full
    /// layers in the buffer).
    pub(super) fn head_matrix(&self, layer: usize, head: usize) -> Option<ndarray::ArrayView2<'_, f32>> {
        self.w.head_matrix(layer, head)
    }
}
fn model_label(name: &str) -> &'static str {
    MODELS.iter().find(|m| m.0 == name).map_or("model", |m| m.1)
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn phase_label(phase: &str) -> &'static str {
    match phase {
        "download" => "Downloading",
        "cache" => "Reading the copy stored in this browser",
        "verify" => "Checking the file's SHA-256",
        "gpu" => "Uploading to the GPU and testing it against the CPU:",
        _ => "Preparing the model",
    }
}

/// Sends a request to a compute worker (`worker::start`): JSON, plus `data` transferred.
pub(crate) fn post(worker: &Worker, req: &Request, data: Option<&JsValue>) {
    if let Ok(json) = serde_json::to_string(req) {
        let msg = js_sys::Object::new();
        let _ = Reflect::set(&msg, &"json".into(), &json.into());
        match data {
            Some(d) => {
                let _ = Reflect::set(&msg, &"data".into(), d);
                let _ = worker.post_message_with_transfer(&msg, &js_sys::Array::of1(d));
            }
            None => {
                let _ = worker.post_message(&msg);
            }
        }
    }
}

/// Reads a picked or dropped config.json + model.safetensors pair: (config text, model bytes).
async fn read_files(files: web_sys::FileList) -> Result<(String, JsValue), String> {
    let all: Vec<web_sys::File> = (0..files.length()).filter_map(|i| files.get(i)).collect();
    let config = all
        .iter()
        .find(|f| f.name().ends_with(".json"))
        .ok_or("pick both config.json and model.safetensors (no .json file was given)")?;
    let model = all
        .iter()
        .find(|f| f.name().ends_with(".safetensors"))
        .ok_or("pick both config.json and model.safetensors (no .safetensors file was given)")?;
    let text =
        JsFuture::from(config.text()).await.map_err(|_| "could not read config.json")?.as_string().unwrap_or_default();
    let bytes = JsFuture::from(model.array_buffer()).await.map_err(|_| "could not read the .safetensors file")?;
    Ok((text, bytes))
}
pub fn view(ctx: DemoCtx) -> AnyView {
    let values = ctx.values;
    let status = RwSignal::new(Status::Starting);
    let result = RwSignal::new(None::<Arc<Result_>>);
    let generating = RwSignal::new(None::<String>); // the prompt generation started from
    let last_id = StoredValue::new(0u64);
    // The comparison prompt's analyses use ids from 2⁴⁰ up, so replies can be told apart.
    let last_id_b = StoredValue::new(1u64 << 40);
    let result_b = RwSignal::new(None::<Arc<Result_>>);
    let worker_ready = RwSignal::new(false);
    // When the last generation started and how long it took (for the benchmark).
    let gen_start = StoredValue::new(0.0f64);
    let gen_ms = RwSignal::new(0.0f64);
    let phase_start = StoredValue::new((String::new(), 0.0f64));
    let worker: StoredValue<Option<Worker>, LocalStorage> = StoredValue::new_local(None);
    let backend = RwSignal::new(None::<Backend>);
    let backend_notice = RwSignal::new(None::<String>);
    // A layer or head moved to fit a newly loaded model: (what the note says, where it moved to).
    let moved = RwSignal::new(None::<(String, (usize, usize))>);

    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let data = ev.data();
        let json = Reflect::get(&data, &"json".into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
        let reply = match Reply::decode(&json) {
            Ok(r) => r,
            Err(e) => return status.set(Status::Failed(e)),
        };
        match reply {
            Reply::Ready => worker_ready.set(true),
            Reply::Progress { phase, loaded, total } => {
                let phase = phase.as_str().to_string();
                let now = now_ms();
                if phase_start.with_value(|p| p.0 != phase) {
                    phase_start.set_value((phase.clone(), now));
                }
                let secs = (now - phase_start.with_value(|p| p.1)) / 1e3;
                let rate = (secs > 0.2).then(|| loaded as f64 / secs);
                status.update(|s| {
                    let name = match s {
                        Status::Loading { name, .. } => name.clone(),
                        _ => values.with_untracked(|v| v.text("model").to_string()),
                    };
                    *s = Status::Loading { name, phase, loaded, total, rate };
                })
            }
            Reply::NotCached { name, size } => status.set(Status::NotCached { name, size }),
            Reply::Loaded { name, source, n_layer, n_head, n_positions, params, .. } => {
                let source = source.as_str().to_string();
                status.set(Status::Ready { name, source, n_layer, n_head, n_positions, params })
            }
            Reply::Analysis(a) => {
                let target = if a.id == last_id.get_value() {
                    result
                } else if a.id == last_id_b.get_value() {
                    result_b
                } else {
                    return; // a stale answer
                };
                let w = Reflect::get(&data, &"data".into())
                    .ok()
                    .and_then(|d| d.dyn_into::<js_sys::Float32Array>().ok())
                    .map(|d| d.to_vec())
                    .unwrap_or_default();
                match Attention::decode(a.attention.clone(), w) {
                    Ok(w) => target.set(Some(Arc::new(Result_ { a, w }))),
                    Err(e) => ctx.error.set(Some(e)),
                }
            }
            Reply::Generated { text, done, .. } => {
                if let Some(base) = generating.get_untracked() {
                    values.update(|v| v.set("prompt", Value::Text(format!("{base}{text}"))));
                    if done {
                        gen_ms.set(now_ms() - gen_start.get_value());
                        generating.set(None);
                    }
                }
            }
            Reply::Backend { backend: name, detail, notice } => {
                backend.set(Some(Backend { name: name.as_str().to_string(), detail }));
                if notice.is_some() {
                    backend_notice.set(notice);
                }
            }
            Reply::AttentionBench { .. } | Reply::HeadQkv(_) => {} // asked only by the efficient chapter's own workers
            Reply::Stopped { .. } => {
                gen_ms.set(now_ms() - gen_start.get_value());
                generating.set(None);
            }
            Reply::Error { id: None, message } | Reply::Crashed { message } => status.set(Status::Failed(message)),
            Reply::Error { message, .. } => {
                generating.set(None);
                ctx.error.set(Some(message));
            }
        }
    });
    let handler = StoredValue::new_local(on_message.as_ref().unchecked_ref::<js_sys::Function>().clone());
    let keep_alive = StoredValue::new_local(Some(on_message));
    // (Re)starts the worker; a restart is how a download is cancelled.
    let spawn = move || {
        worker.with_value(|w| {
            if let Some(w) = w {
                w.terminate()
            }
        });
        worker_ready.set(false);
        match Worker::new("/gpt2-worker_loader.js") {
            Ok(w) => {
                handler.with_value(|h| w.set_onmessage(Some(h)));
                worker.set_value(Some(w));
            }
            Err(_) => status.set(Status::Failed("this browser could not start a Web Worker".into())),
        }
    };
    spawn();
    on_cleanup(move || {
        worker.with_value(|w| {
            if let Some(w) = w {
                w.terminate()
            }
        });
        keep_alive.set_value(None);
    });
    let send = move |req: Request| {
        worker.with_value(|w| {
            if let Some(w) = w {
                post(w, &req, None)
            }
        })
    };

    // Load the chosen model (again when the choice or its URL changes).
    let source =
        Memo::new(move |_| values.with(|v| (v.text("model").to_string(), model_base(v.text("model"), v.text("base")))));
    let start_load = move |only_cached: bool| {
        let (name, base) = source.get_untracked();
        result.set(None);
        moved.set(None);
        match (name.as_str(), base) {
            ("file", _) => {
                if !matches!(status.get_untracked(), Status::Loading { ref name, .. } | Status::Ready { ref name, .. } if name == "file")
                {
                    status.set(Status::NeedFiles);
                }
            }
            (_, None) => status.set(Status::NeedUrl),
            (n, Some(base)) => {
                let remote = n == "gpt2" || n == "url";
                let expect = (n == "gpt2").then(crate::gpt2::manifest::gpt2_small);
                status.set(Status::Loading {
                    name: name.clone(),
                    phase: "download".into(),
                    loaded: 0,
                    total: None,
                    rate: None,
                });
                send(Request::Load { name, base, expect, cache: remote, only_cached: remote && only_cached });
            }
        }
    };
    // The backend choice goes to the worker first (it applies it to every model it loads),
    // then again whenever the reader changes it.
    let choice = Memo::new(move |_| values.with(|v| BackendChoice::parse(v.text("backend")).unwrap_or_default()));
    Effect::new(move |_| {
        let c = choice.get();
        if worker_ready.get() {
            backend.set(None);
            backend_notice.set(None);
            let fault = local_get(GPU_FAULT_KEY).as_deref() == Some("1");
            send(Request::Backend { choice: c, fault });
        }
    });
    Effect::new(move |_| {
        source.track();
        if worker_ready.get() {
            start_load(true);
        }
    });
    let on_download = move |_| start_load(false);
    let on_cancel = move |_| {
        spawn();
        status.set(Status::Failed("The download was cancelled.".into()));
    };
    let load_files = move |files: Option<web_sys::FileList>| {
        let Some(files) = files else { return };
        leptos::task::spawn_local(async move {
            match read_files(files).await {
                Ok((config, bytes)) => {
                    status.set(Status::Loading {
                        name: "file".into(),
                        phase: "parse".into(),
                        loaded: 0,
                        total: None,
                        rate: None,
                    });
                    values.update(|v| v.set("model", Value::Choice("file".into())));
                    worker.with_value(|w| {
                        if let Some(w) = w {
                            post(w, &Request::LoadBytes { name: "file".into(), config }, Some(&bytes))
                        }
                    });
                }
                Err(e) => status.set(Status::Failed(e)),
            }
        });
    };
    let on_pick = move |ev: leptos::ev::Event| {
        let input: Option<web_sys::HtmlInputElement> = ev.target().and_then(|t| t.dyn_into().ok());
        load_files(input.and_then(|i| i.files()));
    };
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        load_files(ev.data_transfer().and_then(|d| d.files()));
    };

    // Ask for an analysis whenever the query changes and a model is ready (and for the
    // comparison prompt, with the same settings, when there is one).
    let q = Memo::new(move |_| values.with(|v| query(v, 0)));
    let compare = Memo::new(move |_| values.with(|v| v.text("compare").to_string()));
    // Analyses wait until the worker says which backend runs them, and run again when that
    // changes (the answers are the same; the compute time is not).
    let backend_name = Memo::new(move |_| backend.with(|b| b.as_ref().map(|b| b.name.clone())));
    Effect::new(move |_| {
        // While tokens stream in, the prompt changes with each one; analysing every step would
        // put a whole forward pass between tokens, so the analysis waits for the end.
        let ready = matches!(status.get(), Status::Ready { .. })
            && generating.with(Option::is_none)
            && backend_name.with(Option::is_some);
        let mut q = q.get();
        if ready {
            let id = last_id.get_value() + 1;
            last_id.set_value(id);
            q.id = id;
            send(Request::Analyze(q));
        }
    });
    Effect::new(move |_| {
        let ready = matches!(status.get(), Status::Ready { .. })
            && generating.with(Option::is_none)
            && backend_name.with(Option::is_some);
        let mut q = q.get();
        let b = compare.get();
        if !ready || b.trim().is_empty() {
            return result_b.set(None);
        }
        let id = last_id_b.get_value() + 1;
        last_id_b.set_value(id);
        q.id = id;
        q.prompt = b;
        send(Request::Analyze(q));
    });

    // Layer, head and token as the loaded model allows (a link may ask for more).
    let dims = move || match status.get() {
        Status::Ready { n_layer, n_head, .. } => Some((n_layer, n_head)),
        _ => None,
    };
    let sel = Memo::new(move |_| {
        let (nl, nh) = dims()?;
        let t = result.with(|r| r.as_ref().map(|r| r.t()))?;
        values.with(|v| {
            Some((
                (v.int("layer").max(0) as usize).min(nl - 1),
                (v.int("head").max(0) as usize).min(nh - 1),
                (v.int("token").max(0) as usize).min(t - 1),
            ))
        })
    });
    // The layer, head and query-token sliders end at the loaded model's last layer and head and
    // the prompt's last token; a selection beyond them moves to the last one. A value the link
    // asked for gets the frame's notice; a layer or head moved by a model switch, a note here; a
    // query token moved because the prompt got shorter, neither (the slider shows it).
    let link_keys = StoredValue::new(link_selection_keys());
    let wanted = Memo::new(move |_| values.with(|v| (v.int("layer"), v.int("head"), v.int("token"))));
    Effect::new(move |_| {
        let (l, h, tok) = wanted.get();
        let Some((nl, nh, t)) = result.with(|r| r.as_ref().map(|r| (r.a.n_layer, r.a.n_head, r.t()))) else { return };
        let max = slider_max(nl, nh, t).to_vec();
        if ctx.int_max.with_untracked(|m| *m != max) {
            ctx.int_max.set(max);
        }
        let fit = fit_selection(l, h, tok, nl, nh, t);
        let from_link = std::mem::take(&mut *link_keys.write_value());
        if fit.moved.is_empty() {
            return;
        }
        let mut notes = Vec::new();
        let mut switched = Vec::new();
        for m in &fit.moved {
            if from_link.contains(&m.key) {
                let reason = format!("{}; showing {} {}", m.why, m.key, m.now);
                notes.push(Notice { key: format!("gpt2.{}", m.key), raw: m.wanted.to_string(), reason });
            } else if m.key != "token" {
                switched.push(format!("{} {} (was {})", m.key, m.now, m.wanted));
            }
        }
        if !notes.is_empty() {
            ctx.notices.update(|n| n.extend(notes));
        }
        if !switched.is_empty() {
            moved
                .set(Some((format!("This model is smaller: showing {}.", switched.join(", ")), (fit.layer, fit.head))));
        }
        values.update(|v| {
            v.set("layer", Value::Int(fit.layer as i64));
            v.set("head", Value::Int(fit.head as i64));
            v.set("token", Value::Int(fit.token as i64));
        });
    });
    let clamp_note = move || {
        let (l, h, _) = sel.get()?;
        moved.with(|m| {
            m.as_ref()
                .filter(|m| m.1 == (l, h))
                .map(|m| view! { <p class="notice moved-note" role="status">{m.0.clone()}</p> })
        })
    };

    // Publish the outputs for "Download data".
    Effect::new(move |_| {
        let out = result.with(|r| {
            r.as_ref().map(|r| {
                let (l, h, _) = sel.get_untracked().unwrap_or((0, 0, 0));
                let t = r.t();
                let heat: Vec<Vec<f32>> =
                    (0..t).map(|i| (0..t).map(|j| r.weight(l, h, i, j).unwrap_or(f32::NAN)).collect()).collect();
                serde_json::json!({ "analysis": r.a, "layer": l, "head": h, "attention": heat })
            })
        });
        ctx.computed.set(out);
    });

    let status_line = move || {
        match status.get() {
        Status::Starting => view! { <p class="muted">"Starting the model worker…"</p> }.into_any(),
        Status::Loading { name, phase, loaded, total, rate } => {
            let pct = total.filter(|_| !matches!(phase.as_str(), "parse" | "verify" | "gpu")).map(|t| (100.0 * loaded as f64 / t.max(1) as f64).round());
            let detail = match (phase.as_str(), total) {
                ("parse" | "verify" | "gpu", _) => String::new(),
                (_, Some(t)) => format!(": {} of {} ({:.0}%)", mb(loaded), mb(t), 100.0 * loaded as f64 / t.max(1) as f64),
                _ => format!(": {}", mb(loaded)),
            };
            let speed = rate.filter(|_| phase == "download").map(|r| format!(", {}/s", mb(r as u64))).unwrap_or_default();
            view! {
                <div class="model-status loading" role="status">
                    <label>{format!("{} {}{detail}{speed}", phase_label(&phase), model_label(&name))}
                        <progress max="100" value=pct.map(|p| p.to_string())></progress>
                    </label>
                    {(phase == "download").then(|| view! { <button type="button" class="cancel" on:click=on_cancel>"Cancel"</button> })}
                </div>
            }
            .into_any()
        }
        Status::NotCached { name, size } => {
            let url = source.get().1.unwrap_or_default();
            view! {
                <div class="model-status not-cached">
                    <p>{format!("{} is not stored in this browser yet. It will be downloaded from {url}{}, checked, and kept in this browser's storage so the next visit needs no network.", model_label(&name), size.map(|s| format!(" ({})", mb(s))).unwrap_or_default())}</p>
                    <button type="button" class="download-model" on:click=on_download>{format!("Download{}", size.map(|s| format!(" {}", mb(s))).unwrap_or_default())}</button>
                </div>
            }
            .into_any()
        }
        Status::NeedFiles => view! { <p class="model-status">"Pick or drop a config.json and a model.safetensors in the Hugging Face GPT-2 layout (below). Local files stay on this computer, and a link cannot carry them."</p> }.into_any(),
        Status::NeedUrl => view! { <p class="model-status">"Enter the URL of a folder that holds config.json and model.safetensors in the Hugging Face GPT-2 layout (the server must allow cross-origin reads)."</p> }.into_any(),
        Status::Ready { name, source, n_layer, n_head, n_positions, params } => {
            let from = match source.as_str() {
                "cache" => " Loaded from this browser's storage.",
                "file" => " Loaded from local files.",
                "network-stored" => " A copy is kept in this browser for the next visit.",
                "network-unstored" => " This browser did not allow keeping a copy (storage quota or private browsing): the next visit will download it again.",
                _ => "",
            };
            view! {
                <p class="model-status ready">{format!("{}: {n_layer} layers × {n_head} heads, {:.2} M parameters, window {n_positions} tokens, in a Web Worker on this computer.{from}", model_label(&name), params as f64 / 1e6)}</p>
            }
            .into_any()
        }
        Status::Failed(e) => view! { <div class="notice error" role="alert">{format!("The model could not be loaded: {e}")}</div> }.into_any(),
    }
    };

    let backend_line = move || {
        let ready = matches!(status.get(), Status::Ready { .. });
        let text = match backend.get() {
            _ if !ready => return None,
            None => "Running on: choosing a backend…".to_string(),
            Some(b) if b.name == "webgpu" => format!("Running on: WebGPU ({})", b.detail),
            Some(b) => format!("Running on: CPU ({})", b.detail),
        };
        Some(view! { <p class="backend-status" role="status">{text}</p> })
    };
    let fallback_notice = move || {
        backend_notice.get().map(|n| view! { <p class="notice backend-notice" role="alert">{format!("{n}.")}</p> })
    };

    let dropped = move || {
        result.with(|r| r.as_ref().filter(|r| r.a.dropped > 0).map(|r| view! {
            <p class="notice" role="status">{format!("The prompt is longer than the model's window: its first {} tokens were cut, and the {} shown are what the model sees.", r.a.dropped, r.t())}</p>
        }))
    };

    let bad_ablate = move || {
        let (pairs, bad) = values.with(|v| parse_ablate(v.text("ablate")));
        let (nl, nh) = dims().unwrap_or((usize::MAX, usize::MAX));
        let outside: Vec<String> =
            pairs.iter().filter(|(l, h)| *l >= nl || *h >= nh).map(|(l, h)| format!("{l}.{h}")).collect();
        let mut msg = Vec::new();
        if !bad.is_empty() {
            msg.push(format!("ignored {} (write heads as layer.head, e.g. 2.3)", bad.join(", ")));
        }
        if !outside.is_empty() {
            msg.push(format!("this model has no head {}", outside.join(", ")));
        }
        (!msg.is_empty())
            .then(|| view! { <p class="notice" role="status">{format!("Knock-outs: {}.", msg.join("; "))}</p> })
    };

    // Rebuilt only for a new analysis: a new selection restyles the same buttons.
    let chips = move || result.get().map(|r| token_chips(r, sel, values));

    // Two prompts side by side, same layer, head and query position.
    let comparison = move || {
        let (l, h, tok) = sel.get()?;
        let (a, b) = (result.get()?, result_b.get()?);
        let side = move |title: &'static str, r: Arc<Result_>| {
            let t = tok.min(r.t() - 1);
            let rows = next_rows(&r.a.next, r.a.baseline.as_deref(), CANDIDATES, SHOWN_COMPARE);
            view! {
                <div class="compare-side">
                    <h5>{title}</h5>
                    <div class="chips">{static_chips(&r, l, h, t)}</div>
                    {next_chart(&rows, true)}
                </div>
            }
        };
        Some(view! {
            <div class="compare">
                <h4>{format!("Side by side: layer {l}, head {h}, query position {tok}")}</h4>
                <div class="compare-grid">{side("First prompt", a)}{side("Second prompt", b)}</div>
                <p class="muted">"Where a head looks is not why the model predicts what it does, and any association it shows was learned from its training text."</p>
            </div>
        })
    };

    let heat = Signal::derive(move || {
        let Some((l, h, _)) = sel.get() else { return Vec::new() };
        result.with(|r| {
            let Some(r) = r.as_ref() else { return Vec::new() };
            let t = r.t();
            if t > LABELLED_MAX || r.weight(l, h, 0, 0).is_none() {
                return Vec::new();
            }
            let labels: Vec<String> = r.a.tokens.iter().map(|t| t.text.replace(' ', "·")).collect();
            let rows = (0..t).map(|i| (0..t).map(|j| r.weight(l, h, i, j).unwrap_or(0.0) as f64).collect()).collect();
            vec![Mat::new(format!("layer {l}, head {h}: rows = queries, columns = keys"), rows, true)
                .labels(&labels, &labels)]
        })
    });

    // Long prompts: one image with position axes instead of a labelled grid.
    let long_heat = NodeRef::<Canvas>::new();
    ctx.paint(move |pal| {
        let c = long_heat.get()?;
        let (l, h, _) = sel.get()?;
        Some(result.with(|r| match r.as_ref().filter(|r| r.t() > LABELLED_MAX) {
            Some(r) => draw_long_heat(&c, pal, r, l, h),
            None => Ok(()),
        }))
    });
    let is_long = move || result.with(|r| r.as_ref().is_some_and(|r| r.t() > LABELLED_MAX));

    // The head view: lines from the query token to every token it attends to, one colour per
    // head of the selected layer; hovering a head's key focuses it.
    let focus = RwSignal::new(None::<usize>);
    let head_view = NodeRef::<Canvas>::new();
    ctx.paint(move |pal| {
        let c = head_view.get()?;
        let (l, _, tok) = sel.get()?;
        let f = focus.get();
        Some(result.with(|r| match r.as_ref().filter(|r| r.t() <= LABELLED_MAX) {
            Some(r) => draw_head_view(&c, pal, r, l, tok, f),
            None => Ok(()),
        }))
    });
    let on_head_view_click = move |ev: web_sys::MouseEvent| {
        let t = result.with_untracked(|r| r.as_ref().map_or(0, |r| r.t()));
        let j = ((ev.offset_y() as f64 - HEAD_VIEW_TOP) / HEAD_VIEW_ROW).floor();
        if j >= 0.0 && (j as usize) < t {
            values.update(|v| v.set("token", Value::Int(j as i64)));
        }
    };
    // One key per head of the layer: a roving-tabindex row like the chips (←/→ select a head).
    let n_head = Memo::new(move |_| result.with(|r| r.as_ref().map_or(0, |r| r.a.n_head)));
    let head_keys = move || {
        let n = n_head.get();
        let chosen = move || sel.get().map(|s| s.1);
        let set = move |h: usize| values.update(|v| v.set("head", Value::Int(h as i64)));
        (0..n)
            .map(|h| {
                let [r, g, b] = head_colour(h);
                view! {
                    <button type="button" class="head-key" class:focused=move || focus.get() == Some(h)
                        class:selected=move || chosen() == Some(h) aria-pressed=move || (chosen() == Some(h)).to_string()
                        tabindex=move || if chosen().unwrap_or(0) == h { "0" } else { "-1" }
                        on:mouseenter=move |_| focus.set(Some(h)) on:mouseleave=move |_| focus.set(None)
                        on:focus=move |_| focus.set(Some(h)) on:blur=move |_| focus.set(None)
                        on:keydown=move |ev| if let Some(to) = roving_key(&ev, h, n) {
                            set(to);
                            focus_sibling(&ev, h, to);
                        }
                        on:click=move |_| set(h)>
                        <span class="swatch" style=format!("background: rgb({r}, {g}, {b})")></span>{format!("H{h}")}
                    </button>
                }
            })
            .collect_view()
    };

    // The model view: every layer × head as a thumbnail.
    let grid = NodeRef::<Canvas>::new();
    let grid_layout = StoredValue::new((0.0f64, 0.0f64, 0.0f64, 0usize, 0usize)); // (x0, y0, cell, L, H) in CSS px
    ctx.paint(move |pal| {
        let c = grid.get()?;
        let (l_sel, h_sel, _) = sel.get().unwrap_or((usize::MAX, usize::MAX, 0));
        let ablated = values.with(|v| parse_ablate(v.text("ablate")).0);
        Some(result.with(|r| match r {
            Some(r) => draw_model_view(&c, pal, r, (l_sel, h_sel), &ablated, grid_layout),
            None => Ok(()),
        }))
    });
    let on_grid_click = move |ev: web_sys::MouseEvent| {
        let (x0, y0, cell, nl, nh) = grid_layout.get_value();
        if cell <= 0.0 {
            return;
        }
        let (x, y) = (ev.offset_x() as f64 - x0, ev.offset_y() as f64 - y0);
        if x < 0.0 || y < 0.0 {
            return;
        }
        let (h, l) = ((x / cell) as usize, (y / cell) as usize);
        if l < nl && h < nh {
            values.update(|v| {
                v.set("layer", Value::Int(l as i64));
                v.set("head", Value::Int(h as i64));
            });
        }
    };

    let toggle_ablate = move |_| {
        let Some((l, h, _)) = sel.get_untracked() else { return };
        values.update(|v| {
            let mut pairs = parse_ablate(v.text("ablate")).0;
            if let Some(i) = pairs.iter().position(|&p| p == (l, h)) {
                pairs.remove(i);
            } else {
                pairs.push((l, h));
            }
            v.set("ablate", Value::Text(format_ablate(&pairs)));
        });
    };
    let is_ablated =
        move || sel.get().is_some_and(|(l, h, _)| values.with(|v| parse_ablate(v.text("ablate")).0.contains(&(l, h))));

    // The next-token distribution as labelled bars (HTML: long token texts stay readable); with
    // knock-outs, each token's intact and knocked-out probabilities side by side.
    let next_list = move || {
        result.with(|r| {
            let r = r.as_ref()?;
            Some(next_chart(&next_rows(&r.a.next, r.a.baseline.as_deref(), CANDIDATES, SHOWN), false))
        })
    };

    let on_generate = move |_| {
        if generating.get_untracked().is_some() || !matches!(status.get_untracked(), Status::Ready { .. }) {
            return;
        }
        let q = values.with_untracked(|v| query(v, 0));
        generating.set(Some(q.prompt.clone()));
        gen_start.set_value(now_ms());
        send(Request::Generate { query: q, steps: 20 });
    };

    let numbers = move || {
        ctx.show_numbers.get().then(|| {
            result.with(|r| {
                r.as_ref().map(|r| {
                    let shown = next_rows(&r.a.next, r.a.baseline.as_deref(), CANDIDATES, SHOWN);
                    let knocked = shown.iter().any(|x| x.knocked.is_some());
                    let exact = |p: super::Prob| match p {
                        super::Prob::Exact(p) => format!("{p:.4}"),
                        super::Prob::Below(p) => format!("<{p:.4}"),
                    };
                    let rows = shown
                        .iter()
                        .map(|x| {
                            let mut row = vec![format!("{:?}", x.text), x.id.to_string(), exact(x.intact)];
                            row.extend(x.knocked.map(exact));
                            row
                        })
                        .collect();
                    let mut head = vec![
                        "token".to_string(),
                        "id".into(),
                        if knocked { "intact".into() } else { "probability".into() },
                    ];
                    if knocked {
                        head.push("knocked out".into());
                    }
                    number_table("Next-token candidates".into(), head, rows)
                })
            })
        })
    };

    view! {
        <div class="gpt2" data-compute-ms=move || result.with(|r| r.as_ref().map_or(0.0, |r| r.a.compute_ms)).to_string()
            data-generate-ms=move || gen_ms.get().to_string() data-backend=move || backend.get().map_or("pending".to_string(), |b| b.name) on:dragover=move |ev: web_sys::DragEvent| ev.prevent_default() on:drop=on_drop data-analysis=move || result.with(|r| r.as_ref().map_or(0, |r| r.a.id)).to_string()
            data-status=move || match status.get() { Status::Starting => "starting", Status::Loading { .. } => "loading", Status::Ready { .. } => "ready", Status::Failed(_) => "failed", Status::NotCached { .. } => "not-cached", Status::NeedFiles | Status::NeedUrl => "waiting" }>
            {status_line}
            {backend_line}
            {fallback_notice}
            <label class="file-pick">"Load a GPT-2 checkpoint from local files: "
                <input type="file" multiple accept=".json,.safetensors" on:change=on_pick/>
                <span class="muted">" (or drop config.json and model.safetensors here)"</span>
            </label>
            {dropped}
            {clamp_note}
            {bad_ablate}
            <div class="chips" role="toolbar" aria-label="Tokens: choose one to see where it looks">{chips}</div>
            <p class="muted">"Click a token (or use the arrow keys) to make it the query: chips are tinted by how much it attends to each earlier token in the selected head."</p>
            <div class="gpt2-panels">
                <div class="gpt2-panel">
                    <h4>"Model view"</h4>
                    <canvas node_ref=grid class="plot model-view" role="img" aria-label="Attention of every layer and head; click one to select it" on:click=on_grid_click></canvas>
                    <div class="row-actions">
                        <button type="button" class="knock-out" on:click=toggle_ablate disabled=move || sel.get().is_none()>
                            {move || if is_ablated() { "Restore this head" } else { "Knock out this head" }}
                        </button>
                        <button type="button" class="clear-knock-outs" on:click=move |_| values.update(|v| v.set("ablate", Value::Text(String::new())))
                            disabled=move || values.with(|v| v.text("ablate").trim().is_empty())>"Restore all"</button>
                    </div>
                </div>
                <div class="gpt2-panel" class:hidden=is_long>
                    <h4>{move || sel.get().map(|(l, _, _)| format!("Head view: layer {l}")).unwrap_or_default()}</h4>
                    <div class="head-keys" role="toolbar" aria-label="Heads of this layer: hover to focus, click to select">{head_keys}</div>
                    <canvas node_ref=head_view class="plot head-view" role="img" on:click=on_head_view_click
                        aria-label="Lines from the query token on the left to the tokens it attends to on the right, one colour per head"></canvas>
                </div>
                // With knock-outs the chart has two bars a token: it takes the whole row.
                <div class="gpt2-panel" class:wide=move || result.with(|r| r.as_ref().is_some_and(|r| r.a.baseline.is_some()))>
                    <h4>"Next token"</h4>
                    {next_list}
                    <div class="row-actions">
                        <button type="button" class="generate" on:click=on_generate
                            disabled=move || generating.get().is_some() || !matches!(status.get(), Status::Ready { .. })>
                            {move || if generating.get().is_some() { "Generating…" } else { "Generate 20 tokens" }}
                        </button>
                        {move || generating.get().is_some().then(|| view! {
                            <button type="button" class="stop" on:click=move |_| send(Request::Stop)>"Stop"</button>
                        })}
                    </div>
                </div>
            </div>
            {comparison}
            <div class:hidden=is_long><MatrixGrid ctx=ctx mats=heat min_w=320.0/></div>
            <canvas node_ref=long_heat class="plot long-heat" class:hidden=move || !is_long() role="img"
                aria-label=move || sel.get().map(|(l, h, _)| format!("Attention of layer {l}, head {h}: query position against key position")).unwrap_or_default()></canvas>
            {numbers}
        </div>
    }
    .into_any()
}

/// The link's own layer, head and query-token keys (`gpt2.layer` …): a value from the link that
/// does not fit the loaded model or prompt gets the frame's notice.
fn link_selection_keys() -> Vec<&'static str> {
    let search = web_sys::window().and_then(|w| w.location().search().ok()).unwrap_or_default();
    let pairs = crate::state::query::parse_query(&search);
    ["layer", "head", "token"]
        .into_iter()
        .filter(|k| pairs.iter().any(|(key, _)| key.strip_prefix("gpt2.") == Some(*k)))
        .collect()
}

/// The next-token chart: one row per token, a bar for the intact model and, with knock-outs,
/// a second bar for the model without those heads, each with its percentage. Bars share one
/// scale, the largest probability shown, so the two can be compared by length.
fn next_chart(rows: &[NextRow], short: bool) -> impl IntoView {
    let knocked = rows.iter().any(|r| r.knocked.is_some());
    let top =
        rows.iter().flat_map(|r| [Some(r.intact.bar()), r.knocked.map(|k| k.bar())]).flatten().fold(1e-9, f64::max);
    let width = move |p: f64| format!("width: {:.1}%", 100.0 * p / top);
    let label =
        if knocked { "Next tokens: intact model and with the knock-outs" } else { "The most likely next tokens" };
    view! {
        <ol class="next-list" class:short=short class:knocked=knocked aria-label=label>
            {rows.iter().map(|r| view! {
                <li data-token=r.text.clone()>
                    <span class="next-token">{format!("{:?}", r.text)}</span>
                    <span class="next-bars">
                        <span class="bar intact" style=width(r.intact.bar())></span>
                        {r.knocked.map(|k| view! { <span class="bar knocked" style=width(k.bar())></span> })}
                    </span>
                    <span class="next-prob">
                        <span class="p-intact">{r.intact.label()}</span>
                        {r.knocked.map(|k| view! { " → "<span class="p-knocked">{k.label()}</span> })}
                    </span>
                </li>
            }).collect_view()}
        </ol>
        {knocked.then(|| view! {
            <p class="muted legend-line"><span class="key intact"></span>" intact model  "<span class="key knocked"></span>" with the knock-outs"</p>
        })}
    }
}
