//! The conversation with the worker: what each reply does to the store, and the requests the
//! page sends as the parameters and the model's status change.

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::super::status::{plan_load, Event, Plan, Prompt, Status};
use super::super::{query, Model};
use super::store::{Answer, Backend, Store};
use super::worker::{read_files, Incoming};
use crate::gpt2::protocol::{Attention, Reply, Request};
use crate::kit::browser::{local_get, now_ms};

/// Tests set this localStorage key to "1" to make the next GPU run fail on purpose.
const GPU_FAULT_KEY: &str = "attention-live:gpu-fault";

pub fn on_reply(s: Store, msg: Incoming) {
    let (reply, buffer) = match msg {
        Ok(m) => m,
        Err(e) => return s.advance(Event::Failed(e)),
    };
    s.advance(Event::Reply(&reply));
    match reply {
        Reply::Ready => s.listening.set(true),
        Reply::Analysis(a) => {
            let target = match s.asked.get_value().route(a.id) {
                Some(Prompt::Main) => s.result,
                Some(Prompt::Compare) => s.result_b,
                None => return, // a stale answer
            };
            let w = buffer.dyn_into::<js_sys::Float32Array>().map(|d| d.to_vec()).unwrap_or_default();
            match Attention::decode(a.attention.clone(), w) {
                Ok(w) => target.set(Some(Arc::new(Answer { a, w }))),
                Err(e) => s.ctx.error.set(Some(e)),
            }
        }
        Reply::Generated { text, done, .. } => {
            if let Some(base) = s.generating.get_untracked() {
                s.set(|p| p.prompt = format!("{base}{text}"));
                if done {
                    generation_ended(s);
                }
            }
        }
        Reply::Stopped { .. } => generation_ended(s),
        Reply::Backend { backend: name, detail, notice } => {
            s.backend.set(Some(Backend { name, detail }));
            if notice.is_some() {
                s.backend_notice.set(notice);
            }
        }
        Reply::Error { id: Some(_), message } => {
            s.generating.set(None);
            s.ctx.error.set(Some(message));
        }
        // The status took these; the benchmark and Q/K/V replies are for other demos' workers.
        Reply::Progress { .. }
        | Reply::Loaded { .. }
        | Reply::NotCached { .. }
        | Reply::Error { id: None, .. }
        | Reply::Crashed { .. } => {}
        Reply::AttentionBench { .. } | Reply::HeadQkv(_) => {}
    }
}

fn generation_ended(s: Store) {
    s.gen_ms.set(now_ms() - s.gen_start.get_value());
    s.generating.set(None);
}

/// Loads the chosen model: from the browser's storage only when `only_cached` (else the
/// reader is asked), from the network on the reader's go.
pub fn load(s: Store, only_cached: bool) {
    s.result.set(None);
    s.moved.set(None);
    let (model, base) = s.params.with_untracked(|p| (p.model, p.base.clone()));
    let plan = s.status.with_untracked(|st| plan_load(model, &base, only_cached, st));
    s.advance(Event::Planned(&plan));
    if let Plan::Send(req) = &plan {
        s.worker.send(req);
    }
}

/// Cancels a download: the worker is restarted.
pub fn cancel(s: Store) {
    restart(s);
    s.advance(Event::Cancelled);
}

pub fn restart(s: Store) {
    s.listening.set(false);
    if let Err(e) = s.worker.restart() {
        s.advance(Event::Failed(e));
    }
}

/// Loads the reader's picked or dropped files.
pub fn load_files(s: Store, files: Option<web_sys::FileList>) {
    let Some(files) = files else { return };
    leptos::task::spawn_local(async move {
        match read_files(files).await {
            Ok((config, bytes)) => {
                s.advance(Event::FilesSent);
                s.set(|p| p.model = Model::File);
                s.worker.send_with(&Request::LoadBytes { name: Model::File.key().into(), config }, Some(&bytes));
            }
            Err(e) => s.advance(Event::Failed(e)),
        }
    });
}

pub fn generate(s: Store) {
    if s.generating.get_untracked().is_some() || !s.status.with_untracked(Status::is_ready) {
        return;
    }
    let q = s.params.with_untracked(|p| query(p, 0));
    s.generating.set(Some(q.prompt.clone()));
    s.gen_start.set_value(now_ms());
    s.worker.send(&Request::Generate { query: q, steps: 20 });
}

/// The requests that follow the parameters: the backend, the model, and the analyses.
pub fn follow(s: Store) {
    // The backend choice goes to the worker first (it applies it to every model it loads),
    // then again whenever the reader changes it.
    let choice = Memo::new(move |_| s.params.with(|p| p.backend.choice()));
    Effect::new(move |_| {
        let choice = choice.get();
        if s.listening.get() {
            s.backend.set(None);
            s.backend_notice.set(None);
            let fault = local_get(GPU_FAULT_KEY).as_deref() == Some("1");
            s.worker.send(&Request::Backend { choice, fault });
        }
    });
    // Load the chosen model (again when the choice or its URL changes).
    let source = Memo::new(move |_| s.params.with(|p| (p.model, p.source())));
    Effect::new(move |_| {
        source.track();
        if s.listening.get() {
            load(s, true);
        }
    });
    // Ask for an analysis whenever the query changes and a model is ready (and for the
    // comparison prompt, with the same settings, when there is one).
    let q = Memo::new(move |_| s.params.with(|p| query(p, 0)));
    let compare = Memo::new(move |_| s.params.with(|p| p.compare.clone()));
    // Analyses wait until the worker says which backend runs them, and run again when that
    // changes (the answers are the same; the compute time is not). While tokens stream in, the
    // prompt changes with each one; analysing every step would put a whole forward pass between
    // tokens, so the analysis waits for the end.
    let backend_name = Memo::new(move |_| s.backend.with(|b| b.as_ref().map(|b| b.name)));
    let can_ask = move || {
        s.status.with(Status::is_ready) && s.generating.with(Option::is_none) && backend_name.with(Option::is_some)
    };
    Effect::new(move |_| {
        let ready = can_ask();
        let mut q = q.get();
        if ready {
            q.id = s.asked.write_value().ask(Prompt::Main);
            s.worker.send(&Request::Analyze(q));
        }
    });
    Effect::new(move |_| {
        let ready = can_ask();
        let mut q = q.get();
        let b = compare.get();
        if !ready || b.trim().is_empty() {
            return s.result_b.set(None);
        }
        q.id = s.asked.write_value().ask(Prompt::Compare);
        q.prompt = b;
        s.worker.send(&Request::Analyze(q));
    });
}

/// Publishes the outputs for "Download data".
pub fn publish(s: Store) {
    Effect::new(move |_| {
        let out = s.result.with(|r| {
            r.as_ref().map(|r| {
                let (l, h, _) = s.sel.get_untracked().unwrap_or((0, 0, 0));
                let t = r.t();
                let heat: Vec<Vec<f32>> =
                    (0..t).map(|i| (0..t).map(|j| r.weight(l, h, i, j).unwrap_or(f32::NAN)).collect()).collect();
                serde_json::json!({ "analysis": r.a, "layer": l, "head": h, "attention": heat })
            })
        });
        s.ctx.computed.set(out);
    });
}
