//! What the view's parts share, provided in context: the parameters, the model's status, the
//! worker's latest answers and the selection, as signals.

use std::sync::Arc;

use leptos::prelude::*;

use super::super::status::{next, Asked, Event, Status};
use super::super::{fit_selection, Params};
use super::worker::Link;
use crate::gpt2::protocol::{self, Analysis, Attention};
use crate::kit::browser::now_ms;
use crate::kit::DemoCtx;

/// An analysis and its attention weights.
#[derive(Debug, PartialEq)]
pub struct Answer {
    pub a: Analysis,
    pub w: Attention,
}

impl Answer {
    /// Tokens in the prompt (as the model saw it).
    pub fn t(&self) -> usize {
        self.a.tokens.len()
    }
    /// Weight from query i to key j in (layer, head), if that layer was sent.
    pub fn weight(&self, layer: usize, head: usize, i: usize, j: usize) -> Option<f32> {
        self.w.weight(layer, head, i, j)
    }
}

/// What runs the model, as the worker last said: the backend and the adapter's name, or why
/// the CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    pub name: protocol::Backend,
    pub detail: String,
}

/// The selected (layer, head, query token), each inside the loaded model and prompt.
pub type Selection = Option<(usize, usize, usize)>;

#[derive(Clone, Copy)]
pub struct Store {
    pub ctx: DemoCtx,
    pub params: Memo<Params>,
    pub status: RwSignal<Status>,
    /// The worker is listening (requests sent before would be lost).
    pub listening: RwSignal<bool>,
    pub backend: RwSignal<Option<Backend>>,
    /// Why a GPU failure moved the model to the CPU, until the backend is chosen again.
    pub backend_notice: RwSignal<Option<String>>,
    /// The latest answers for the prompt and for the comparison prompt.
    pub result: RwSignal<Option<Arc<Answer>>>,
    pub result_b: RwSignal<Option<Arc<Answer>>>,
    pub asked: StoredValue<Asked>,
    /// The prompt a generation in progress started from.
    pub generating: RwSignal<Option<String>>,
    /// When the last generation started and how long it took (for the benchmark).
    pub gen_start: StoredValue<f64>,
    pub gen_ms: RwSignal<f64>,
    /// A layer or head moved to fit a newly loaded model: (what the note says, where it moved to).
    pub moved: RwSignal<Option<(String, (usize, usize))>>,
    pub sel: Memo<Selection>,
    /// The knocked-out heads that parse.
    pub knocked: Memo<Vec<(usize, usize)>>,
    pub worker: Link,
}

impl Store {
    pub fn new(ctx: DemoCtx, worker: Link) -> Store {
        let params = ctx.params::<Params>();
        let status = RwSignal::new(Status::Starting);
        let result = RwSignal::new(None::<Arc<Answer>>);
        // Layer, head and token as the loaded model allows (a link may ask for more).
        let sel = Memo::new(move |_| {
            let (nl, nh) = status.with(Status::dims)?;
            let t = result.with(|r| r.as_ref().map(|r| r.t()))?;
            let f = params.with(|p| fit_selection(p.layer, p.head, p.token, nl, nh, t));
            Some((f.layer, f.head, f.token))
        });
        Store {
            ctx,
            params,
            status,
            listening: RwSignal::new(false),
            backend: RwSignal::new(None),
            backend_notice: RwSignal::new(None),
            result,
            result_b: RwSignal::new(None),
            asked: StoredValue::new(Asked::default()),
            generating: RwSignal::new(None),
            gen_start: StoredValue::new(0.0),
            gen_ms: RwSignal::new(0.0),
            moved: RwSignal::new(None),
            sel,
            knocked: Memo::new(move |_| params.with(Params::knocked_out)),
            worker,
        }
    }

    /// Moves the status on by `event` (subscribers hear only of a change).
    pub fn advance(self, event: Event) {
        let now = next(&self.status.get_untracked(), event, now_ms());
        if self.status.with_untracked(|s| *s != now) {
            self.status.set(now);
        }
    }

    /// Changes the parameters (the link follows).
    pub fn set(self, change: impl FnOnce(&mut Params)) {
        self.ctx.set_params::<Params>(change);
    }
}

/// The store the demo's view provided.
pub fn store() -> Store {
    expect_context::<Store>()
}
