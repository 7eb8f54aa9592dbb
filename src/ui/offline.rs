//! One sentence on the home page about offline reading: how much this browser keeps once the
//! service worker has installed (`offline.json`, written by the build from the same list as
//! `sw.js`: `chapters::offline`). Nothing is shown where the file is missing (Trunk's
//! development server).

use leptos::prelude::*;

use crate::chapters::offline::{Precache, INFO_FILE};
use crate::demos::gpt2::status::mb;

/// "Offline: after a first visit …" with the build's total size, once read.
pub fn offline_note() -> impl IntoView {
    let text = RwSignal::new(None::<String>);
    leptos::task::spawn_local(async move {
        let Ok(bytes) = crate::kit::browser::fetch_bytes(&format!("/{INFO_FILE}")).await else { return };
        let Ok(pre) = serde_json::from_slice::<Precache>(&bytes) else { return };
        text.try_set(Some(format!(
            "Offline: after a first visit over https (or on this computer), this browser keeps the whole book, \
             {} in {} files (every page, both engines and the bundled models), so it works with no network; \
             only downloading another model needs one. Installing it as an app is offered by the browser.",
            mb(pre.bytes),
            pre.files.len()
        )));
    });
    move || text.get().map(|t| view! { <p class="offline-note">{t}</p> })
}
