//! The model loader: the status line (progress, cancel, download, errors), the file picker, and
//! the line saying what runs the model.

use crate::formats::echo::echo;
use crate::numerics::format::Signed;
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::super::status::{
    loading_line, mb, model_label, shape_line, source_note, stored_models, Event, Status, StoredModel,
};
use super::super::Model;
use super::conversation::{cancel, load, retry};
use super::store::{store, Store};
use crate::session::protocol::{self, Phase, Request};
use crate::kit::stored::{clear_stored, stored_files};

/// What the model is doing, with the reader's next step when there is one.
#[component]
pub fn ModelStatus() -> impl IntoView {
    let s = store();
    let url = Memo::new(move |_| s.params.with(|p| p.source()).unwrap_or_default());
    let online = crate::kit::network::online();
    move || match s.status.get() {
        Status::Starting => view! { <p class="muted">"Starting the model worker…"</p> }.into_any(),
        Status::Loading { name, phase, loaded, total, rate, .. } => {
            let (text, pct) = loading_line(&name, phase, loaded, total, rate);
            let cancel_button = (phase == Phase::Download).then(|| {
                view! { <button type="button" class="cancel" on:click=move |_| cancel(s)>"Cancel"</button> }
            });
            view! {
                <div class="model-status loading" role="status">
                    <label>{text}<progress max="100" value=pct.map(|p| p.to_string())></progress></label>
                    {cancel_button}
                </div>
            }
            .into_any()
        }
        // Nothing to download: the trained model exists only where the lab stored it.
        Status::NotCached { name, .. } if Model::named(&name) == Some(Model::Trained) => view! {
            <div class="model-status not-cached no-trained" role="status">
                <p>"No trained model in this browser: train one in the "
                    <a href="/training/">"Watching attention learn"</a>" chapter, then open it here from the lab."</p>
            </div>
        }
        .into_any(),
        Status::NotCached { name, size } => {
            let size_note = size.map(|s| format!(" ({})", mb(s))).unwrap_or_default();
            // Only the hub's models have pinned hashes; another URL's files are checked only by loading them.
            let pinned = crate::session::manifest::smollm2_135m().is_some();
            let checked = match Model::named(&name) {
                Some(Model::Gpt2) => ", checked against the pinned SHA-256 of OpenAI's GPT-2 small,",
                Some(Model::Smollm2) if pinned => ", checked against the pinned SHA-256 of SmolLM2-135M's files,",
                Some(Model::Smollm2) => {
                    " (this build has no pinned SHA-256 for SmolLM2-135M: its files are checked only by loading \
                     them),"
                }
                _ => " (nothing pins what this address serves: load only models from sources you trust),",
            };
            let text = format!(
                "{} is not stored in this browser yet. It will be downloaded from {}{size_note}{checked} and \
                 kept in this browser's storage once it has loaded, so the next visit needs no network.",
                model_label(&name),
                url.get()
            );
            let button = format!("Download{}", size.map(|s| format!(" {}", mb(s))).unwrap_or_default());
            // Only downloads need the network: the bundled models are kept for offline reading.
            let offline = move || {
                (!online.get()).then(|| {
                    view! {
                        <p class="notice needs-network" role="status">"You are offline: this download needs the \
                            network. The bundled models work offline."</p>
                    }
                })
            };
            view! {
                <div class="model-status not-cached">
                    <p>{text}</p>
                    {offline}
                    <button type="button" class="download-model" disabled=move || !online.get()
                        on:click=move |_| load(s, false)>{button}</button>
                </div>
            }
            .into_any()
        }
        Status::NeedFiles => view! {
            <p class="model-status">"Pick or drop a config.json and a model.safetensors in the Hugging Face layout \
                of GPT-2 or of the Llama family, with its tokenizer.json for a Llama-family model (below). Local \
                files stay on this computer, and a link cannot carry them."</p>
        }
        .into_any(),
        Status::NeedUrl => view! {
            <p class="model-status">"Enter the URL of a folder that holds config.json and model.safetensors in the \
                Hugging Face layout of GPT-2 or of the Llama family, and tokenizer.json for a Llama-family model \
                (the server must allow cross-origin reads)."
                {move || (!online.get()).then_some(" You are offline: a download needs the network.")}</p>
        }
        .into_any(),
        Status::Ready { name, source, n_layer, n_head, n_positions, params, char_vocab, family, n_kv_head } => {
            let chars = char_vocab
                .map(|v| format!(" It reads the characters {}, one token each.", echo(&v)))
                .unwrap_or_default();
            let text = format!(
                "{}: {}, {:.2} M parameters, window {n_positions} tokens, in a Web Worker on this computer.{}{chars}",
                model_label(&name),
                shape_line(family, n_layer, n_head, n_kv_head),
                Signed(params as f64 / 1e6),
                source_note(source)
            );
            view! { <p class="model-status ready">{text}</p> }.into_any()
        }
        Status::Failed(e) => view! {
            <div class="notice error model-failed" role="alert">
                <p>{format!("The model could not be loaded: {e}")}</p>
                <button type="button" class="retry" on:click=move |_| retry(s)>"Retry"</button>
            </div>
        }
        .into_any(),
    }
}

/// What runs the model once it is loaded, and the notice when a GPU failure moved it to the CPU.
#[component]
pub fn BackendLine() -> impl IntoView {
    let s = store();
    let line = move || {
        let text = match s.backend.get() {
            _ if !s.status.with(Status::is_ready) => return None,
            None => "Running on: choosing a backend…".to_string(),
            Some(b) if b.name == protocol::Backend::Webgpu => format!("Running on: WebGPU ({})", b.detail),
            Some(b) => format!("Running on: CPU ({})", b.detail),
        };
        Some(view! { <p class="backend-status" role="status">{text}</p> })
    };
    let notice = move || {
        s.backend_notice.get().map(|n| view! { <p class="notice backend-notice" role="alert">{n}</p> })
    };
    view! { {line}{notice} }
}

/// The models kept in this browser's storage (downloads and the training lab's model), with
/// their sizes, and a button that removes them all. Read again whenever the status moves on (a
/// model just kept, or a kept one removed because it failed to load).
#[component]
pub fn StoredList() -> impl IntoView {
    let s = store();
    let list = RwSignal::new(None::<Result<Vec<StoredModel>, String>>);
    let note = RwSignal::new(None::<String>);
    let refresh = move || {
        leptos::task::spawn_local(async move {
            let origin = window().location().origin().unwrap_or_default();
            let read = stored_files().await.map(|files| stored_models(&files, &origin));
            list.try_set(Some(read));
        });
    };
    let key = Memo::new(move |_| s.status.with(Status::key));
    // The effect reads the key (a memo only tracked, never read, is never recomputed) and
    // looks again whenever the model's status changes: a load may have stored or evicted files.
    Effect::new(move |_| {
        let k = key.get();
        refresh();
        k
    });
    let clear = move |_| {
        leptos::task::spawn_local(async move {
            let done = match clear_stored().await {
                Ok(()) => "Removed. A model loaded now stays until the page closes; the next visit downloads it \
                           again."
                    .to_string(),
                Err(e) => format!("Could not remove them: {e}."),
            };
            note.try_set(Some(done));
            refresh();
        });
    };
    let models = move || list.get().and_then(Result::ok).unwrap_or_default();
    let summary = move || match list.get() {
        None => "Stored in this browser: …".to_string(),
        Some(Err(e)) => format!("Stored in this browser: unknown ({e})"),
        Some(Ok(m)) if m.is_empty() => "Stored in this browser: nothing".to_string(),
        Some(Ok(m)) => {
            let total = m.iter().fold(0u64, |t, m| t.saturating_add(m.bytes));
            let n = if m.len() == 1 { "1 model".to_string() } else { format!("{} models", m.len()) };
            format!("Stored in this browser: {n}, {}", mb(total))
        }
    };
    view! {
        <div class="stored-models" data-count=move || models().len().to_string()>
            <p class="stored-summary">{summary}" "
                <button type="button" class="clear-stored" disabled=move || models().is_empty() on:click=clear>
                    "Clear"
                </button>
            </p>
            <ul>
                {move || models().into_iter().map(|m| view! {
                    <li title=m.base.clone()><bdi>{m.label.clone()}</bdi>{format!(": {}", mb(m.bytes))}</li>
                }).collect_view()}
            </ul>
            {move || note.get().map(|n| view! { <p class="muted" role="status">{n}</p> })}
        </div>
    }
}

/// The file picker for a local checkpoint, shown when the model menu says "local files" (files
/// can also be dropped on the whole demo, whatever the model).
#[component]
pub fn FilePick() -> impl IntoView {
    let s = store();
    let on_pick = move |ev: leptos::ev::Event| {
        let input: Option<web_sys::HtmlInputElement> = ev.target().and_then(|t| t.dyn_into().ok());
        load_files(s, input.and_then(|i| i.files()));
    };
    let shown = Memo::new(move |_| s.params.with(|p| p.model == Model::File));
    move || {
        shown.get().then(|| {
            view! {
                <label class="file-pick">"Load a checkpoint (GPT-2 or Llama family) from local files: "
                    <input type="file" multiple accept=".json,.safetensors" on:change=on_pick/>
                    <span class="muted">" (or drop config.json, model.safetensors and, for a Llama-family \
                        model, tokenizer.json here)"</span>
                </label>
            }
        })
    }
}

/// Loads the reader's picked or dropped files.
pub fn load_files(s: Store, files: Option<web_sys::FileList>) {
    let Some(files) = files else { return };
    leptos::task::spawn_local(async move {
        match read_files(files).await {
            Ok((config, tokenizer, bytes)) => {
                s.advance(Event::FilesSent);
                s.set(|p| p.model = Model::File);
                let name = Model::File.key().into();
                s.send_load(Request::LoadBytes { name, config, tokenizer, load: 0 }, Some(bytes));
            }
            Err(e) => s.advance(Event::Failed(e)),
        }
    });
}

/// Reads picked or dropped files: config.json, model.safetensors and, when given, tokenizer.json
/// (a Llama-family model needs it; the worker says so if it is missing): (config text,
/// tokenizer text, model bytes).
async fn read_files(files: web_sys::FileList) -> Result<(String, Option<String>, JsValue), String> {
    let all: Vec<web_sys::File> = (0..files.length()).filter_map(|i| files.get(i)).collect();
    let is_tokenizer = |f: &web_sys::File| f.name().ends_with(".json") && f.name().contains("tokenizer");
    let config = all
        .iter()
        .find(|f| f.name().ends_with(".json") && !is_tokenizer(f))
        .ok_or("pick both config.json and model.safetensors (no config .json file was given)")?;
    let model = all
        .iter()
        .find(|f| f.name().ends_with(".safetensors"))
        .ok_or("pick both config.json and model.safetensors (no .safetensors file was given)")?;
    // A file too large for the worker's memory is refused before it is read into the page's.
    crate::session::download::check_declared(&model.name(), Some(model.size() as u64))?;
    let read_text = |f: &web_sys::File, what: &'static str| {
        let promise = f.text();
        async move { JsFuture::from(promise).await.map_err(|_| format!("could not read {what}")) }
    };
    let text = read_text(config, "config.json").await?.as_string().unwrap_or_default();
    let tokenizer = match all.iter().find(|f| is_tokenizer(f)) {
        Some(f) => Some(read_text(f, "tokenizer.json").await?.as_string().unwrap_or_default()),
        None => None,
    };
    let bytes = JsFuture::from(model.array_buffer()).await.map_err(|_| "could not read the .safetensors file")?;
    Ok((text, tokenizer, bytes))
}
