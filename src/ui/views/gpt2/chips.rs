//! The prompt's tokens as chips, tinted by where the query token looks.

use leptos::prelude::*;

use super::Result_;
use crate::state::Value;

/// The tokens as chips, tinted by the weight the query token `sel` gives each in (l, h);
/// clickable (selecting the query) when `values` is given.
pub fn token_chips(r: &Result_, l: usize, h: usize, sel: usize, values: Option<RwSignal<crate::state::Values>>) -> impl IntoView {
    r.a.tokens
        .iter()
        .enumerate()
        .map(|(j, tok)| {
            let w = r.weight(l, h, sel, j).unwrap_or(0.0);
            let style = format!("--w: {:.3}", w);
            let text = tok.text.replace(' ', "·").replace('\n', "↵");
            let (selected, future) = (j == sel, j > sel);
            let id = tok.id;
            let label = format!("token {j}: {:?}, id {}, weight {:.3}", tok.text, tok.id, w);
            view! {
                <button type="button" class="chip" class:selected=selected class:future=future style=style aria-label=label disabled=values.is_none()
                    on:click=move |_| if let Some(v) = values { v.update(|v| v.set("token", Value::Int(j as i64))) }>
                    <span class="chip-text">{text}</span><small>{id}</small>
                </button>
            }
        })
        .collect_view()
}

