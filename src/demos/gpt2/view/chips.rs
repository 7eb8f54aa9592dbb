//! The prompt's tokens as chips, tinted by where the query token looks, and the keyboard
//! behaviour the view's button rows share.

use crate::numerics::format::Signed;
use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::store::{store, Answer, Selection, Side, Store};

/// Arrow keys in a row of buttons that behaves as one control (a toolbar with a roving
/// tabindex: only the selected button is in the Tab order). ←/→ step, Home/End jump; the target
/// index is returned, or None for other keys. A handled key does not reach the page, whose
/// ←/→ turn chapters.
pub fn roving_key(ev: &web_sys::KeyboardEvent, at: usize, n: usize) -> Option<usize> {
    if n == 0 || ev.alt_key() || ev.ctrl_key() || ev.meta_key() {
        return None;
    }
    let to = match ev.key().as_str() {
        "ArrowLeft" | "ArrowUp" => at.saturating_sub(1),
        "ArrowRight" | "ArrowDown" => (at + 1).min(n - 1),
        "Home" => 0,
        "End" => n - 1,
        _ => return None,
    };
    ev.prevent_default();
    ev.stop_propagation();
    Some(to)
}

/// Moves the keyboard focus from the button that got `ev`, at index `from` in its row, to the
/// one at index `to`.
pub fn focus_sibling(ev: &web_sys::KeyboardEvent, from: usize, to: usize) {
    let Some(mut el) = ev.current_target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
    for _ in 0..from.abs_diff(to) {
        let next = if to > from { el.next_element_sibling() } else { el.previous_element_sibling() };
        match next {
            Some(n) => el = n,
            None => break,
        }
    }
    if let Ok(h) = el.dyn_into::<web_sys::HtmlElement>() {
        let _ = h.focus();
    }
}

/// The prompt's tokens, rebuilt only for a new analysis: a new selection restyles the same buttons.
#[component]
pub fn TokenChips() -> impl IntoView {
    let s = store();
    let chips = move || s.result.get().map(|r| token_chips(r, s.sel, s));
    // Said once, on the first side.
    let second = matches!(s.side, Side::B { .. });
    view! {
        <div class="chips" role="toolbar" aria-label="Tokens: choose one to see where it looks">{chips}</div>
        <p class="muted" class:hidden=second>"Click a token (or use the arrow keys) to make it the query: chips are \
            tinted by how much it attends to each earlier token in the selected head."</p>
    }
}

/// The prompt's tokens as buttons: clicking one, or moving along them with the arrow keys, makes
/// it the query. Each is tinted by the weight the query gives it in the selected head. The
/// buttons stay while the selection changes (only their tint, state and labels follow it), so
/// the keyboard focus stays where it is.
fn token_chips(r: Arc<Answer>, sel: Memo<Selection>, s: Store) -> impl IntoView {
    let n = r.t();
    (0..n)
        .map(|j| {
            let tok = r.a.tokens[j].clone();
            let id = tok.id;
            let text = tok.text.replace(' ', "·").replace('\n', "↵");
            let r = r.clone();
            let weight = move || sel.get().and_then(|(l, h, q)| r.weight(l, h, q, j)).unwrap_or(0.0);
            let query = move || sel.get().map(|s| s.2);
            // Read after the visible text, so the accessible name starts with what is shown.
            let detail = {
                let weight = weight.clone();
                move || format!(": token {j}, {:?}, weight {:.3}", tok.text, Signed(weight()))
            };
            let set = move |to: usize| s.set(|p| p.token = to as i64);
            view! {
                <button type="button" class="chip" class:selected=move || query() == Some(j)
                    class:future=move || query().is_some_and(|q| j > q)
                    style=move || format!("--w: {:.3}", weight())
                    tabindex=move || if query().unwrap_or(0) == j { "0" } else { "-1" }
                    aria-pressed=move || (query() == Some(j)).to_string()
                    on:click=move |_| set(j)
                    on:keydown=move |ev| if let Some(to) = roving_key(&ev, j, n) {
                        set(to);
                        focus_sibling(&ev, j, to);
                    }>
                    <span class="chip-text">{text}</span><small>{id}</small>
                    <span class="visually-hidden">{detail}</span>
                </button>
            }
        })
        .collect_view()
}

/// The tokens of the comparison prompt, tinted the same way; not interactive (the query position
/// is the main prompt's).
pub fn static_chips(r: &Answer, l: usize, h: usize, q: usize) -> impl IntoView {
    r.a.tokens
        .iter()
        .enumerate()
        .map(|(j, tok)| {
            let w = r.weight(l, h, q, j).unwrap_or(0.0);
            let text = tok.text.replace(' ', "·").replace('\n', "↵");
            view! {
                <span class="tok" class:selected={j == q} class:future={j > q} style=format!("--w: {w:.3}")
                    title=format!("token {j}: {:?}, id {}, weight {w:.3}", tok.text, tok.id, w = Signed(w))>
                    <span class="chip-text">{text}</span><small>{tok.id}</small>
                </span>
            }
        })
        .collect_view()
}
