//! The app root: global context (theme, resize ticks) and the router.
//!
//! Routing is by path, `/`, `/<chapter>/`, `/embed/`. The build writes a copy of index.html
//! at each of those paths (`scripts/build.sh`), so a deep link works on any plain static file
//! server without a single-page-app fallback. One wildcard route hands every path to
//! `pages::Page`, which dispatches on it.

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;

use super::pages::Page;
use crate::kit::theme::Theme;

#[derive(Clone, Copy)]
pub struct AppCtx {
    pub theme: RwSignal<Theme>,
    pub resize: RwSignal<u32>,
}

#[component]
pub fn App() -> impl IntoView {
    // Each route's static HTML carries the page's title, summary and the contents for link
    // previews, crawlers and the moment before the wasm runs (scripts/build.sh); the app
    // replaces it, keeping the page's prose (`prose`).
    super::prose::take_from_document();
    if let Some(el) = document().get_element_by_id("static-page") {
        el.remove();
    }
    let theme = RwSignal::new(Theme::initial());
    theme.get_untracked().apply(false);
    let resize = RwSignal::new(0u32);
    let handle = window_event_listener(leptos::ev::resize, move |_| resize.update(|n| *n = n.wrapping_add(1)));
    on_cleanup(move || handle.remove());
    // A plot whose width changed without a window resize (a scroll bar, a panel opening)
    // redraws too.
    crate::kit::plot::widths::on_change(move || resize.update(|n| *n = n.wrapping_add(1)));
    provide_context(AppCtx { theme, resize });
    view! {
        <Router>
            <Routes fallback=|| view! { <Page/> }>
                <Route path=path!("/") view=Page/>
                <Route path=path!("/*any") view=Page/>
            </Routes>
        </Router>
    }
}
