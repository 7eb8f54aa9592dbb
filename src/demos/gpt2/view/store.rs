//! What the view's parts share, provided in context: the parameters, the model's status, the
//! worker's latest answers and the selection, as signals. The comparison's second model has a
//! store of its own, provided to its side's parts (`side_b`): the same parts draw either.

use std::sync::Arc;

use leptos::prelude::*;

use super::super::compare::{matching_token, side_b_params, side_b_selection};
use super::super::continuation::Continuation;
use super::super::status::{next, Asked, Event, Loads, Prompt, Status};
use super::super::{fit_selection, Fit, ModelB, Params};
use crate::session::protocol::{self, Analysis, Attention};
use crate::kit::worker::{ComputeWorker, Event as WorkerEvent};
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

/// The second model of a comparison, as the first side sees it: none (or none that will load
/// without the reader: failed, or waiting for a download or files), loading, or loaded with its
/// (layers, heads).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Peer {
    None,
    Loading,
    Ready(usize, usize),
}

impl Peer {
    /// Where the second side's status puts it.
    pub fn of(status: &Status) -> Peer {
        match status {
            Status::Starting | Status::Loading { .. } => Peer::Loading,
            Status::Ready { n_layer, n_head, .. } => Peer::Ready(*n_layer, *n_head),
            Status::NotCached { .. } | Status::NeedFiles | Status::NeedUrl | Status::Failed(_) => Peer::None,
        }
    }
}

/// Which model a store runs: the reader's (`A`), or the second of a comparison (`B`), which
/// shows the selection of the first (`peer`: the first model's answer, for its tokens) and
/// waits while the first generates (`generating`: the first side's, as the prompt grows).
#[derive(Clone, Copy)]
pub enum Side {
    A,
    B { peer: RwSignal<Option<Arc<Answer>>>, generating: RwSignal<Option<String>> },
}

#[derive(Clone, Copy)]
pub struct Store {
    pub ctx: DemoCtx,
    pub side: Side,
    /// The parameters this side runs (the second side's: see `side_b_params`).
    pub params: Memo<Params>,
    pub status: RwSignal<Status>,
    /// A worker is listening: changes go to it (a fresh one gets the setup when it starts).
    pub listening: StoredValue<bool>,
    /// The worker died (it crashed, or could not start): the reader's next choice starts one.
    pub died: StoredValue<bool>,
    pub backend: RwSignal<Option<Backend>>,
    /// Why a GPU failure moved the model to the CPU, until the backend is chosen again.
    pub backend_notice: RwSignal<Option<String>>,
    /// The latest answers for the prompt and for the comparison prompt.
    pub result: RwSignal<Option<Arc<Answer>>>,
    pub result_b: RwSignal<Option<Arc<Answer>>>,
    pub asked: StoredValue<Asked>,
    /// The loads sent, numbered: replies about a superseded one are dropped.
    pub loads: StoredValue<Loads>,
    /// Which prompt's analysis the error shown was the answer to (its next answer clears it).
    pub error_for: StoredValue<Option<Prompt>>,
    /// The prompt a generation in progress started from.
    pub generating: RwSignal<Option<String>>,
    /// The latest generation's continuation, shown apart from the prompt.
    pub continuation: RwSignal<Option<Continuation>>,
    /// When the last generation started, and how long it took (for the benchmark): as the page
    /// saw it, and the worker's own time for its tokens (`Reply::Generated::ms`, summed).
    pub gen_start: StoredValue<f64>,
    pub gen_compute_ms: StoredValue<f64>,
    pub gen_ms: RwSignal<(f64, f64)>,
    /// A layer or head moved to fit a newly loaded model: (what the note says, where it moved to).
    pub moved: RwSignal<Option<(String, (usize, usize))>>,
    /// The prompt was replaced to fit a character-vocabulary model: (what the note says, the
    /// prompt it became; the note shows while that is the prompt).
    pub replaced: RwSignal<Option<(String, String)>>,
    /// Where the shared selection lands in this side's model, with what moved to fit it.
    pub fit: Memo<Option<Fit>>,
    pub sel: Memo<Selection>,
    /// In a comparison, on the first side: where the second model stands, so that the shared
    /// selection can reach either model's last layer and head.
    pub peer: RwSignal<Peer>,
    /// On the second side: a query token picked there, with the first model's token it maps to.
    /// Several of its tokens may end inside one of the first model's ("Bartholomew" is 3 tokens
    /// there, 10 here); the link keeps the first model's, and this says which of them was picked,
    /// while the link still names that token.
    pub own_token: RwSignal<Option<(usize, usize)>>,
    /// The knocked-out heads that parse.
    pub knocked: Memo<Vec<(usize, usize)>>,
    /// Whether a second model is shown beside the first (on either side). A memo: a new prompt,
    /// with every generated token, does not reach what reads it.
    pub compared: Memo<bool>,
    /// The second side's refused analysis, shown on that side (the first's goes to the frame).
    pub side_error: RwSignal<Option<String>>,
    pub worker: ComputeWorker,
}

impl Store {
    /// The store, with a worker client whose events go to `on_event` (the worker starts with
    /// the first request, or `worker.start()`).
    pub fn new(ctx: DemoCtx, on_event: fn(Store, WorkerEvent)) -> Store {
        Store::with_side(ctx, on_event, Side::A)
    }

    /// The store of one side, with a worker of its own.
    pub fn with_side(ctx: DemoCtx, on_event: fn(Store, WorkerEvent), side: Side) -> Store {
        // The client's handler needs the store, and the store holds the client: the handler
        // finds the store here once it exists (no event comes before the worker is started).
        let slot = StoredValue::new_local(None::<Store>);
        let worker = ComputeWorker::new(move |_, event| {
            if let Some(s) = slot.try_get_value().flatten() {
                on_event(s, event)
            }
        });
        let link = ctx.params::<Params>();
        let status = RwSignal::new(Status::Starting);
        let result = RwSignal::new(None::<Arc<Answer>>);
        let params = match side {
            Side::A => link,
            Side::B { .. } => Memo::new(move |_| {
                let dims = status.with(Status::dims);
                link.with(|p| side_b_params(p, dims))
            }),
        };
        // Layer, head and token as the loaded model allows (a link may ask for more); on the
        // second side, the first side's query token matched among this model's tokens, or the
        // one picked here.
        let own_token = RwSignal::new(None::<(usize, usize)>);
        let fit = Memo::new(move |_| {
            let (nl, nh) = status.with(Status::dims)?;
            result.with(|r| {
                let r = r.as_ref()?;
                Some(match side {
                    Side::A => link.with(|p| fit_selection(p.layer, p.head, p.token, nl, nh, r.t())),
                    Side::B { peer, .. } => peer.with(|a| {
                        let a = a.as_ref().map_or(&[][..], |a| &a.a.tokens);
                        let mut f = link.with(|p| side_b_selection(p, a, &r.a.tokens, nl, nh));
                        let wanted = link.with(|p| p.token.max(0) as usize);
                        if let Some((j, at)) = own_token.get() {
                            if at == wanted && j < r.t() && matching_token(&r.a.tokens, j, a) == at {
                                f.token = j;
                            }
                        }
                        f
                    }),
                })
            })
        });
        let sel = Memo::new(move |_| fit.with(|f| f.as_ref().map(|f| (f.layer, f.head, f.token))));
        // A token picked on the second side holds while the link names the first model's token it
        // maps to, and no longer once the link moves away from it.
        if let Side::B { .. } = side {
            Effect::new(move |_| {
                let token = link.with(|p| p.token);
                if own_token.get_untracked().is_some_and(|(_, at)| at as i64 != token) {
                    own_token.set(None);
                }
            });
        }
        let store = Store {
            ctx,
            side,
            params,
            status,
            listening: StoredValue::new(false),
            died: StoredValue::new(false),
            backend: RwSignal::new(None),
            backend_notice: RwSignal::new(None),
            result,
            result_b: RwSignal::new(None),
            asked: StoredValue::new(Asked::default()),
            loads: StoredValue::new(Loads::default()),
            error_for: StoredValue::new(None),
            generating: RwSignal::new(None),
            continuation: RwSignal::new(None),
            gen_start: StoredValue::new(0.0),
            gen_compute_ms: StoredValue::new(0.0),
            gen_ms: RwSignal::new((0.0, 0.0)),
            moved: RwSignal::new(None),
            replaced: RwSignal::new(None),
            fit,
            sel,
            peer: RwSignal::new(Peer::None),
            own_token,
            knocked: Memo::new(move |_| params.with(Params::knocked_out)),
            compared: Memo::new(move |_| link.with(|p| p.model_b != ModelB::None)),
            side_error: RwSignal::new(None),
            worker,
        };
        slot.set_value(Some(store));
        store
    }

    /// Moves the status on by `event` (subscribers hear only of a change).
    pub fn advance(self, event: Event) {
        let now = self.status.with_untracked(|s| next(s, event));
        if self.status.with_untracked(|s| *s != now) {
            self.status.set(now);
        }
    }

    /// Sends a load request, numbered (see [`Loads`]), with `data` beside it.
    pub fn send_load(self, mut req: protocol::Request, data: Option<wasm_bindgen::JsValue>) {
        self.loads.update_value(|l| l.number(&mut req));
        self.worker.send_with(req, data);
    }

    /// Changes the parameters (the link follows). The second side changes only the shared
    /// selection: its parts set this side's layer, head or query token, and what changed goes
    /// to the link, a query token as the first model's token that ends where it ends.
    pub fn set(self, change: impl FnOnce(&mut Params)) {
        let Side::B { peer, .. } = self.side else { return self.ctx.set_params::<Params>(change) };
        let Some((layer, head, token)) = self.sel.get_untracked() else { return };
        let mut p = self.params.get_untracked();
        (p.layer, p.head, p.token) = (layer as i64, head as i64, token as i64);
        change(&mut p);
        let picked = (p.token != token as i64)
            .then(|| {
                self.result.with_untracked(|b| {
                    peer.with_untracked(|a| match (a, b) {
                        (Some(a), Some(b)) => Some(matching_token(&b.a.tokens, p.token.max(0) as usize, &a.a.tokens)),
                        _ => None,
                    })
                })
            })
            .flatten();
        if let Some(t) = picked {
            self.own_token.set(Some((p.token.max(0) as usize, t)));
        }
        self.ctx.set_params::<Params>(|q| {
            if p.layer != layer as i64 {
                q.layer = p.layer;
            }
            if p.head != head as i64 {
                q.head = p.head;
            }
            if let Some(t) = picked {
                q.token = t as i64;
            }
        });
    }
}

/// The store the demo's view provided.
pub fn store() -> Store {
    expect_context::<Store>()
}
