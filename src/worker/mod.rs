//! The GPT-2 Web Worker: receives `Request`s from the page, runs them on a `Session` and posts
//! `Reply`s back. Every message is `{json: string, data?: Float32Array}`.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, ReadableStreamDefaultReader, Response};

use crate::gpt2::session::{Reply, Request, Session};

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(reply: &Reply, data: Option<Vec<f32>>) {
    let msg = Object::new();
    let json = serde_json::to_string(reply).unwrap_or_else(|e| format!(r#"{{"type":"error","id":null,"message":"{e}"}}"#));
    let _ = Reflect::set(&msg, &"json".into(), &json.into());
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
    e.as_string().or_else(|| e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message()))).unwrap_or_else(|| format!("{e:?}"))
}

async fn fetch(url: &str) -> Result<Response, String> {
    let resp: Response = JsFuture::from(scope().fetch_with_str(url)).await.map_err(|e| format!("could not fetch {url}: {}", js_err(e)))?.unchecked_into();
    if !resp.ok() {
        return Err(format!("{url} answered HTTP {} {}", resp.status(), resp.status_text()));
    }
    Ok(resp)
}

/// Reads a response body chunk by chunk, posting progress about every 1 MB.
async fn read_with_progress(resp: Response) -> Result<Vec<u8>, String> {
    let total = resp.headers().get("content-length").ok().flatten().and_then(|s| s.parse::<u64>().ok());
    let body = resp.body().ok_or("the response has no body")?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut bytes = Vec::with_capacity(total.unwrap_or(0) as usize);
    let mut last = 0usize;
    post(&Reply::Progress { loaded: 0, total }, None);
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(|e| format!("the download broke off: {}", js_err(e)))?;
        if Reflect::get(&chunk, &"done".into()).ok().and_then(|v| v.as_bool()).unwrap_or(true) {
            break;
        }
        let value: Uint8Array = Reflect::get(&chunk, &"value".into()).map_err(js_err)?.unchecked_into();
        let start = bytes.len();
        bytes.resize(start + value.length() as usize, 0);
        value.copy_to(&mut bytes[start..]);
        if bytes.len() - last >= 1 << 20 {
            last = bytes.len();
            post(&Reply::Progress { loaded: last as u64, total }, None);
        }
    }
    post(&Reply::Progress { loaded: bytes.len() as u64, total }, None);
    Ok(bytes)
}

async fn load(name: &str, base: &str) -> Result<Session, String> {
    let config = JsFuture::from(fetch(&format!("{base}config.json")).await?.text().map_err(js_err)?).await.map_err(js_err)?.as_string().unwrap_or_default();
    let bytes = read_with_progress(fetch(&format!("{base}model.safetensors")).await?).await?;
    Session::new(&config, &bytes).map_err(|e| format!("{name}: {e}"))
}

async fn handle(state: Rc<RefCell<Option<Session>>>, req: Request) {
    match req {
        Request::Load { name, base } => match load(&name, &base).await {
            Ok(s) => {
                post(&s.loaded(&name), None);
                *state.borrow_mut() = Some(s);
            }
            Err(e) => error(None, e),
        },
        Request::Analyze(q) => {
            let s = state.borrow();
            let Some(s) = s.as_ref() else { return error(Some(q.id), "no model is loaded yet".into()) };
            match s.analyze(&q) {
                Ok((a, w)) => post(&Reply::Analysis(a), Some(w)),
                Err(e) => error(Some(q.id), e.to_string()),
            }
        }
        Request::Generate { query, steps } => {
            let s = state.borrow();
            let Some(s) = s.as_ref() else { return error(Some(query.id), "no model is loaded yet".into()) };
            let mut n = 0;
            let r = s.generate(&query, steps, |token, text| {
                n += 1;
                post(&Reply::Generated { id: query.id, token, text, done: n == steps }, None);
            });
            if let Err(e) = r {
                error(Some(query.id), e.to_string());
            }
        }
    }
}

pub fn start() {
    let state: Rc<RefCell<Option<Session>>> = Rc::new(RefCell::new(None));
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let text = Reflect::get(&ev.data(), &"json".into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
        match serde_json::from_str::<Request>(&text) {
            Ok(req) => wasm_bindgen_futures::spawn_local(handle(state.clone(), req)),
            Err(e) => error(None, format!("the worker could not read a request: {e}")),
        }
    });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    post(&Reply::Ready, None);
}
