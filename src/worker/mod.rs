//! The compute worker: receives `Request`s from the page, runs them on the loaded model's session
//! (`session::ModelSession`, any family) or the training lab's engine, and posts `Reply`s back
//! (`session::protocol`), or on the translation model (`session::translate`). Every message is
//! `{json: string, data?}`: the page sends local model files as an ArrayBuffer, and the worker
//! sends attention weights as a Float32Array (both transferred, not copied). `fetch` gets a
//! model's files (download, verify, cache), `side_file` the files beside them (a Llama-family
//! model's `tokenizer.json`, a Marian model's tokenizer); `dispatch` answers each request;
//! `train` runs the training lab in slices between the page's messages.

use std::rc::Rc;

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::session::protocol::{Reply, Request};

mod dispatch;
mod fetch;
#[cfg(feature = "threads")]
mod pool;
mod saved_run;
mod side_file;
mod train;

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

/// Posts a reply with bytes beside it (a checkpoint), transferred.
fn post_bytes(reply: &Reply, bytes: Vec<u8>) {
    let msg = Object::new();
    let _ = Reflect::set(&msg, &"json".into(), &reply.encode().into());
    let arr = js_sys::Uint8Array::from(&bytes[..]);
    let _ = Reflect::set(&msg, &"data".into(), &arr);
    let _ = scope().post_message_with_transfer(&msg, &js_sys::Array::of1(&arr.buffer()));
}

fn error(id: Option<u64>, message: String) {
    post(&Reply::Error { id, message, load: 0 }, None);
}

fn js_err(e: JsValue) -> String {
    e.as_string()
        .or_else(|| e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())))
        .unwrap_or_else(|| format!("{e:?}"))
}

/// A panic leaves the worker's memory in an unknown state: besides the console's report, the
/// page is told (`Reply::Crashed`), so it can say so and start a fresh worker.
fn report_panics() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        post(&Reply::Crashed { message: info.to_string() }, None);
    }));
}

/// A trap that is not a panic (running out of memory aborts with `unreachable`) inside an async
/// task surfaces as an unhandled rejection, or as an uncaught error, of a WebAssembly
/// `RuntimeError`: reported as a crash too, since the page otherwise hears nothing from a
/// worker that can no longer answer. Other stray rejections (a cancelled stream's) are not fatal.
fn report_traps() {
    let crashed = Closure::<dyn FnMut(JsValue)>::new(|ev: JsValue| {
        let field = |k: &str| Reflect::get(&ev, &k.into()).ok().filter(|v| !v.is_undefined() && !v.is_null());
        let Some(error) = field("reason").or_else(|| field("error")) else { return };
        let name = Reflect::get(&error, &"name".into()).ok().and_then(|n| n.as_string());
        if name.as_deref() == Some("RuntimeError") {
            post(&Reply::Crashed { message: format!("RuntimeError: {}", js_err(error)) }, None);
        }
    });
    let f: &js_sys::Function = crashed.as_ref().unchecked_ref();
    let _ = scope().add_event_listener_with_callback("unhandledrejection", f);
    let _ = scope().add_event_listener_with_callback("error", f);
    crashed.forget();
}

/// What the CPU kernels run on, for the backend line: "2 threads", or one (and why, where a
/// threaded pool failed; the README explains that a page not yet isolated runs one).
fn threads_detail() -> String {
    #[cfg(feature = "threads")]
    return pool::threads().describe();
    #[cfg(not(feature = "threads"))]
    "1 thread".to_string()
}

pub fn start() {
    // A thread of the pool runs the same module: it only works for the pool (`pool::pool_thread`).
    #[cfg(feature = "threads")]
    if pool::is_pool_thread() {
        return;
    }
    report_panics();
    report_traps();
    let state = Rc::new(dispatch::Worker::default());
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let text = Reflect::get(&ev.data(), &"json".into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
        match Request::decode(&text) {
            Ok(req) => {
                let data = Reflect::get(&ev.data(), &"data".into()).unwrap_or(JsValue::UNDEFINED);
                wasm_bindgen_futures::spawn_local(dispatch::handle(state.clone(), req, data))
            }
            Err(e) => error(None, e),
        }
    });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    wasm_bindgen_futures::spawn_local(async {
        // Requests wait for `Ready`, so kernels never run while the pool's threads are starting.
        #[cfg(feature = "threads")]
        pool::start().await;
        post(&Reply::Ready, None);
    });
}
