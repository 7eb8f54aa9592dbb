//! The "Why attention" chapter's seq2seq weights, fetched once per page and shared by its demos.

use std::cell::RefCell;
use std::rc::Rc;

use leptos::prelude::*;

use crate::kit::DemoCtx;
use crate::seq2seq::Models;

pub const URL: &str = "/models/seq2seq/model.safetensors";

thread_local! {
    static LOADED: RefCell<Option<Rc<Models>>> = const { RefCell::new(None) };
}

/// The shipped models, from the page's copy when one demo already fetched them.
pub async fn models() -> Result<Rc<Models>, String> {
    if let Some(m) = LOADED.with(|l| l.borrow().clone()) {
        return Ok(m);
    }
    let bytes = crate::kit::browser::fetch_bytes(URL).await?;
    let m = Rc::new(Models::load(&bytes).map_err(|e| format!("{URL}: {e}"))?);
    LOADED.with(|l| *l.borrow_mut() = Some(m.clone()));
    Ok(m)
}

/// A signal that holds the models once they are in; a failure is shown as the demo's error.
pub fn load_models(ctx: DemoCtx) -> RwSignal<Option<Rc<Models>>, LocalStorage> {
    let loaded = RwSignal::new_local(None);
    leptos::task::spawn_local(async move {
        match models().await {
            Ok(m) => loaded.set(Some(m)),
            Err(e) => ctx.error.set(Some(format!("Could not load the seq2seq models: {e}"))),
        }
    });
    loaded
}

/// "Loading…" while the models are on their way (the demo walk in the browser tests waits for it
/// to go).
pub fn loading_note(models: RwSignal<Option<Rc<Models>>, LocalStorage>) -> impl IntoView {
    move || {
        models
            .with(Option::is_none)
            .then(|| view! { <p class="muted" role="status">"Loading the models (1.4 MB)…"</p> })
    }
}
