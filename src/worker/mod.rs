//! The GPT-2 Web Worker: receives `Request`s from the page, runs them on a `Session` and posts
//! `Reply`s back. Every message is `{json: string, data?}`: the page sends local model files as
//! an ArrayBuffer, and the worker sends attention weights as a Float32Array (both transferred,
//! not copied).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, DedicatedWorkerGlobalScope, MessageEvent, ReadableStreamDefaultReader, Response};

use crate::gpt2::manifest::{verify, FileCheck, Manifest};
use crate::gpt2::protocol::{Backend, BackendChoice, Phase, Reply, Request, Source};
use crate::gpt2::session::Session;
use crate::gpu::{Gpu, GpuError};

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(reply: &Reply, data: Option<Vec<f32>>) {
    let msg = Object::new();
    let _ = Reflect::set(&msg, &"json".into(), &reply.encode().into());
    let mut transfer = None;
    if let Some(d) = data {
        let arr = js_sys::Float32Array::from(&d[..]);
        transfer = Some(js_sys::Array::of1(&arr.buffer()));
        let _ = Reflect::set(&msg, &"data".into(), &arr);
    }
    let _ = match transfer {
        Some(t) => scope().post_message_with_transfer(&msg, &t),
        None => scope().post_message(&msg),
    };
}

fn error(id: Option<u64>, message: String) {
    post(&Reply::Error { id, message }, None);
}

fn js_err(e: JsValue) -> String {
    e.as_string()
        .or_else(|| e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())))
        .unwrap_or_else(|| format!("{e:?}"))
}

async fn fetch(url: &str) -> Result<Response, String> {
    let resp: Response = JsFuture::from(scope().fetch_with_str(url))
        .await
        .map_err(|e| format!("could not fetch {url} ({}): this computer may be offline, or the server does not allow this page to read it (CORS)", js_err(e)))?
        .unchecked_into();
    if !resp.ok() {
        return Err(format!("{url} answered HTTP {} {}: is the address right?", resp.status(), resp.status_text()));
    }
    Ok(resp)
}

/// Reads a response body chunk by chunk, posting progress about every 1 MB.
async fn read_with_progress(resp: Response, phase: Phase) -> Result<Vec<u8>, String> {
    let total = resp.headers().get("content-length").ok().flatten().and_then(|s| s.parse::<u64>().ok());
    let body = resp.body().ok_or("the response has no body")?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut bytes = Vec::with_capacity(total.unwrap_or(0).min(1 << 31) as usize);
    let mut last = 0usize;
    let progress = |loaded: usize| post(&Reply::Progress { phase, loaded: loaded as u64, total }, None);
    progress(0);
    loop {
        let chunk =
            JsFuture::from(reader.read()).await.map_err(|e| format!("the download broke off: {}", js_err(e)))?;
        if Reflect::get(&chunk, &"done".into()).ok().and_then(|v| v.as_bool()).unwrap_or(true) {
            break;
        }
        let value: Uint8Array = Reflect::get(&chunk, &"value".into()).map_err(js_err)?.unchecked_into();
        let start = bytes.len();
        bytes.resize(start + value.length() as usize, 0);
        value.copy_to(&mut bytes[start..]);
        if bytes.len() - last >= 1 << 20 {
            last = bytes.len();
            progress(last);
        }
    }
    progress(bytes.len());
    Ok(bytes)
}

const CACHE: &str = "attention-live-models";

async fn open_cache() -> Option<Cache> {
    let storage = scope().caches().ok()?;
    JsFuture::from(storage.open(CACHE)).await.ok().map(JsCast::unchecked_into)
}

async fn cached(cache: &Option<Cache>, url: &str) -> Option<Response> {
    let found = JsFuture::from(cache.as_ref()?.match_with_str(url)).await.ok()?;
    found.dyn_into::<Response>().ok()
}

/// One file of a model: the cached copy `stored` if there is one, else from the network (then
/// verified and stored in `cache`).
async fn file(
    url: &str,
    name: &str,
    expect: Option<&FileCheck>,
    cache: &Option<Cache>,
    stored: Option<Response>,
) -> Result<(Vec<u8>, Source), String> {
    if let Some(resp) = stored {
        return Ok((read_with_progress(resp, Phase::Cache).await?, Source::Cache));
    }
    let resp = fetch(url).await?;
    // A pinned file of another size is refused before downloading it.
    let length = resp.headers().get("content-length").ok().flatten().and_then(|s| s.parse::<u64>().ok());
    if let (Some(want), Some(len)) = (expect, length) {
        if want.size != len {
            return Err(format!(
                "{url} is {len} bytes, but the pinned {name} is {} bytes: it is a different file",
                want.size
            ));
        }
    }
    let bytes = read_with_progress(resp, Phase::Download).await?;
    if let Some(want) = expect {
        post(&Reply::Progress { phase: Phase::Verify, loaded: 0, total: Some(bytes.len() as u64) }, None);
        verify(name, &bytes, want)?;
    }
    let Some(c) = cache else { return Ok((bytes, Source::Network)) };
    // A failure to store (quota, private browsing) only costs the next visit a download.
    let body = Uint8Array::from(&bytes[..]);
    let stored = match Response::new_with_opt_buffer_source(Some(&body)) {
        Ok(r) => JsFuture::from(c.put_with_str(url, &r)).await.is_ok(),
        Err(_) => false,
    };
    Ok((bytes, if stored { Source::NetworkStored } else { Source::NetworkUnstored }))
}

async fn load(
    name: &str,
    base: &str,
    expect: Option<Manifest>,
    use_cache: bool,
    only_cached: bool,
) -> Result<Option<(Session, Source)>, String> {
    let cache = if use_cache { open_cache().await } else { None };
    let (cfg_url, model_url) = (format!("{base}config.json"), format!("{base}model.safetensors"));
    // Each file is looked up in the cache once: the answer decides both "ask first?" and where
    // the bytes come from.
    let (stored_cfg, stored_model) = (cached(&cache, &cfg_url).await, cached(&cache, &model_url).await);
    if only_cached && (stored_cfg.is_none() || stored_model.is_none()) {
        post(&Reply::NotCached { name: name.into(), size: expect.as_ref().map(|m| m.model.size) }, None);
        return Ok(None);
    }
    let (config, _) = file(&cfg_url, "config.json", expect.as_ref().map(|m| &m.config), &cache, stored_cfg).await?;
    let (bytes, from) =
        file(&model_url, "model.safetensors", expect.as_ref().map(|m| &m.model), &cache, stored_model).await?;
    post(&Reply::Progress { phase: Phase::Parse, loaded: 0, total: None }, None);
    let config = String::from_utf8(config).map_err(|_| "config.json is not UTF-8 text".to_string())?;
    let session = Session::new(&config, &bytes).map_err(|e| format!("{name}: {e}"))?;
    Ok(Some((session, from)))
}

/// Resolves after the worker's event loop has had a turn (queued messages are handled).
async fn yield_now() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let _ = scope().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
    });
    let _ = JsFuture::from(promise).await;
}

/// What the worker keeps between messages.
struct Worker {
    /// Shared (Rc) so a generation that awaits between tokens never holds the RefCell borrowed
    /// while a Load replaces the model.
    session: RefCell<Option<Rc<Session>>>,
    stop: Cell<bool>,
    /// The page's choice, applied to every model loaded.
    choice: Cell<BackendChoice>,
    /// Set by the page (tests): the next model attached to the GPU fails its next run.
    fault: Cell<bool>,
    /// The GPU device, opened once: `Err` says why there is none.
    gpu: RefCell<Option<Result<Rc<Gpu>, GpuError>>>,
    /// Turns on the model's backend: (next ticket, ticket being served). See `Worker::turn`.
    turns: Cell<(u64, u64)>,
}

/// The right to run on the model's backend until dropped.
struct Turn<'a>(&'a Cell<(u64, u64)>);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let (next, serving) = self.0.get();
        self.0.set((next, serving + 1));
    }
}

impl Worker {
    /// Waits for this request's turn to run the model (first come, first served). Requests are
    /// handled concurrently, and a run on WebGPU awaits its results: two runs in flight at once
    /// (a prompt and the second prompt beside it, or an analysis per keystroke) interleave their
    /// WebGPU error scopes, which must be popped in the order they were pushed, and wgpu panics.
    async fn turn(&self) -> Turn<'_> {
        let (ticket, serving) = self.turns.get();
        self.turns.set((ticket + 1, serving));
        while self.turns.get().1 != ticket {
            yield_now().await;
        }
        Turn(&self.turns)
    }

    async fn gpu(&self) -> Result<Rc<Gpu>, GpuError> {
        if let Some(g) = self.gpu.borrow().clone() {
            return g;
        }
        let g = Gpu::new().await.map(Rc::new);
        *self.gpu.borrow_mut() = Some(g.clone());
        g
    }

    /// Puts the loaded model on the chosen backend and tells the page what it runs on.
    async fn apply_backend(&self) {
        let _turn = self.turn().await;
        let Some(s) = self.session.borrow().clone() else { return };
        let choice = self.choice.get();
        let cpu = |detail: String| post(&Reply::Backend { backend: Backend::Cpu, detail, notice: None }, None);
        if choice == BackendChoice::Cpu {
            s.detach_gpu();
            return cpu("chosen in the page".into());
        }
        let asked = if choice == BackendChoice::Webgpu { "WebGPU was asked for, but " } else { "" };
        let gpu = match self.gpu().await {
            Ok(g) => g,
            Err(e) => return cpu(format!("{asked}{e}")),
        };
        if choice == BackendChoice::Auto && gpu.software {
            // Measured: a software adapter runs GPT-2 30-200× slower than the CPU path (README,
            // Performance), so "automatic" does not pick it.
            s.detach_gpu();
            return cpu("the only WebGPU adapter here is a software fallback, slower than the CPU; choose WebGPU to use it anyway".into());
        }
        let name = gpu.name.clone();
        match s.attach_gpu(gpu).await {
            Ok(()) => {
                if self.fault.take() {
                    s.inject_gpu_fault();
                }
                let weights = if s.gpu_precision() == Some(crate::gpu::Precision::F16) { ", f16 weights" } else { "" };
                post(
                    &Reply::Backend { backend: Backend::Webgpu, detail: format!("{name}{weights}"), notice: None },
                    None,
                )
            }
            Err(e) => cpu(format!("{asked}{e}")),
        }
    }

    /// Posts the session's fallback notice, if a GPU failure just moved it to the CPU.
    fn post_notice(&self, s: &Session) {
        if let Some(n) = s.take_notice() {
            post(
                &Reply::Backend { backend: Backend::Cpu, detail: "after a WebGPU failure".into(), notice: Some(n) },
                None,
            );
        }
    }

    /// A new model: put it on the chosen backend first, so the page's first analysis runs there.
    async fn loaded(&self, s: Session, name: &str, source: Source) {
        let reply = s.loaded(name, source);
        *self.session.borrow_mut() = Some(Rc::new(s));
        if self.choice.get() != BackendChoice::Cpu {
            post(&Reply::Progress { phase: Phase::Gpu, loaded: 0, total: None }, None);
        }
        self.apply_backend().await;
        post(&reply, None);
    }
}

async fn handle(w: Rc<Worker>, req: Request, data: JsValue) {
    match req {
        Request::Load { name, base, expect, cache, only_cached } => {
            match load(&name, &base, expect, cache, only_cached).await {
                Ok(Some((s, source))) => w.loaded(s, &name, source).await,
                Ok(None) => {}
                Err(e) => error(None, e),
            }
        }
        Request::LoadBytes { name, config } => {
            let bytes =
                data.dyn_into::<js_sys::ArrayBuffer>().map(|b| Uint8Array::new(&b).to_vec()).unwrap_or_default();
            match Session::new(&config, &bytes) {
                Ok(s) => w.loaded(s, &name, Source::File).await,
                Err(e) => error(None, format!("{name}: {e}")),
            }
        }
        Request::Backend { choice, fault } => {
            w.choice.set(choice);
            w.fault.set(fault);
            w.apply_backend().await;
        }
        Request::Analyze(q) => {
            let _turn = w.turn().await;
            let Some(s) = w.session.borrow().clone() else { return error(Some(q.id), "no model is loaded yet".into()) };
            let t0 = js_sys::Date::now();
            let out = s.analyze(&q).await;
            w.post_notice(&s);
            match out {
                Ok((mut a, attention)) => {
                    a.compute_ms = js_sys::Date::now() - t0;
                    post(&Reply::Analysis(a), Some(attention.into_parts().1))
                }
                Err(e) => error(Some(q.id), e.to_string()),
            }
        }
        Request::Generate { query, steps } => {
            let Some(s) = w.session.borrow().clone() else {
                return error(Some(query.id), "no model is loaded yet".into());
            };
            w.stop.set(false);
            let started = {
                let _turn = w.turn().await;
                s.start_generation(&query).await
            };
            w.post_notice(&s);
            let mut g = match started {
                Ok(g) => g,
                Err(e) => return error(Some(query.id), e.to_string()),
            };
            for n in 1..=steps {
                if w.stop.get() {
                    return post(&Reply::Stopped { id: query.id }, None);
                }
                let next = {
                    let _turn = w.turn().await;
                    s.next_token(&mut g).await
                };
                w.post_notice(&s);
                match next {
                    Ok((token, text)) => post(&Reply::Generated { id: query.id, token, text, done: n == steps }, None),
                    Err(e) => return error(Some(query.id), e.to_string()),
                }
                // Let queued messages in between tokens: a Stop, and the page's analyses.
                yield_now().await;
            }
        }
        Request::Stop => w.stop.set(true),
        Request::AttentionBench { id, n, d } => {
            // The benchmark uses whatever adapter exists, software ones included (the page says which).
            let _turn = w.turn().await;
            let gpu = w.gpu().await;
            let now = js_sys::Date::now;
            let perf = js_sys::Reflect::get(&js_sys::global(), &"performance".into())
                .ok()
                .and_then(|p| p.dyn_into::<web_sys::Performance>().ok());
            let clock = move || perf.as_ref().map_or_else(now, |p| p.now());
            let row = crate::gpu::bench::attention_row(gpu.as_deref(), n, d, id, &clock).await;
            post(&Reply::AttentionBench { id, row }, None);
        }
        Request::HeadQkv { id, prompt, layer, head } => {
            let Some(s) = w.session.borrow().clone() else { return error(Some(id), "no model is loaded yet".into()) };
            match s.head_qkv(id, &prompt, layer, head) {
                Ok(h) => post(&Reply::HeadQkv(h), None),
                Err(e) => error(Some(id), e.to_string()),
            }
        }
    }
}

pub fn start() {
    let state = Rc::new(Worker {
        session: RefCell::new(None),
        stop: Cell::new(false),
        choice: Cell::new(BackendChoice::Auto),
        fault: Cell::new(false),
        gpu: RefCell::new(None),
        turns: Cell::new((0, 0)),
    });
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let text = Reflect::get(&ev.data(), &"json".into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
        match Request::decode(&text) {
            Ok(req) => {
                let data = Reflect::get(&ev.data(), &"data".into()).unwrap_or(JsValue::UNDEFINED);
                wasm_bindgen_futures::spawn_local(handle(state.clone(), req, data))
            }
            Err(e) => error(None, e),
        }
    });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    post(&Reply::Ready, None);
}
