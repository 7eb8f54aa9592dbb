//! Two prompts side by side: the same layer, head and query position, and each one's next tokens.

use std::sync::Arc;

use leptos::prelude::*;

use super::super::{next_rows, CANDIDATES, SHOWN_COMPARE};
use super::chips::static_chips;
use super::next_tokens::next_chart;
use super::store::{store, Answer};

#[component]
pub fn Comparison() -> impl IntoView {
    let s = store();
    move || {
        let (l, h, tok) = s.sel.get()?;
        let (a, b) = (s.result.get()?, s.result_b.get()?);
        let side = move |title: &'static str, r: Arc<Answer>| {
            let t = tok.min(r.t().max(1) - 1);
            let rows = next_rows(&r.a.next, r.a.baseline.as_deref(), CANDIDATES, SHOWN_COMPARE);
            view! {
                <div class="compare-side">
                    <h5>{title}</h5>
                    <div class="chips">{static_chips(&r, l, h, t)}</div>
                    {next_chart(&rows, true)}
                </div>
            }
        };
        Some(view! {
            <div class="compare">
                <h4>{format!("Side by side: layer {l}, head {h}, query position {tok}")}</h4>
                <div class="compare-grid">{side("First prompt", a)}{side("Second prompt", b)}</div>
                <p class="muted">"Where a head looks is not why the model predicts what it does, and any association \
                    it shows was learned from its training text."</p>
            </div>
        })
    }
}
