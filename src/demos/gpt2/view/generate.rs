//! Generation: twenty sampled tokens appended to the prompt as they come, and a stop button.

use leptos::prelude::*;

use super::super::status::Status;
use super::conversation::generate;
use super::store::store;
use crate::gpt2::protocol::Request;

#[component]
pub fn Generation() -> impl IntoView {
    let s = store();
    let running = move || s.generating.with(Option::is_some);
    let blocked = move || running() || !s.status.with(Status::is_ready);
    let stop = move || {
        s.worker.send(Request::Stop);
    };
    view! {
        <div class="row-actions">
            <button type="button" class="generate" on:click=move |_| generate(s) disabled=blocked>
                {move || if running() { "Generating…" } else { "Generate 20 tokens" }}
            </button>
            {move || running().then(|| view! {
                <button type="button" class="stop" on:click=move |_| stop()>"Stop"</button>
            })}
        </div>
    }
}
