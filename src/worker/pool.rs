//! The compute worker's thread pool, in its threaded build (feature `threads`): Web Workers that
//! share this worker's wasm memory, running the hand-made pool's loop (`numerics::par::spin`:
//! this thread takes parts of each job too, so one worker fewer than threads) or, where the
//! worker's name asks for it, rayon's pool (benchmarks compare the two).
//!
//! The Web Workers are started first, each from a short script given the compiled module and
//! the shared memory, which it instantiates; [`start`] waits until every one has said so. Only
//! then does each get its loop: for rayon, `build_global` blocks until its threads run, and a
//! worker cannot start while the thread that created it is blocked, so they must already be
//! running; rayon is told how to "spawn" a thread (`spawn_handler`): the next started worker is
//! sent a pointer to the boxed closure rayon wants run. [`pool_thread`] never returns (a thread
//! waits for work with `Atomics.wait`, allowed in workers). Where the page is not cross-origin
//! isolated (its memory cannot be sent to other threads), or a thread fails to start, kernels
//! run on one thread and the backend line says why.

use std::cell::RefCell;

use js_sys::{Array, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, BlobPropertyBag, MessageEvent, Url, Worker};

use crate::numerics::par;

/// At most this many threads, whatever the machine reports: past 8, GPT-2 small's products are
/// too short to share further.
pub const MAX_THREADS: usize = 8;

/// The script of each pool thread. `glue` is the worker's wasm-bindgen script (a blob URL made
/// by the loader from the checked bytes); `poolThread` tells the entry point not to start a
/// second compute worker in it. The second message is the closure to run.
const THREAD_SCRIPT: &str = r#"self.onmessage = (e) => {
  const { glue, module, memory } = e.data;
  self.poolThread = true;
  importScripts(glue);
  wasm_bindgen.initSync({ module, memory });
  self.onmessage = (e) => wasm_bindgen.pool_thread(e.data);
  postMessage("started");
};
"#;

/// What kernels run on, for the backend line: "2 threads", or one thread and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Threads {
    pub count: usize,
    pub why_one: Option<String>,
}

impl Threads {
    pub fn describe(&self) -> String {
        match (&self.why_one, self.count) {
            (Some(why), _) => format!("1 thread: {why}"),
            (None, 1) => "1 thread".into(),
            (None, n) => format!("{n} threads"),
        }
    }
}

thread_local! {
    static THREADS: RefCell<Threads> = const { RefCell::new(Threads { count: 1, why_one: None }) };
    /// The pool's workers, kept for the worker's lifetime.
    static WORKERS: RefCell<Vec<Worker>> = const { RefCell::new(Vec::new()) };
}

/// The threads kernels run on now.
pub fn threads() -> Threads {
    THREADS.with(|t| t.borrow().clone())
}

/// Entry point of a pool thread: with 0, the hand-made pool's loop (`par::spin`); else the
/// closure rayon handed to `spawn_handler` (its thread's main loop). Neither returns.
#[wasm_bindgen]
pub fn pool_thread(ptr: u32) {
    if ptr == 0 {
        par::spin::worker_loop();
    }
    // SAFETY: `ptr` is the `Box::into_raw` of `spawn`, sent to exactly one thread.
    let run = unsafe { Box::from_raw(ptr as *mut Box<dyn FnOnce() + Send>) };
    run();
}

/// rayon's pool rather than the hand-made one: where the worker's name says `pool=rayon`
/// (`kit::worker`; benchmarks compare the two on one build).
fn wants_rayon() -> bool {
    global("name").as_string().is_some_and(|n| n.split(',').any(|p| p == "pool=rayon"))
}

fn global(name: &str) -> JsValue {
    Reflect::get(&js_sys::global(), &name.into()).unwrap_or(JsValue::UNDEFINED)
}

/// Whether this instance is a pool thread (its entry point then starts no compute worker).
pub fn is_pool_thread() -> bool {
    global("poolThread").is_truthy()
}

/// Starts the pool with one thread per core (at most [`MAX_THREADS`]) and waits until each has
/// started; then kernels split their work across them. On failure kernels stay on one thread.
pub async fn start() {
    let rayon = wants_rayon();
    let outcome = match want() {
        Err(why) => Err(why),
        // The hand-made pool's asking thread takes parts too: one Web Worker fewer.
        Ok(n) => spawn(if rayon { n } else { n - 1 }, rayon).await.map(|()| n),
    };
    let threads = match outcome {
        Ok(n) => {
            par::set_threads(n);
            par::set_pool(if rayon { par::Pool::Rayon } else { par::Pool::Spin });
            Threads { count: n, why_one: None }
        }
        Err(why) => Threads { count: 1, why_one: Some(why) },
    };
    THREADS.with(|t| *t.borrow_mut() = threads);
}

/// How many threads to start, or why none.
fn want() -> Result<usize, String> {
    if !global("crossOriginIsolated").is_truthy() {
        return Err("the page is not cross-origin isolated".into());
    }
    let cores = Reflect::get(&js_sys::global(), &"navigator".into())
        .and_then(|n| Reflect::get(&n, &"hardwareConcurrency".into()))
        .ok()
        .and_then(|c| c.as_f64())
        .unwrap_or(1.0) as usize;
    // A cap in the worker's name (`kit::worker`: benchmarks compare thread counts on one build).
    let name = global("name").as_string().unwrap_or_default();
    let cap = name.split(',').find_map(|p| p.strip_prefix("threads=")?.parse::<usize>().ok());
    match (cores.min(MAX_THREADS), cap) {
        (_, Some(0 | 1)) => Err("capped by this browser's storage (attention-live:threads)".into()),
        (0 | 1, _) => Err("this machine reports one core".into()),
        (n, cap) => Ok(cap.map_or(n, |c| n.min(c))),
    }
}

fn js_text(e: JsValue) -> String {
    e.as_string()
        .or_else(|| e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())))
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Starts `n` Web Workers on this module and memory and waits until each has instantiated it;
/// then gives each the hand-made pool's loop, or builds rayon's pool on them.
async fn spawn(n: usize, rayon: bool) -> Result<(), String> {
    let glue = global("glueUrl");
    if glue.as_string().is_none() {
        return Err("the worker's loader did not keep its script for the pool".into());
    }
    let opts = BlobPropertyBag::new();
    opts.set_type("text/javascript");
    let blob = Blob::new_with_str_sequence_and_options(&Array::of1(&THREAD_SCRIPT.into()), &opts).map_err(js_text)?;
    let script = Url::create_object_url_with_blob(&blob).map_err(js_text)?;
    let init = js_sys::Object::new();
    for (k, v) in [("glue", glue), ("module", wasm_bindgen::module()), ("memory", wasm_bindgen::memory())] {
        let _ = Reflect::set(&init, &k.into(), &v);
    }
    let mut workers = Vec::with_capacity(n);
    let started = Array::new();
    for _ in 0..n {
        let worker = Worker::new(&script).map_err(js_text)?;
        // Resolved by the thread's "started", rejected by an error before it.
        started.push(&Promise::new(&mut |resolve, reject| {
            let ok = Closure::once_into_js(move |_: MessageEvent| {
                let _ = resolve.call0(&JsValue::NULL);
            });
            let failed = Closure::once_into_js(move |e: JsValue| {
                let message = Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string());
                let _ = reject.call1(&JsValue::NULL, &message.unwrap_or_else(|| "a thread failed".into()).into());
            });
            worker.set_onmessage(Some(ok.unchecked_ref()));
            worker.set_onerror(Some(failed.unchecked_ref()));
        }));
        worker.post_message(&init).map_err(js_text)?;
        workers.push(worker);
    }
    let timeout = Promise::new(&mut |_, reject| {
        let give_up = Closure::once_into_js(move || {
            let _ = reject.call1(&JsValue::NULL, &"they did not start within 10 s".into());
        });
        let _ = js_sys::global()
            .unchecked_into::<web_sys::WorkerGlobalScope>()
            .set_timeout_with_callback_and_timeout_and_arguments_0(give_up.unchecked_ref(), 10_000);
    });
    let all = Promise::race(&Array::of2(&Promise::all(&started), &timeout));
    if let Err(e) = wasm_bindgen_futures::JsFuture::from(all).await {
        workers.iter().for_each(Worker::terminate);
        return Err(format!("the pool's threads failed to start: {}", js_text(e)));
    }
    if !rayon {
        for worker in &workers {
            worker.post_message(&0u32.into()).map_err(js_text)?;
        }
        WORKERS.with(|w| *w.borrow_mut() = workers);
        return Ok(());
    }
    let next = std::cell::Cell::new(0);
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .spawn_handler(|thread| {
            let worker = workers.get(next.replace(next.get() + 1)).ok_or_else(|| std::io::Error::other("no thread"))?;
            let run: Box<dyn FnOnce() + Send> = Box::new(move || thread.run());
            let ptr = Box::into_raw(Box::new(run)) as u32;
            worker.post_message(&ptr.into()).map_err(|e| std::io::Error::other(js_text(e)))
        })
        .build_global()
        .map_err(|e| format!("the thread pool did not start ({e})"))?;
    WORKERS.with(|w| *w.borrow_mut() = workers);
    Ok(())
}
