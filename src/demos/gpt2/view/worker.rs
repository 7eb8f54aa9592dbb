//! The page's end of the GPT-2 Web Worker: starting (and restarting) it, sending requests and
//! handing its replies, decoded, to the view.

use js_sys::Reflect;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageEvent, Worker};

use crate::gpt2::protocol::{Reply, Request};

/// Sends a request to a compute worker (`worker::start`): JSON, plus `data` transferred.
fn post(worker: &Worker, req: &Request, data: Option<&JsValue>) {
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

/// A reply as the view receives it: decoded, with the buffer that travelled beside it (the
/// attention weights of an analysis), or why it could not be read.
pub type Incoming = Result<(Reply, JsValue), String>;

/// The handler of the worker's messages, kept alive while the view is.
type Handler = Closure<dyn FnMut(MessageEvent)>;

/// The worker, restartable (a restart is how a download is cancelled).
#[derive(Clone, Copy)]
pub struct Link {
    worker: StoredValue<Option<Worker>, LocalStorage>,
    handler: StoredValue<Option<Handler>, LocalStorage>,
}

impl Link {
    /// A link with no worker yet: [`Link::listen`], then [`Link::restart`].
    pub fn new() -> Link {
        let link = Link { worker: StoredValue::new_local(None), handler: StoredValue::new_local(None) };
        on_cleanup(move || {
            link.stop();
            link.handler.set_value(None);
        });
        link
    }

    /// Hands each reply of this and every later worker to `on_reply`.
    pub fn listen(self, mut on_reply: impl FnMut(Incoming) + 'static) {
        let handler = Handler::new(move |ev: MessageEvent| {
            let data = ev.data();
            let json = Reflect::get(&data, &"json".into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
            let buffer = Reflect::get(&data, &"data".into()).unwrap_or(JsValue::UNDEFINED);
            on_reply(match serde_json::from_str::<Reply>(&json) {
                Ok(r) => Ok((r, buffer)),
                Err(e) => Err(format!("unreadable reply from the worker: {e}")),
            });
        });
        self.handler.set_value(Some(handler));
    }

    /// (Re)starts the worker; `Err` when this browser cannot start one.
    pub fn restart(self) -> Result<(), String> {
        self.stop();
        let w = Worker::new("/gpt2-worker_loader.js").map_err(|_| "this browser could not start a Web Worker")?;
        self.handler.with_value(|h| {
            if let Some(h) = h {
                w.set_onmessage(Some(h.as_ref().unchecked_ref()))
            }
        });
        self.worker.set_value(Some(w));
        Ok(())
    }

    fn stop(self) {
        self.worker.with_value(|w| {
            if let Some(w) = w {
                w.terminate()
            }
        });
    }

    pub fn send(self, req: &Request) {
        self.send_with(req, None)
    }

    /// Sends `req` with `data` transferred beside it (a model's bytes).
    pub fn send_with(self, req: &Request, data: Option<&JsValue>) {
        self.worker.with_value(|w| {
            if let Some(w) = w {
                post(w, req, data)
            }
        })
    }
}

/// Reads a picked or dropped config.json + model.safetensors pair: (config text, model bytes).
pub async fn read_files(files: web_sys::FileList) -> Result<(String, JsValue), String> {
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
