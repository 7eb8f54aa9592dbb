//! The layer, head and query token, kept inside the loaded model and prompt.

use leptos::prelude::*;

use super::super::compare::moved_note;
use super::super::{fit_selection, slider_max, switch_featured, Model};
use super::store::{store, Peer, Side, Store};
use crate::state::Notice;

/// A switch of model moves the prompts and head that were the previous model's featured ones
/// to the new model's (`switch_featured`; a link's missing keys are the model's own already:
/// `Gpt2Demo::baseline`). The first side only: the second follows its selection.
pub fn featured(s: Store) {
    if !matches!(s.side, Side::A) {
        return;
    }
    Effect::new(move |before: Option<Model>| {
        let now = s.params.with(|p| p.model);
        if let Some(from) = before.filter(|b| *b != now) {
            let mut p = s.params.get_untracked();
            switch_featured(&mut p, from);
            if p != s.params.get_untracked() {
                s.set(|now| *now = p);
            }
        }
        now
    });
}

/// The layer, head and query-token sliders end at the loaded model's last layer and head and
/// the prompt's last token; a selection beyond them moves to the last one. A value the link
/// asked for gets the frame's notice; a layer or head moved by a model switch, a note here; a
/// query token moved because the prompt got shorter, neither (the slider shows it). In a
/// comparison the layer and head reach the larger model's last (each side shows what it has),
/// and nothing moves while the second model loads.
pub fn keep_inside(s: Store) {
    let link_keys = StoredValue::new(crate::kit::browser::link_keys("gpt2", &["layer", "head", "token"]));
    let wanted = Memo::new(move |_| s.params.with(|p| (p.layer, p.head, p.token)));
    Effect::new(move |_| {
        let (l, h, tok) = wanted.get();
        let Some((mut nl, mut nh, t)) = s.result.with(|r| r.as_ref().map(|r| (r.a.n_layer, r.a.n_head, r.t()))) else {
            return;
        };
        if s.compared.get() {
            match s.peer.get() {
                Peer::Loading => return,
                Peer::Ready(bl, bh) => (nl, nh) = (nl.max(bl), nh.max(bh)),
                Peer::None => {}
            }
        }
        let max = slider_max(nl, nh, t).to_vec();
        if s.ctx.int_max.with_untracked(|m| *m != max) {
            s.ctx.int_max.set(max);
        }
        let fit = fit_selection(l, h, tok, nl, nh, t);
        let from_link = std::mem::take(&mut *link_keys.write_value());
        if fit.moved.is_empty() {
            return;
        }
        let mut notes = Vec::new();
        let mut switched = Vec::new();
        for m in &fit.moved {
            if from_link.contains(&m.key) {
                let reason = format!("{}; showing {} {}", m.why, m.key, m.now);
                notes.push(Notice { key: format!("gpt2.{}", m.key), raw: m.wanted.to_string(), reason, cut: false });
            } else if m.key != "token" {
                switched.push(format!("{} {} (was {})", m.key, m.now, m.wanted));
            }
        }
        if !notes.is_empty() {
            s.ctx.notices.update(|n| n.extend(notes));
        }
        if !switched.is_empty() {
            let note = format!("This model is smaller: showing {}.", switched.join(", "));
            s.moved.set(Some((note, (fit.layer, fit.head))));
        }
        s.set(|p| (p.layer, p.head, p.token) = (fit.layer as i64, fit.head as i64, fit.token as i64));
    });
}

/// The note that a layer or head moved to fit a smaller model, while that is still the selection.
#[component]
pub fn MovedNote() -> impl IntoView {
    let s = store();
    move || {
        let (l, h, _) = s.sel.get()?;
        s.moved.with(|m| {
            m.as_ref()
                .filter(|m| m.1 == (l, h))
                .map(|m| view! { <p class="notice moved-note" role="status">{m.0.clone()}</p> })
        })
    }
}

/// In a comparison, a layer or head of the shared selection that this side's model lacks: where
/// it is shown instead ("This model has layers 0 to 3: showing layer 3.").
#[component]
pub fn FitNote() -> impl IntoView {
    let s = store();
    move || {
        let note = s.fit.with(|f| f.as_ref().and_then(moved_note)).filter(|_| s.compared.get())?;
        Some(view! { <p class="notice moved-note" role="status">{note}</p> })
    }
}
