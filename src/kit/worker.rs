//! The page's side of the compute worker (`crate::worker`, speaking `session::protocol`): the one
//! place that starts it, talks to it and ends it.
//!
//! A view makes a [`ComputeWorker`] with the function that hears its [`Event`]s (given the
//! handle too, to answer them) and sends it typed [`Request`]s. The client starts the worker on
//! the first request (or on `start`), keeps requests until the worker says it is listening,
//! gives each request that carries an id a fresh one, decodes the replies (the attention buffer
//! included), measures download speed, and ends the worker when the view goes away. A worker
//! that dies (a panic, a script error) is reported as [`Event::Died`]; the next request starts
//! a fresh one, which knows nothing of the old one's model or backend: a view sends its setup
//! on each [`Event::Ready`] and loads its model again.

use std::rc::Rc;

use js_sys::{Float32Array, Function, Object, Reflect};
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker};

use super::browser::now_ms;
use crate::session::protocol::{Analysis, Attention, Phase, Reply, Request, Translation, Vision};
use crate::train::HeadSnapshot;

/// The worker's script (Trunk builds the `gpt2-worker` binary with a loader shim of this name).
const SCRIPT: &str = "/gpt2-worker_loader.js";
/// Its threaded build's (scripts/build_threads.sh): the pool's threads where the page is
/// cross-origin isolated, one thread elsewhere, fused multiply-adds on any number.
const THREADED_SCRIPT: &str = "/gpt2-worker-mt_loader.js";

thread_local! {
    /// The threaded build failed to start once: from then on the single-threaded one runs.
    static THREADED_FAILED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The script to start: the threaded build where the browser has relaxed SIMD (that build fuses
/// its multiply-adds), makes a shared memory (its module imports one) and it has not failed
/// here; else the single-threaded one. Isolation is not asked for: without it, a shared memory
/// can still be made, only not sent to other threads, so the threaded build runs on one thread
/// (`worker::pool` says why), and the first visit, which the service worker does not yet
/// isolate, fuses its multiply-adds too.
fn script() -> &'static str {
    if relaxed_simd() && shared_memory() && !THREADED_FAILED.with(|f| f.get()) {
        THREADED_SCRIPT
    } else {
        SCRIPT
    }
}

/// Whether this browser makes a shared WebAssembly memory here (with or without isolation).
fn shared_memory() -> bool {
    let desc = Object::new();
    for (k, v) in [("initial", JsValue::from(1)), ("maximum", JsValue::from(1)), ("shared", JsValue::TRUE)] {
        let _ = Reflect::set(&desc, &k.into(), &v);
    }
    js_sys::WebAssembly::Memory::new(&desc).is_ok()
}

/// Whether this browser compiles relaxed SIMD: a module of one function using
/// `i8x16.relaxed_swizzle` (opcode 0xfd 0x100), which a browser without it refuses to validate.
fn relaxed_simd() -> bool {
    const MODULE: [u8; 36] = [
        0, 97, 115, 109, 1, 0, 0, 0, // "\0asm", version 1
        1, 5, 1, 96, 0, 1, 123, // types: one, () -> v128
        3, 2, 1, 0, // functions: one, of type 0
        10, 15, 1, 13, 0, // code: one body of 13 bytes, no locals
        65, 1, 253, 15, // i32.const 1; i8x16.splat
        65, 2, 253, 15, // i32.const 2; i8x16.splat
        253, 128, 2, 11, // i8x16.relaxed_swizzle; end
    ];
    js_sys::WebAssembly::validate(&js_sys::Uint8Array::from(&MODULE[..]).into()).unwrap_or(false)
}

/// The worker's name, from hooks in the reader's storage for benchmarks and tests that compare
/// runs on the same build: `threads=N` caps its thread pool (`attention-live:threads`), and
/// `pool=rayon` uses rayon's pool instead of the hand-made one (`attention-live:pool`).
fn worker_options() -> web_sys::WorkerOptions {
    let opts = web_sys::WorkerOptions::new();
    let storage = web_sys::window().and_then(|w| w.local_storage().ok().flatten());
    let item = |key: &str| storage.as_ref().and_then(|s| s.get_item(key).ok().flatten());
    let mut name = Vec::new();
    if let Some(n) = item("attention-live:threads").and_then(|v| v.trim().parse::<u32>().ok()) {
        name.push(format!("threads={n}"));
    }
    if item("attention-live:pool").as_deref() == Some("rayon") {
        name.push("pool=rayon".to_string());
    }
    opts.set_name(&name.join(","));
    opts
}

/// What a view hears from its worker.
#[derive(Debug)]
pub enum Event {
    /// A fresh worker is listening (the first, or one started after a death or a restart): it
    /// holds no model and the automatic backend. Requests sent from here go out before those
    /// that waited for it.
    Ready,
    /// A model is loading.
    Progress(Progress),
    /// An analysis with its attention weights, decoded.
    Analysis(Analysis, Attention),
    /// A translation with its three attentions, decoded.
    Translation(Box<Translation>),
    /// A picture's prediction with the picture seen and its attentions, decoded.
    Vision(Box<Vision>),
    /// The training lab's heads at a step, their attention decoded.
    Snapshot(u64, HeadSnapshot),
    /// The trained model as a GPT-2 checkpoint: `config.json` and the safetensors bytes.
    Checkpoint { id: u64, config_json: String, safetensors: Vec<u8> },
    /// Any other reply. (A reply the page cannot read arrives as `Reply::Error { id: None }`.)
    Reply(Reply),
    /// The worker stopped (it panicked, its script failed, or the browser could not start it):
    /// why, in words. Requests still waiting for it are dropped.
    Died(String),
}

/// Loading progress: `loaded` of `total` bytes in the phases that count bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub phase: Phase,
    pub loaded: u64,
    pub total: Option<u64>,
    /// Bytes a second since the phase began (once it has run long enough to say).
    pub rate: Option<f64>,
    /// The load it reports on (`Request::Load::load`).
    pub load: u64,
}

/// A started worker.
struct Running {
    worker: Worker,
    /// The worker has said `Ready`: requests go straight to it.
    ready: bool,
    /// Requests waiting for `Ready` (the worker drops messages that come before it listens).
    waiting: Vec<(String, Option<JsValue>)>,
    /// It is the threaded build.
    threaded: bool,
}

struct State {
    running: Option<Running>,
    next_id: u64,
    /// The phase being reported and when it began (for the rate).
    phase: Option<(Phase, f64)>,
    on_event: Rc<dyn Fn(ComputeWorker, Event)>,
    /// The message and error handlers, made once and given to every worker started.
    on_message: Option<Closure<dyn FnMut(MessageEvent)>>,
    on_error: Option<Closure<dyn FnMut(JsValue)>>,
}

/// A handle on the view's compute worker (`Copy`: move it into every closure that sends).
#[derive(Clone, Copy)]
pub struct ComputeWorker(StoredValue<State, LocalStorage>);

impl ComputeWorker {
    /// A client whose events go to `on_event`; the worker starts with the first request (or
    /// `start`) and ends when the calling view is cleaned up.
    pub fn new(on_event: impl Fn(ComputeWorker, Event) + 'static) -> ComputeWorker {
        let this = ComputeWorker(StoredValue::new_local(State {
            running: None,
            next_id: 0,
            phase: None,
            on_event: Rc::new(on_event),
            on_message: None,
            on_error: None,
        }));
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| this.receive(ev.data()));
        let on_error = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
            let message = Reflect::get(&ev, &"message".into()).ok().and_then(|m| m.as_string()).unwrap_or_default();
            this.died(if message.is_empty() {
                "the compute worker could not start or stopped with an error".into()
            } else {
                format!("the compute worker stopped: {message}")
            });
        });
        this.0.update_value(|s| {
            s.on_message = Some(on_message);
            s.on_error = Some(on_error);
        });
        on_cleanup(move || {
            this.terminate();
            // The handlers go with the view (nothing can call them once the worker is gone).
            this.0.try_update_value(|s| {
                s.on_message = None;
                s.on_error = None;
            });
        });
        this
    }

    /// Starts a fresh worker now, ending the one running (how a download is cancelled).
    pub fn start(self) {
        self.terminate();
        // `try_`: a view's handler may still run after the view is gone; then nothing starts.
        let hooks = self.0.try_with_value(|s| {
            Some((
                s.on_message.as_ref()?.as_ref().unchecked_ref::<Function>().clone(),
                s.on_error.as_ref()?.as_ref().unchecked_ref::<Function>().clone(),
            ))
        });
        let Some(Some((on_message, on_error))) = hooks else { return };
        let script = script();
        match Worker::new_with_options(script, &worker_options()) {
            Ok(worker) => {
                worker.set_onmessage(Some(&on_message));
                worker.set_onerror(Some(&on_error));
                let threaded = script == THREADED_SCRIPT;
                self.0.try_update_value(|s| {
                    s.running = Some(Running { worker, ready: false, waiting: Vec::new(), threaded });
                    s.phase = None;
                });
            }
            Err(_) => self.emit(Event::Died("this browser could not start a Web Worker".into())),
        }
    }

    /// Ends the worker, and whatever it was computing; the next request starts a fresh one.
    pub fn terminate(self) {
        if let Some(r) = self.0.try_update_value(|s| s.running.take()).flatten() {
            r.worker.terminate();
        }
    }

    /// Sends `req`, starting the worker if none runs. A request that carries an id gets a fresh
    /// one, returned: its replies carry it.
    pub fn send(self, req: Request) -> Option<u64> {
        self.send_with(req, None)
    }

    /// Sends `req` with `data` (an ArrayBuffer, transferred: the page's copy is emptied).
    pub fn send_with(self, mut req: Request, data: Option<JsValue>) -> Option<u64> {
        let id = req.id().map(|_| {
            let id = self.0.try_update_value(|s| {
                s.next_id += 1;
                s.next_id
            });
            id.unwrap_or_default()
        });
        if let Some(id) = id {
            req.set_id(id);
        }
        let json = match req.encode() {
            Ok(json) => json,
            Err(message) => {
                self.emit(Event::Reply(Reply::Error { id, message, load: 0 }));
                return id;
            }
        };
        if self.0.try_with_value(|s| s.running.is_none()) == Some(true) {
            self.start();
        }
        let now = self.0.try_update_value(|s| match s.running.as_mut() {
            Some(r) if r.ready => Some((r.worker.clone(), json, data)),
            Some(r) => {
                r.waiting.push((json, data));
                None
            }
            None => None,
        });
        if let Some(Some((worker, json, data))) = now {
            post(&worker, &json, data.as_ref());
        }
        id
    }

    fn emit(self, event: Event) {
        if let Some(f) = self.0.try_with_value(|s| s.on_event.clone()) {
            f(self, event);
        }
    }

    fn died(self, why: String) {
        // The threaded build failed before it listened (its files missing on a development
        // server, a browser that refuses its memory): the single-threaded one takes its requests.
        let retry = self.0.try_update_value(|s| match s.running.take() {
            Some(r) if r.threaded && !r.ready => {
                r.worker.terminate();
                Some(r.waiting)
            }
            other => {
                s.running = other;
                None
            }
        });
        if let Some(Some(waiting)) = retry {
            web_sys::console::warn_1(&format!("The threaded compute worker failed ({why}); one thread is used").into());
            THREADED_FAILED.with(|f| f.set(true));
            self.start();
            self.0.try_update_value(|s| s.running.as_mut().map(|r| r.waiting = waiting));
            return;
        }
        self.terminate();
        self.emit(Event::Died(why));
    }

    /// One message from the worker.
    fn receive(self, msg: JsValue) {
        let json = Reflect::get(&msg, &"json".into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
        let reply = match Reply::decode(&json) {
            Ok(r) => r,
            Err(message) => return self.emit(Event::Reply(Reply::Error { id: None, message, load: 0 })),
        };
        match reply {
            Reply::Ready => {
                let waiting = self.0.try_update_value(|s| {
                    s.running.as_mut().map(|r| {
                        r.ready = true;
                        (r.worker.clone(), std::mem::take(&mut r.waiting))
                    })
                });
                // The view's own setup first, then what waited for the worker.
                self.emit(Event::Ready);
                if let Some(Some((worker, waiting))) = waiting {
                    for (json, data) in waiting {
                        post(&worker, &json, data.as_ref());
                    }
                }
            }
            Reply::Progress { phase, loaded, total, load } => {
                let now = now_ms();
                let began = self
                    .0
                    .try_update_value(|s| match s.phase {
                        Some((p, t)) if p == phase => t,
                        _ => {
                            s.phase = Some((phase, now));
                            now
                        }
                    })
                    .unwrap_or(now);
                let secs = (now - began) / 1e3;
                let rate = (secs > 0.2).then(|| loaded as f64 / secs);
                self.emit(Event::Progress(Progress { phase, loaded, total, rate, load }));
            }
            Reply::Analysis(a) => {
                let data = floats(&msg);
                match Attention::decode(a.attention.clone(), data) {
                    Ok(w) => self.emit(Event::Analysis(a, w)),
                    Err(message) => self.emit(Event::Reply(Reply::Error { id: Some(a.id), message, load: 0 })),
                }
            }
            Reply::Translation(t) => {
                let data = floats(&msg);
                let id = t.id;
                match Translation::from_parts(t, data) {
                    Ok(t) => self.emit(Event::Translation(Box::new(t))),
                    Err(message) => self.emit(Event::Reply(Reply::Error { id: Some(id), message, load: 0 })),
                }
            }
            Reply::Vision(v) => {
                let data = floats(&msg);
                let id = v.id;
                match Vision::from_parts(v, data) {
                    Ok(v) => self.emit(Event::Vision(Box::new(v))),
                    Err(message) => self.emit(Event::Reply(Reply::Error { id: Some(id), message, load: 0 })),
                }
            }
            Reply::TrainSnapshot { id, mut snapshot } => {
                snapshot.attention = floats(&msg);
                self.emit(Event::Snapshot(id, snapshot))
            }
            Reply::TrainCheckpoint { id, config_json } => {
                let safetensors = Reflect::get(&msg, &"data".into())
                    .ok()
                    .and_then(|d| d.dyn_into::<js_sys::Uint8Array>().ok())
                    .map(|d| d.to_vec())
                    .unwrap_or_default();
                self.emit(Event::Checkpoint { id, config_json, safetensors })
            }
            Reply::Crashed { message } => self.died(format!("the compute worker stopped: {message}")),
            other => self.emit(Event::Reply(other)),
        }
    }
}

/// The floats a message carries beside its JSON (`data`: attention weights), none if it has none.
fn floats(msg: &JsValue) -> Vec<f32> {
    Reflect::get(msg, &"data".into())
        .ok()
        .and_then(|d| d.dyn_into::<Float32Array>().ok())
        .map(|d| d.to_vec())
        .unwrap_or_default()
}

/// Posts one message: `{json, data?}`, `data` transferred.
fn post(worker: &Worker, json: &str, data: Option<&JsValue>) {
    let msg = Object::new();
    let _ = Reflect::set(&msg, &"json".into(), &json.into());
    let _ = match data {
        Some(d) => {
            let _ = Reflect::set(&msg, &"data".into(), d);
            worker.post_message_with_transfer(&msg, &js_sys::Array::of1(d))
        }
        None => worker.post_message(&msg),
    };
}
