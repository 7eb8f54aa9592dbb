//! Whether the browser has a network (`navigator.onLine`, kept up to date by the window's
//! `online` and `offline` events). The book itself works offline once the service worker has
//! kept it (`static/sw.js`); only downloads of models need the network.

use leptos::prelude::*;

/// `navigator.onLine` now.
pub fn is_online() -> bool {
    web_sys::window().map(|w| w.navigator().on_line()).unwrap_or(true)
}

/// A signal that follows `navigator.onLine` for as long as the calling component lives.
pub fn online() -> ReadSignal<bool> {
    let (get, set) = signal(is_online());
    let on = window_event_listener(leptos::ev::online, move |_| set.set(true));
    let off = window_event_listener(leptos::ev::offline, move |_| set.set(false));
    on_cleanup(move || {
        on.remove();
        off.remove();
    });
    get
}
