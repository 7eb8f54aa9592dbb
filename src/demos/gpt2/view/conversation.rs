//! The conversation with the worker: what each reply does to the store, and the requests the
//! page sends as the parameters and the model's status change.

use std::sync::Arc;

use leptos::prelude::*;

use super::super::continuation::{Continuation, STEPS};
use super::super::status::{plan_load, Event, Plan, Prompt, Status, PROMPT_MAX};
use super::super::{query, trained, Model};
use super::store::{Answer, Backend, Side, Store};
use crate::session::protocol::{BackendChoice, Reply, Request};
use crate::kit::browser::{local_get, now_ms};
use crate::kit::worker::Event as WorkerEvent;

/// Tests set this localStorage key to "1" to make the next GPU run fail on purpose.
const GPU_FAULT_KEY: &str = "attention-live:gpu-fault";

pub fn on_event(s: Store, event: WorkerEvent) {
    match event {
        WorkerEvent::Ready => {
            s.died.set_value(false);
            s.listening.set_value(true);
            // A fresh worker holds no model and the automatic backend: the backend first (it
            // applies it to every model it loads), then the model.
            send_backend(s);
            load(s, true);
        }
        WorkerEvent::Progress(p) if s.loads.get_value().wants(p.load) => {
            s.advance(Event::Progress { phase: p.phase, loaded: p.loaded, total: p.total, rate: p.rate })
        }
        WorkerEvent::Progress(_) => {} // a superseded load's
        WorkerEvent::Analysis(a, w) => {
            let prompt = s.asked.get_value().route(a.id);
            let target = match prompt {
                Some(Prompt::Main) => s.result,
                Some(Prompt::Compare) => s.result_b,
                None => return, // a stale answer
            };
            // This prompt was refused before (a character the model has no token for) and is fixed.
            if prompt.is_some() && s.error_for.get_value() == prompt {
                s.error_for.set_value(None);
                show_error(s, None);
            }
            target.set(Some(Arc::new(Answer { a, w })));
        }
        WorkerEvent::Reply(reply) => on_reply(s, reply),
        // The training lab's and the translation demo's events: never sent to this demo's worker.
        WorkerEvent::Snapshot(..)
        | WorkerEvent::Checkpoint { .. }
        | WorkerEvent::Translation(_)
        | WorkerEvent::Vision(_) => {}
        WorkerEvent::Died(why) => {
            s.listening.set_value(false);
            s.died.set_value(true);
            s.generating.set(None);
            s.continuation.update(|c| c.iter_mut().for_each(Continuation::stop));
            s.advance(Event::Failed(why));
        }
    }
}

fn on_reply(s: Store, reply: Reply) {
    if !s.loads.get_value().wants_reply(&reply) {
        return; // about a superseded load
    }
    s.advance(Event::Reply(&reply));
    match reply {
        // The prompts are the first model's to fit (the second side's analysis says what it cannot read).
        Reply::Loaded { name, n_positions, char_vocab: Some(vocab), .. } if matches!(s.side, Side::A) => {
            fit_prompts(s, &name, &vocab, n_positions)
        }
        Reply::Generated { token, text, done, ms, .. } => {
            if s.generating.with_untracked(Option::is_some) {
                s.gen_compute_ms.update_value(|t| *t += ms);
                s.continuation.update(|c| {
                    if let Some(c) = c {
                        c.step(&token.text, text, done);
                    }
                });
                if done {
                    generation_ended(s);
                }
            }
        }
        Reply::Stopped { .. } => {
            s.continuation.update(|c| {
                if let Some(c) = c {
                    c.stop();
                }
            });
            generation_ended(s);
        }
        Reply::Backend { backend: name, detail, notice } => {
            s.backend.set(Some(Backend { name, detail }));
            if notice.is_some() {
                s.backend_notice.set(notice);
            }
        }
        Reply::Error { id: Some(id), message, .. } => {
            // Only a change notifies: the analysis effect follows `generating`, and a refused
            // analysis that set it again would be asked again, forever.
            if s.generating.with_untracked(Option::is_some) {
                s.generating.set(None);
            }
            let prompt = s.asked.get_value().route(id);
            s.error_for.set_value(prompt);
            let which = if prompt == Some(Prompt::Compare) { "The second prompt: " } else { "" };
            show_error(s, Some(format!("{which}{message}")));
        }
        // The status took these; the benchmark, Q/K/V, training and translation replies are for other demos' workers,
        // and the client turns the rest into events of their own.
        Reply::Progress { .. }
        | Reply::Loaded { .. }
        | Reply::NotCached { .. }
        | Reply::Error { id: None, .. }
        | Reply::AttentionBench { .. }
        | Reply::HeadQkv(_)
        | Reply::Lens(_)
        | Reply::PatchProgress { .. }
        | Reply::Patching(_)
        | Reply::Heads(_)
        | Reply::TranslatorLoaded { .. }
        | Reply::Translation(_)
        | Reply::VisionLoaded { .. }
        | Reply::Vision(_)
        | Reply::TrainProgress { .. }
        | Reply::TrainSnapshot { .. }
        | Reply::TrainStopped { .. }
        | Reply::TrainRestored { .. }
        | Reply::TrainCheckpoint { .. }
        | Reply::Ready
        | Reply::Analysis(_)
        | Reply::Crashed { .. } => {}
    }
}

/// An analysis the model refused, shown by the frame, or on the second side in place; `None`
/// clears it.
fn show_error(s: Store, message: Option<String>) {
    match s.side {
        Side::A => s.ctx.error.set(message),
        Side::B { .. } => s.side_error.set(message),
    }
}

/// A character-vocabulary model (the training lab's) cannot read the default English prompts:
/// prompts with characters outside its vocabulary are replaced, with a note.
fn fit_prompts(s: Store, name: &str, vocab: &str, n_positions: usize) {
    if !s.status.with_untracked(|st| matches!(st, Status::Ready { name: n, .. } if n == name)) {
        return; // a stale reply
    }
    let (prompt, compare) = s.params.with_untracked(|p| (p.prompt.clone(), p.compare.clone()));
    let Some((new, new_compare)) = trained::prompts_for_vocab(vocab, n_positions, &prompt, &compare) else { return };
    let cleared = if new_compare != compare { " (and the second prompt cleared)" } else { "" };
    let note = format!(
        "This model reads only the characters {}, one token each: the prompt was replaced by a sequence of \
         them{cleared}.",
        crate::formats::echo::echo(vocab)
    );
    s.replaced.set(Some((note, new.clone())));
    s.set(|p| {
        p.prompt = new;
        p.compare = new_compare;
    });
}

fn generation_ended(s: Store) {
    s.gen_ms.set((now_ms() - s.gen_start.get_value(), s.gen_compute_ms.get_value()));
    s.generating.set(None);
}

/// Loads the chosen model: from the browser's storage only when `only_cached` (else the
/// reader is asked), from the network on the reader's go.
pub fn load(s: Store, only_cached: bool) {
    s.result.set(None);
    s.moved.set(None);
    s.replaced.set(None);
    s.continuation.set(None);
    // An analysis still under way is of the model being replaced: its answer is stale.
    s.asked.update_value(|a| a.record(Prompt::Main, None));
    let (model, base) = s.params.with_untracked(|p| (p.model, p.base.clone()));
    let plan = s.status.with_untracked(|st| plan_load(model, &base, only_cached, st));
    s.advance(Event::Planned(&plan));
    if let Plan::Send(req) = plan {
        s.send_load(req, None);
    }
}

fn send_backend(s: Store) {
    s.backend.set(None);
    s.backend_notice.set(None);
    let choice = s.params.with_untracked(|p| p.backend.choice());
    let fault = local_get(GPU_FAULT_KEY).as_deref() == Some("1");
    s.worker.send(Request::Backend { choice, fault });
}

/// After the worker died, the reader's next choice starts a fresh one (which then loads the
/// model): not at once, since what killed it (a model too big for memory) would again.
fn revive(s: Store) {
    if s.died.get_value() {
        s.died.set_value(false);
        s.worker.start();
    }
}

/// Loads the chosen model again after a failure: in a fresh worker when the last one died (or
/// was stopped), else in the one listening.
pub fn retry(s: Store) {
    if s.died.get_value() || !s.listening.get_value() {
        s.died.set_value(false);
        s.listening.set_value(false);
        s.advance(Event::Restarting);
        s.worker.start(); // it loads the model when it says it is ready
    } else {
        load(s, true);
    }
}

/// Cancels a download: a fresh worker replaces the one downloading.
pub fn cancel(s: Store) {
    s.listening.set_value(false);
    s.worker.start();
    s.advance(Event::Cancelled);
}

pub fn generate(s: Store) {
    if s.generating.get_untracked().is_some() || !s.status.with_untracked(Status::is_ready) {
        return;
    }
    let q = s.params.with_untracked(|p| query(p, 0));
    s.generating.set(Some(q.prompt.clone()));
    s.continuation.set(Some(Continuation::start(q.prompt.clone())));
    s.gen_start.set_value(now_ms());
    s.gen_compute_ms.set_value(0.0);
    s.worker.send(Request::Generate { query: q, steps: STEPS });
}

/// Adds the continuation to the prompt (cut at the prompt's limit, with a note), so that the
/// views read it too.
pub fn append(s: Store) {
    let Some(c) = s.continuation.get_untracked() else { return };
    let (prompt, cut) = c.appended();
    if cut {
        let note = format!("The prompt keeps at most {PROMPT_MAX} characters: the continuation was cut there.");
        s.replaced.set(Some((note, prompt.clone())));
    }
    s.continuation.set(None);
    s.set(|p| p.prompt = prompt);
}

/// The requests that follow the parameters: the backend, the model, and the analyses.
pub fn follow(s: Store) {
    // A fresh worker gets the backend and the model when it says it is ready; a listening one
    // gets each change (the first run of each effect only reads what it follows).
    // Each effect returns what it follows, so that its next run sees whether that changed.
    Effect::new(move |before: Option<BackendChoice>| {
        let now = s.params.with(|p| p.backend.choice());
        if before.is_some_and(|b| b != now) {
            if s.listening.get_value() {
                send_backend(s);
            } else {
                revive(s);
            }
        }
        now
    });
    Effect::new(move |before: Option<(Model, Option<String>)>| {
        let now = s.params.with(|p| (p.model, p.source()));
        if before.as_ref().is_some_and(|b| *b != now) {
            if s.listening.get_value() {
                load(s, true);
            } else {
                revive(s);
            }
        }
        now
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
    let generating = match s.side {
        Side::A => s.generating,
        Side::B { generating, .. } => generating,
    };
    // A memo: the analyses follow only a change of whether they can be asked, never a reply that
    // leaves it as it was (a refused analysis must not ask again).
    let can_ask = Memo::new(move |_| {
        s.status.with(Status::is_ready) && generating.with(Option::is_none) && backend_name.with(Option::is_some)
    });
    Effect::new(move |_| {
        let ready = can_ask.get();
        let q = q.get();
        if ready {
            let id = s.worker.send(Request::Analyze(q));
            s.asked.update_value(|a| a.record(Prompt::Main, id));
        }
    });
    Effect::new(move |_| {
        let ready = can_ask.get();
        let mut q = q.get();
        let b = compare.get();
        if !ready || b.trim().is_empty() {
            s.asked.update_value(|a| a.record(Prompt::Compare, None));
            // Only a change notifies: the prompt changes with every generated token.
            if s.result_b.with_untracked(Option::is_some) {
                s.result_b.set(None);
            }
            return;
        }
        q.prompt = b;
        let id = s.worker.send(Request::Analyze(q));
        s.asked.update_value(|a| a.record(Prompt::Compare, id));
    });
}

/// Publishes the outputs for "Download data".
pub fn publish(s: Store) {
    Effect::new(move |_| {
        let out = s.result.with(|r| {
            r.as_ref().map(|r| {
                let (l, h, _) = s.sel.get_untracked().unwrap_or((0, 0, 0));
                super::super::download(&r.a, &r.w, l, h)
            })
        });
        s.ctx.computed.set(out);
    });
}
