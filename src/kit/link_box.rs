//! A link shown in a read-only field (after "Copy link", so a reader whose browser refused the
//! clipboard can select it): focusing the field selects the whole link.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

#[component]
pub fn LinkBox(
    /// What the link is ("Link", "Embed link"), shown beside the field.
    what: String,
    url: String,
) -> impl IntoView {
    let select_all = move |ev: web_sys::FocusEvent| {
        if let Some(field) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) {
            field.select();
        }
    };
    view! {
        <label class="link-box">
            <span>{what}</span>
            <input type="text" readonly class="link-field" prop:value=url on:focus=select_all />
        </label>
    }
}
