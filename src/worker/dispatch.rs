//! What the worker does with each request: the loaded model and the chosen backend it keeps
//! between messages, and the order in which requests take turns on that backend.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::{error, fetch, post, scope};
use crate::formats::LoadError;
use crate::gpu::{Gpu, GpuError};
use crate::marian::{Marian, Tokenizer};
use crate::model::stream::StreamLoader;
use crate::session::any::{family, ModelLoader, ModelSession as Session};
use crate::session::manifest::Manifest;
use crate::session::protocol::{self, Backend, BackendChoice, Phase, Reply, Request, Source};
use crate::session::translate::TranslationSession;
use crate::session::vision::VisionSession;
use crate::vit::Vit;

/// A model beside the main one (translation, vision) that the worker puts on a backend.
trait SideModel {
    async fn attach(&self, gpu: Rc<Gpu>) -> Result<(), GpuError>;
    fn fault(&self);
}

impl SideModel for TranslationSession {
    async fn attach(&self, gpu: Rc<Gpu>) -> Result<(), GpuError> {
        self.attach_gpu(gpu).await
    }
    fn fault(&self) {
        self.inject_gpu_fault()
    }
}

impl SideModel for VisionSession {
    async fn attach(&self, gpu: Rc<Gpu>) -> Result<(), GpuError> {
        self.attach_gpu(gpu).await
    }
    fn fault(&self) {
        self.inject_gpu_fault()
    }
}

/// Resolves after the worker's event loop has had a turn (queued messages are handled), after a
/// timer's wait: what the polling loops (a turn, a full cache writer) use, paced by the timer.
pub(super) async fn yield_now() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let _ = scope().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
    });
    let _ = JsFuture::from(promise).await;
}

/// Resolves once the messages queued before it are handled, with no timer's wait: on a message
/// the worker posts to itself through a channel of its own, one per call (so that two waiting
/// callers never share a handler). Between generated tokens: browsers hold a `setTimeout(0)`
/// nested five deep for at least 4 ms, which capped a small model near 200 tokens per second.
async fn let_messages_in() {
    let Ok(channel) = web_sys::MessageChannel::new() else { return yield_now().await };
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        channel.port1().set_onmessage(Some(resolve.unchecked_ref()));
        let _ = channel.port2().post_message(&JsValue::NULL);
    });
    let _ = JsFuture::from(promise).await;
}

/// The worker's clock in milliseconds: `performance.now()`, or the date where it is missing.
fn clock() -> impl Fn() -> f64 {
    let perf = js_sys::Reflect::get(&js_sys::global(), &"performance".into())
        .ok()
        .and_then(|p| p.dyn_into::<web_sys::Performance>().ok());
    move || perf.as_ref().map_or_else(js_sys::Date::now, |p| p.now())
}

/// What the worker keeps between messages (at first: no model, the automatic backend).
#[derive(Default)]
pub struct Worker {
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
    /// The training lab's run.
    runs: super::train::Runs,
    /// The translation model (`LoadTranslator`), beside `session`.
    translator: RefCell<Option<Rc<TranslationSession>>>,
    /// The vision model (`LoadVision`), beside `session`.
    vision: RefCell<Option<Rc<VisionSession>>>,
    /// The number of the latest patching sweep: a sweep the page asked for later supersedes one
    /// still running, which ends without a reply (the page dropped it).
    sweeps: Cell<u64>,
    /// The latest load the page asked for: an earlier one still under way is superseded, and
    /// its model is dropped instead of installed (what runs is what the page chose last).
    latest_load: Cell<u64>,
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
        let cpu = |detail: String| {
            let detail = format!("{detail}; {}", super::threads_detail());
            post(&Reply::Backend { backend: Backend::Cpu, detail, notice: None }, None)
        };
        if choice == BackendChoice::Cpu {
            s.detach_gpu();
            return cpu("chosen in the page".into());
        }
        let asked = match choice {
            BackendChoice::Webgpu | BackendChoice::WebgpuF16 => "WebGPU was asked for, but ",
            _ => "",
        };
        let gpu = match self.gpu().await {
            Ok(g) => g,
            Err(e) => return cpu(format!("{asked}{e}")),
        };
        if choice == BackendChoice::Auto && gpu.software {
            // Measured: a software adapter runs GPT-2 30-200× slower than the CPU path (README,
            // Performance), so "automatic" does not pick it.
            s.detach_gpu();
            return cpu("the only WebGPU adapter here is a software fallback, slower than the CPU; \
                choose WebGPU to use it anyway"
                .into());
        }
        let name = gpu.name.clone();
        match s.attach_gpu_with(gpu, choice == BackendChoice::WebgpuF16).await {
            Ok(()) => {
                if self.fault.take() {
                    s.inject_gpu_fault();
                }
                // f16 weights that round an f32 checkpoint say how far they moved the logits.
                let weights = match (s.gpu_precision(), s.gpu_f16_change()) {
                    (Some(crate::gpu::Precision::F16), Some(d)) => {
                        format!(", f16 weights (logits within {d:.1e} of f32)")
                    }
                    (Some(crate::gpu::Precision::F16), None) => ", f16 weights".into(),
                    // Asked for, but the adapter cannot run f16 kernels: say so.
                    _ if choice == BackendChoice::WebgpuF16 => ", f32 weights (this adapter has no shader-f16)".into(),
                    _ => String::new(),
                };
                post(
                    &Reply::Backend { backend: Backend::Webgpu, detail: format!("{name}{weights}"), notice: None },
                    None,
                )
            }
            Err(e) => cpu(format!("{asked}{e}")),
        }
    }

    /// Puts a translation or vision model on the backend the page chose (the GPU after its
    /// self-test, where there is one and, unless asked for, it is not a software adapter) and says
    /// where it runs.
    async fn side_backend(&self, t: &impl SideModel, choice: BackendChoice, fault: bool) -> String {
        let _turn = self.turn().await;
        let cpu = |why: String| format!("the CPU ({why}; {})", super::threads_detail());
        if choice == BackendChoice::Cpu {
            return cpu("chosen in the page".into());
        }
        let asked = if choice == BackendChoice::Auto { "" } else { "WebGPU was asked for, but " };
        let gpu = match self.gpu().await {
            Ok(g) => g,
            Err(e) => return cpu(format!("{asked}{e}")),
        };
        if choice == BackendChoice::Auto && gpu.software {
            return cpu("the only WebGPU adapter here is a software fallback, slower than the CPU".into());
        }
        match t.attach(gpu.clone()).await {
            Ok(()) => {
                if fault {
                    t.fault();
                }
                format!("WebGPU ({})", gpu.name)
            }
            Err(e) => cpu(format!("{asked}{e}")),
        }
    }

    /// Posts the session's fallback notice, if a GPU failure just moved it to the CPU.
    fn post_notice(&self, s: &Session) {
        if let Some(n) = s.take_notice() {
            post(
                &Reply::Backend {
                    backend: Backend::Cpu,
                    detail: format!("after a WebGPU failure; {}", super::threads_detail()),
                    notice: Some(n),
                },
                None,
            );
        }
    }

    /// Whether load `load` is still the one the page wants.
    fn current(&self, load: u64) -> bool {
        self.latest_load.get() == load
    }

    /// A new model: put it on the chosen backend first, so the page's first analysis runs there.
    /// A superseded load's model is dropped.
    async fn loaded(&self, s: Session, name: &str, source: Source, load: u64) {
        if !self.current(load) {
            return;
        }
        let mut reply = s.loaded(name, source);
        if let Reply::Loaded { load: l, .. } = &mut reply {
            *l = load;
        }
        *self.session.borrow_mut() = Some(Rc::new(s));
        if self.choice.get() != BackendChoice::Cpu {
            post(&Reply::Progress { phase: Phase::Gpu, loaded: 0, total: None, load }, None);
        }
        self.apply_backend().await;
        post(&reply, None);
    }

    /// Installs a model from fetched files (loaded while they downloaded), with `tokenizer.json`
    /// from `base` for a family that reads one; on success keeps the downloaded
    /// files in Cache Storage, on failure removes the stored ones (a file that does not load is
    /// never kept; a superseded load's files are dropped, which stores nothing).
    async fn load_files(&self, name: &str, mut files: fetch::Files, from: (&str, Option<&Manifest>, bool), load: u64) {
        if !self.current(load) {
            return;
        }
        let (base, expect, use_cache) = from;
        let tokenizer = match family(&files.config_json).map(|f| (f, f.tokenizer_file())) {
            Ok((f, Some(file))) => {
                let pinned = expect.and_then(|m| m.tokenizer.as_ref());
                let read = match super::side_file::fetch(base, file, pinned, use_cache, load).await {
                    Ok(t) => match t.text(file).map(str::to_string) {
                        Ok(text) => Ok((t, text)),
                        Err(e) => {
                            t.evict().await;
                            Err(e)
                        }
                    },
                    Err(e) => Err(e),
                };
                match read {
                    Ok(t) => Some(t),
                    Err(e) => {
                        files.evict().await;
                        return load_error(load, format!("{name}: a model of the {} needs its {file}: {e}", f.label()));
                    }
                }
            }
            _ => None,
        };
        if !self.current(load) {
            return;
        }
        post(&Reply::Progress { phase: Phase::Parse, loaded: 0, total: None, load }, None);
        let tokenizer_text = tokenizer.as_ref().map(|t| t.1.as_str());
        let session = files.model.take().expect("a fetched model is finished once").finish(tokenizer_text);
        let side: Vec<_> = tokenizer.iter().map(|(t, _)| t).collect();
        match session {
            Ok(s) => {
                let source = files.keep_with(&side).await;
                drop(files);
                self.loaded(s, name, source, load).await
            }
            Err(e) => {
                files.evict_with(&side).await;
                load_error(load, format!("{name}: {e}"))
            }
        }
    }
}

/// A local file (the page's ArrayBuffer) loaded a megabyte at a time, so the wasm memory never
/// holds it whole, with the tokenizer file its family needs.
fn load_local(config: &str, file: Option<Uint8Array>, tokenizer: Option<&str>) -> Result<Session, LoadError> {
    let file = file.unwrap_or_else(|| Uint8Array::new_with_length(0));
    let mut loader = ModelLoader::new(config, Some(u64::from(file.length())))?;
    let mut chunk = Vec::new();
    let step = 1 << 20;
    for at in (0..file.length()).step_by(step) {
        let piece = file.subarray(at, file.length().min(at.saturating_add(step as u32)));
        chunk.resize(piece.length() as usize, 0);
        piece.copy_to(&mut chunk);
        loader.feed(&chunk)?;
    }
    loader.finish(tokenizer)
}

/// How a load uses Cache Storage: `keep` the downloaded files there (and read them from there);
/// with `only_cached`, load only what is kept.
struct Caching {
    keep: bool,
    only_cached: bool,
}

/// A translation model from `base`: `config.json` and `model.safetensors` as any model's (the
/// weights loaded while they arrive, from Cache Storage when kept there with `use_cache`), then
/// the tokenizer's three files. Kept in the cache once it loaded; a file that fails is removed.
/// `None` when `only_cached` and it is not kept (the page was told `NotCached`).
async fn translator(
    w: &Worker,
    name: &str,
    base: &str,
    Caching { keep: use_cache, only_cached }: Caching,
    load: u64,
) -> Result<Option<(TranslationSession, Source)>, String> {
    let Some(mut files) =
        fetch::model_files::<StreamLoader<Marian>>(name, base, None, use_cache, only_cached, load).await?
    else {
        return Ok(None);
    };
    // A load the page replaced stops here (its files dropped: nothing is stored).
    if !w.current(load) {
        return Ok(None);
    }
    let mut side = Vec::new();
    for file in ["source.spm", "target.spm", "vocab.json"] {
        match super::side_file::fetch(base, file, None, use_cache, load).await {
            Ok(t) => side.push(t),
            Err(e) => {
                files.evict_with(&side.iter().collect::<Vec<_>>()).await;
                return Err(format!("{name}: a Marian model needs its {file}: {e}"));
            }
        }
    }
    if !w.current(load) {
        return Ok(None);
    }
    post(&Reply::Progress { phase: Phase::Parse, loaded: 0, total: None, load }, None);
    let session = (|| {
        let model = files.model.take().ok_or("the model was finished twice")?.finish().map_err(|e| e.to_string())?;
        let tokenizer = Tokenizer::from_files(&side[0].bytes, &side[1].bytes, side[2].text("vocab.json")?)
            .map_err(|e| e.to_string())?;
        TranslationSession::with_model(model, tokenizer).map_err(|e| e.to_string())
    })();
    let side: Vec<_> = side.iter().collect();
    match session {
        Ok(_) if !w.current(load) => Ok(None),
        Ok(s) => Ok(Some((s, files.keep_with(&side).await))),
        Err(e) => {
            files.evict_with(&side).await;
            Err(format!("{name}: {e}"))
        }
    }
}

/// A vision model from `base`: `preprocessor_config.json` (read and checked before the weights
/// download), `config.json` and `model.safetensors` as any model's; kept in the cache once it
/// loaded, removed when it fails. `None` when `only_cached` and it is not kept, or a later
/// load replaced this one.
async fn vision(
    w: &Worker,
    name: &str,
    base: &str,
    Caching { keep: use_cache, only_cached }: Caching,
    load: u64,
) -> Result<Option<(VisionSession, Source)>, String> {
    // The image processor's settings: a small file, read and checked before the weights download
    // (after the cache said it keeps the model, with `only_cached`: nothing is fetched unasked).
    let processor = || async {
        let side = super::side_file::fetch(base, "preprocessor_config.json", None, use_cache, load)
            .await
            .map_err(|e| format!("{name}: a vision model needs its preprocessor_config.json: {e}"))?;
        let read = side
            .text("preprocessor_config.json")
            .and_then(|t| crate::vit::preprocess::Processor::from_json(t).map_err(|e| format!("{name}: {e}")));
        match read {
            Ok(p) => Ok((side, p)),
            Err(e) => {
                side.evict().await;
                Err(e)
            }
        }
    };
    let weights = || fetch::model_files::<StreamLoader<Vit>>(name, base, None, use_cache, only_cached, load);
    let ((side, processor), mut files) = if only_cached {
        let Some(mut files) = weights().await? else { return Ok(None) };
        match processor().await {
            Ok(p) => (p, files),
            Err(e) => {
                files.evict().await;
                return Err(e);
            }
        }
    } else {
        let p = processor().await?;
        match weights().await {
            Ok(Some(files)) => (p, files),
            Ok(None) => return Ok(None),
            Err(e) => {
                p.0.evict().await;
                return Err(e);
            }
        }
    };
    if !w.current(load) {
        return Ok(None);
    }
    post(&Reply::Progress { phase: Phase::Parse, loaded: 0, total: None, load }, None);
    let session = (|| {
        let model = files.model.take().ok_or("the model was finished twice")?.finish().map_err(|e| e.to_string())?;
        VisionSession::with_model(model, processor).map_err(|e| e.to_string())
    })();
    match session {
        Ok(_) if !w.current(load) => Ok(None),
        Ok(s) => Ok(Some((s, files.keep_with(&[&side]).await))),
        Err(e) => {
            files.evict_with(&[&side]).await;
            Err(format!("{name}: {e}"))
        }
    }
}

/// A load failed: the page shows `message` unless a later load superseded this one.
/// A patching sweep, one run at a time: the worker takes its turn per slice of about 50 ms, lets
/// the page's messages in between (a Stop, another request) and reports progress per slice.
async fn patch(w: &Worker, q: &protocol::PatchQuery) {
    let Some(s) = w.session.borrow().clone() else { return error(Some(q.id), "no model is loaded yet".into()) };
    w.stop.set(false);
    let me = w.sweeps.get() + 1;
    w.sweeps.set(me);
    let clock = clock();
    let t0 = clock();
    let started = {
        let _turn = w.turn().await;
        s.start_patching(q).await
    };
    w.post_notice(&s);
    let mut sweep = match started {
        Ok(sw) => sw,
        Err(e) => return error(Some(q.id), e.to_string()),
    };
    while !sweep.finished() {
        if w.sweeps.get() != me {
            return;
        }
        if w.stop.get() {
            return post(&Reply::Stopped { id: q.id }, None);
        }
        {
            let _turn = w.turn().await;
            let slice = clock();
            while !sweep.finished() && clock() - slice < 50.0 {
                if let Err(e) = s.patch_step(&mut sweep).await {
                    w.post_notice(&s);
                    return error(Some(q.id), e.to_string());
                }
            }
        }
        w.post_notice(&s);
        post(&Reply::PatchProgress { id: q.id, done: sweep.done(), total: sweep.total() }, None);
        let_messages_in().await;
    }
    let mut answer = sweep.answer();
    answer.compute_ms = clock() - t0;
    post(&Reply::Patching(answer), None);
}

fn load_error(load: u64, message: String) {
    post(&Reply::Error { id: None, message, load }, None);
}

pub async fn handle(w: Rc<Worker>, req: Request, data: JsValue) {
    match req {
        Request::Load { name, base, expect, cache, only_cached, load } => {
            w.latest_load.set(load);
            match fetch::model_files::<ModelLoader>(&name, &base, expect.as_ref(), cache, only_cached, load).await {
                Ok(Some(files)) => w.load_files(&name, files, (&base, expect.as_ref(), cache), load).await,
                Ok(None) => {}
                Err(e) => load_error(load, e),
            }
        }
        Request::LoadBytes { name, config, tokenizer, load } => {
            w.latest_load.set(load);
            let file = data.dyn_into::<js_sys::ArrayBuffer>().map(|b| Uint8Array::new(&b)).ok();
            match load_local(&config, file, tokenizer.as_deref()) {
                Ok(s) => w.loaded(s, &name, Source::File, load).await,
                Err(e) => load_error(load, format!("{name}: {e}")),
            }
        }
        Request::LoadTranslator { name, base, cache, only_cached, load, backend, fault } => {
            w.latest_load.set(load);
            match translator(&w, &name, &base, Caching { keep: cache, only_cached }, load).await {
                Ok(Some((t, source))) if w.current(load) => {
                    let mut info = t.info(&name);
                    if backend != BackendChoice::Cpu {
                        post(&Reply::Progress { phase: Phase::Gpu, loaded: 0, total: None, load }, None);
                    }
                    info.backend = w.side_backend(&t, backend, fault).await;
                    if !w.current(load) {
                        return;
                    }
                    *w.translator.borrow_mut() = Some(Rc::new(t));
                    post(&Reply::TranslatorLoaded { info, source, load }, None);
                }
                Ok(_) => {}
                Err(e) => load_error(load, e),
            }
        }
        Request::Translate(q) => {
            let Some(t) = w.translator.borrow().clone() else {
                return error(Some(q.id), "no translation model is loaded yet".into());
            };
            let clock = clock();
            let _turn = w.turn().await;
            let t0 = clock();
            match t.answer(&q, &clock).await {
                Ok(mut out) => {
                    out.compute_ms = clock() - t0;
                    let (message, data) = out.into_parts();
                    post(&Reply::Translation(message), Some(data))
                }
                Err(e) => error(Some(q.id), e.to_string()),
            }
        }
        Request::LoadVision { name, base, cache, only_cached, load, backend, fault } => {
            w.latest_load.set(load);
            match vision(&w, &name, &base, Caching { keep: cache, only_cached }, load).await {
                Ok(Some((v, source))) if w.current(load) => {
                    let mut info = v.info(&name);
                    if backend != BackendChoice::Cpu {
                        post(&Reply::Progress { phase: Phase::Gpu, loaded: 0, total: None, load }, None);
                    }
                    info.backend = w.side_backend(&v, backend, fault).await;
                    if !w.current(load) {
                        return;
                    }
                    *w.vision.borrow_mut() = Some(Rc::new(v));
                    post(&Reply::VisionLoaded { info, source, load }, None);
                }
                Ok(_) => {}
                Err(e) => load_error(load, e),
            }
        }
        Request::Classify(q) => {
            let Some(v) = w.vision.borrow().clone() else {
                return error(Some(q.id), "no vision model is loaded yet".into());
            };
            let Some(rgba) = data.dyn_ref::<js_sys::ArrayBuffer>().map(|b| Uint8Array::new(b).to_vec()) else {
                return error(Some(q.id), "the picture's pixels did not arrive".into());
            };
            let clock = clock();
            let _turn = w.turn().await;
            let t0 = clock();
            match v.answer(&q, &rgba).await {
                Ok(mut out) => {
                    out.compute_ms = clock() - t0;
                    let (message, data) = out.into_parts();
                    post(&Reply::Vision(message), Some(data))
                }
                Err(e) => error(Some(q.id), e.to_string()),
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
            let clock = clock();
            let (started, mut ms) = {
                let _turn = w.turn().await;
                let t0 = clock();
                let g = s.start_generation(&query).await;
                (g, clock() - t0)
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
                    let t0 = clock();
                    let next = s.next_token(&mut g).await;
                    ms += clock() - t0;
                    next
                };
                w.post_notice(&s);
                match next {
                    Ok((token, text)) => {
                        // An end-of-text token ends the generation; its literal is not written.
                        let (text, ended) = crate::session::until_end_of_text(&token, text);
                        post(&Reply::Generated { id: query.id, token, text, done: n == steps || ended, ms }, None);
                        if ended {
                            return;
                        }
                        ms = 0.0;
                    }
                    Err(e) => return error(Some(query.id), e.to_string()),
                }
                // Let queued messages in between tokens (a Stop).
                let_messages_in().await;
            }
        }
        Request::Stop => w.stop.set(true),
        Request::Lens(q) => {
            let _turn = w.turn().await;
            let Some(s) = w.session.borrow().clone() else { return error(Some(q.id), "no model is loaded yet".into()) };
            let t0 = js_sys::Date::now();
            let out = s.lens(&q).await;
            w.post_notice(&s);
            match out {
                Ok(mut l) => {
                    l.compute_ms = js_sys::Date::now() - t0;
                    post(&Reply::Lens(l), None)
                }
                Err(e) => error(Some(q.id), e.to_string()),
            }
        }
        Request::Heads(q) => {
            let _turn = w.turn().await;
            let Some(s) = w.session.borrow().clone() else { return error(Some(q.id), "no model is loaded yet".into()) };
            let t0 = js_sys::Date::now();
            let out = s.head_detectors(&q).await;
            w.post_notice(&s);
            match out {
                Ok(mut h) => {
                    h.compute_ms = js_sys::Date::now() - t0;
                    post(&Reply::Heads(h), None)
                }
                Err(e) => error(Some(q.id), e.to_string()),
            }
        }
        Request::Patch(q) => patch(&w, &q).await,
        Request::AttentionBench { id, n, d } => {
            // The benchmark uses whatever adapter exists, software ones included (the page says which).
            let _turn = w.turn().await;
            let gpu = w.gpu().await;
            let row = crate::gpu::bench::attention_row(gpu.as_deref(), n, d, id, &clock()).await;
            post(&Reply::AttentionBench { id, row }, None);
        }
        Request::Train { id, config, until } => w.runs.train(id, config, until).await,
        Request::TrainPause => w.runs.pause(),
        Request::TrainReset => w.runs.reset(),
        Request::TrainExport { id } => w.runs.export(id),
        Request::HeadQkv { id, prompt, layer, head } => {
            let Some(s) = w.session.borrow().clone() else { return error(Some(id), "no model is loaded yet".into()) };
            match s.head_qkv(id, &prompt, layer, head) {
                Ok(h) => post(&Reply::HeadQkv(h), None),
                Err(e) => error(Some(id), e.to_string()),
            }
        }
    }
}
