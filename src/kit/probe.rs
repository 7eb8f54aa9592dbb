//! A demo's questions to a model in a compute worker: the model the controls name is loaded
//! (bundled, or from this browser's Cache Storage), then a batch of requests is sent and their
//! answers are collected in order. A newer batch drops the answers of an older one. The demos
//! that read a real model's insides (low rank, RoPE, the KV cache, the reach of an instruction)
//! share it; the chapter "A real model, live" has its own, richer conversation.

use std::collections::HashMap;

use leptos::prelude::*;

use crate::kit::worker::{ComputeWorker, Event};
use crate::kit::DemoCtx;
use crate::session::manifest::Manifest;
use crate::session::protocol::{BackendChoice, Reply, Request};

/// Which model to load and what to ask it.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    /// The model's name (the demo's option key): a loaded model of the same name is kept.
    pub model: String,
    /// What the page says when `only_cached` and this browser does not keep it.
    pub missing: String,
    /// Its folder URL, ending in `/`.
    pub base: String,
    /// Sizes and hashes to check the files against, where the book pins them.
    pub expect: Option<Manifest>,
    /// Load only from this browser's Cache Storage (a hub model the reader loaded before): the
    /// probe says so instead of downloading.
    pub only_cached: bool,
    /// The questions, answered in this order.
    pub requests: Vec<Request>,
    /// Where the model runs (the demos that ask small questions: the CPU).
    pub backend: BackendChoice,
}

/// What a probe shows: the model being loaded or held, and the answers of the latest batch.
pub struct Probe<T: Send + Sync + 'static> {
    pub loaded: RwSignal<Option<String>>,
    pub loading: RwSignal<Option<String>>,
    /// The loaded model's (layers, heads).
    pub dims: RwSignal<Option<(usize, usize)>>,
    /// The answers, in the order asked, once every one has come.
    pub answers: RwSignal<Option<Vec<T>>>,
    /// The worker, for what a demo sends beside its questions (a Stop).
    pub worker: ComputeWorker,
}

impl<T: Send + Sync + 'static> Clone for Probe<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Send + Sync + 'static> Copy for Probe<T> {}

impl<T: Send + Sync + 'static> Probe<T> {
    /// The line a demo shows while it waits, or `None` once the answers are in.
    pub fn waiting(&self, ctx: DemoCtx, model: &str) -> Option<String> {
        if ctx.error.get().is_some() {
            return None;
        }
        if self.loading.get().is_some() || self.loaded.get().as_deref() != Some(model) {
            return Some("Loading the model in a Web Worker…".into());
        }
        self.answers.with(|a| a.is_none()).then(|| "Computing…".into())
    }

    /// Ends the demo's "layer" and "head" sliders at the loaded model's last layer and head, and
    /// moves a selection past them there ([`DemoCtx::limit_ints`]); `id` is the demo's.
    pub fn limit_layer_head(&self, ctx: DemoCtx, id: &'static str) {
        let dims = self.dims;
        let limits = move || {
            dims.get().map_or(Vec::new(), |(layers, heads)| {
                vec![("layer", layers.max(1) as i64 - 1), ("head", heads.max(1) as i64 - 1)]
            })
        };
        ctx.limit_ints(id, limits, DemoCtx::model_limit);
    }
}

/// Starts a worker (on the backend `ask()` names) and keeps it
/// answering `ask()` whenever that changes. `pick` reads an answer from the worker's events: its
/// request id and value.
pub fn probe<T: Clone + Send + Sync + 'static>(
    ctx: DemoCtx,
    ask: impl Fn() -> Option<Ask> + Send + Sync + 'static,
    pick: impl Fn(Event) -> Option<(u64, T)> + 'static,
) -> Probe<T> {
    let loaded = RwSignal::new(None::<String>);
    let loading = RwSignal::new(None::<String>);
    let dims = RwSignal::new(None::<(usize, usize)>);
    let answers = RwSignal::new(None::<Vec<T>>);
    // The ids of the latest batch, and the answers that have come for it.
    let asked = StoredValue::new_local(Vec::<u64>::new());
    let got = StoredValue::new_local(HashMap::<u64, T>::new());
    let missing = StoredValue::new(String::new());
    // The number of the latest load sent: a reply about an earlier one (the reader changed the
    // model while it loaded) is dropped, and the worker drops that load's model.
    let load_no = StoredValue::new(0u64);
    // The backend asked for, sent to every fresh worker and again when the controls change it.
    let backend = StoredValue::new(BackendChoice::Cpu);
    let worker = ComputeWorker::new(move |w, ev| match ev {
        Event::Ready => {
            w.send(Request::Backend { choice: backend.get_value(), fault: false });
        }
        Event::Reply(r) if r.load() != 0 && r.load() != load_no.get_value() => {}
        Event::Reply(Reply::Loaded { name, n_layer, n_head, .. }) => {
            loading.set(None);
            dims.set(Some((n_layer, n_head)));
            loaded.set(Some(name));
        }
        Event::Reply(Reply::NotCached { .. }) => {
            loading.set(None);
            ctx.error.set(Some(missing.get_value()));
        }
        Event::Reply(Reply::Error { message, .. }) => {
            loading.set(None);
            ctx.error.set(Some(message));
        }
        // The next change of a control starts a fresh worker and loads the model again.
        Event::Died(message) => {
            loading.update_untracked(|l| *l = None);
            loaded.update_untracked(|l| *l = None);
            ctx.error.set(Some(message));
        }
        ev => {
            let Some((id, value)) = pick(ev) else { return };
            let ids = asked.get_value();
            if !ids.contains(&id) {
                return; // an older batch's answer
            }
            got.update_value(|g| {
                g.insert(id, value);
            });
            let all = got.with_value(|g| ids.iter().map(|i| g.get(i).cloned()).collect::<Option<Vec<T>>>());
            if let Some(all) = all {
                ctx.error.set(None);
                answers.set(Some(all));
            }
        }
    });

    Effect::new(move |_| {
        let Some(a) = ask() else { return };
        if a.backend != backend.get_value() {
            backend.set_value(a.backend);
            worker.send(Request::Backend { choice: a.backend, fault: false });
        }
        if loaded.get().as_deref() == Some(a.model.as_str()) {
            got.update_value(HashMap::clear);
            answers.set(None);
            let ids = a.requests.into_iter().filter_map(|r| worker.send(r)).collect();
            asked.set_value(ids);
        } else if loading.get_untracked().as_deref() != Some(a.model.as_str()) {
            // What was asked of the model held before is no longer what the controls show.
            asked.set_value(Vec::new());
            got.update_value(HashMap::clear);
            answers.set(None);
            if loaded.get_untracked().is_some() {
                loaded.set(None);
            }
            dims.set(None);
            loading.set(Some(a.model.clone()));
            missing.set_value(a.missing);
            ctx.error.set(None);
            let (cache, only_cached) = (a.only_cached, a.only_cached);
            load_no.update_value(|n| *n += 1);
            let load = load_no.get_value();
            worker.send(Request::Load { name: a.model, base: a.base, expect: a.expect, cache, only_cached, load });
        }
    });
    Probe { loaded, loading, dims, answers, worker }
}
