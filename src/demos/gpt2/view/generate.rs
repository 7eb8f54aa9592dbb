//! Generation: up to twenty sampled tokens, streamed in beside the end of the prompt (apart
//! from it: the prompt is the reader's text), a Stop button, and a button that adds the
//! continuation to the prompt so that the views read it.

use leptos::prelude::*;

use super::super::continuation::{tail, STEPS};
use super::super::status::Status;
use super::conversation::{append, generate};
use super::store::store;
use crate::session::protocol::Request;

/// Characters of the prompt shown before the continuation.
const CONTEXT: usize = 80;

#[component]
pub fn Generation() -> impl IntoView {
    let s = store();
    let running = move || s.generating.with(Option::is_some);
    let blocked = move || running() || !s.status.with(Status::is_ready);
    let stop = move || {
        s.worker.send(Request::Stop);
    };
    // Shown while the prompt is the one it continues.
    let shown = move || s.continuation.get().filter(|c| s.params.with(|p| p.prompt == c.prompt));
    let continuation = move || {
        shown().map(|c| {
            let done = c.end.is_some();
            view! {
                <div class="continuation">
                    <p class="continued" aria-label="Prompt and generated continuation">
                        <span class="from-prompt">{tail(&c.prompt, CONTEXT)}</span>
                        <mark class="generated">{c.text.clone()}</mark>
                    </p>
                    <p class="muted" role="status">{c.note()}</p>
                    {done.then(|| view! {
                        <button type="button" class="append" on:click=move |_| append(s)
                            disabled=c.text.is_empty()>"Add to the prompt"</button>
                    })}
                </div>
            }
        })
    };
    view! {
        <div class="row-actions">
            <button type="button" class="generate" on:click=move |_| generate(s) disabled=blocked>
                {move || if running() { "Generating…".to_string() } else { format!("Generate {STEPS} tokens") }}
            </button>
            {move || running().then(|| view! {
                <button type="button" class="stop" on:click=move |_| stop()>"Stop"</button>
            })}
        </div>
        {continuation}
    }
}
