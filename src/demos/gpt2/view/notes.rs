//! Notes above the tokens: a prompt cut to the model's window, a selection moved to fit a smaller
//! model (or, in a comparison, shown inside one side's model), knock-outs that could not be read
//! or name no head of this model.

use leptos::prelude::*;

use super::super::parse_ablate;
use super::super::status::Status;
use super::selection::{FitNote, MovedNote};
use super::store::store;

#[component]
pub fn Notes() -> impl IntoView {
    let s = store();
    let dropped = move || {
        s.result.with(|r| {
            r.as_ref().filter(|r| r.a.dropped > 0).map(|r| {
                let text = format!(
                    "The prompt is longer than the model's window: its first {} tokens were cut, and the {} shown \
                     are what the model sees.",
                    r.a.dropped,
                    r.t()
                );
                view! { <p class="notice" role="status">{text}</p> }
            })
        })
    };
    let bad_ablate = move || {
        let (pairs, bad) = s.params.with(|p| parse_ablate(&p.ablate));
        let (nl, nh) = s.status.with(Status::dims).unwrap_or((usize::MAX, usize::MAX));
        let outside: Vec<String> =
            pairs.iter().filter(|(l, h)| *l >= nl || *h >= nh).map(|(l, h)| format!("{l}.{h}")).collect();
        let mut msg = Vec::new();
        if !bad.is_empty() {
            msg.push(format!("ignored {} (write heads as layer.head, e.g. 2.3)", bad.join(", ")));
        }
        if !outside.is_empty() {
            msg.push(format!("this model has no head {}", outside.join(", ")));
        }
        (!msg.is_empty())
            .then(|| view! { <p class="notice" role="status">{format!("Knock-outs: {}.", msg.join("; "))}</p> })
    };
    let replaced = move || {
        let prompt = s.params.with(|p| p.prompt.clone());
        s.replaced.with(|r| {
            r.as_ref()
                .filter(|(_, now)| *now == prompt)
                .map(|(note, _)| view! { <p class="notice" role="status">{note.clone()}</p> })
        })
    };
    view! { {replaced}{dropped}<MovedNote/><FitNote/>{bad_ablate} }
}
