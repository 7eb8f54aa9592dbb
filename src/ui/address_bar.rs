//! Keeps the address bar in step with the demos' state, at most once every `INTERVAL_MS`.
//!
//! `history.replaceState` costs 1.5 to 3.5 ms in Chromium on this machine (it also saves the
//! state of every form field on the page, and `self-attn` has 64). A slider being dragged
//! would pay that on every move, so the first change after a quiet spell is written at once
//! and later ones wait for the end of the interval, where only the latest is written.
//! `window.__alUrlPending` is true while one waits (the browser tests wait for it to clear).

use std::cell::RefCell;
use std::time::Duration;

use leptos::prelude::{set_timeout, window};
use wasm_bindgen::JsValue;

use crate::kit::browser::now_ms;

const INTERVAL_MS: f64 = 250.0;

#[derive(Default)]
struct Writer {
    /// When the address was last written.
    last_ms: Option<f64>,
    /// The address to write when the interval ends.
    pending: Option<String>,
}

thread_local!(static WRITER: RefCell<Writer> = RefCell::new(Writer::default()));

/// Sets the address to `path_and_query`, keeping the current `#fragment`, now or within
/// `INTERVAL_MS`.
pub fn set(path_and_query: String) {
    let now = now_ms();
    let wait = WRITER.with(|w| {
        let mut w = w.borrow_mut();
        let since = w.last_ms.map_or(f64::INFINITY, |t| now - t);
        if w.pending.is_none() && since >= INTERVAL_MS {
            write(&mut w, path_and_query, now);
            None
        } else {
            let first = w.pending.replace(path_and_query).is_none();
            first.then(|| (INTERVAL_MS - since).max(0.0))
        }
    });
    if let Some(ms) = wait {
        set_pending_flag(true);
        set_timeout(flush, Duration::from_millis(ms.ceil() as u64));
    }
}

fn flush() {
    WRITER.with(|w| {
        let mut w = w.borrow_mut();
        let Some(next) = w.pending.take() else { return };
        // The reader went to another chapter meanwhile: the waiting state is that page's.
        let path = next.split('?').next().unwrap_or_default();
        if window().location().pathname().ok().as_deref() == Some(path) {
            write(&mut w, next, now_ms());
        }
    });
    set_pending_flag(false);
}

fn write(w: &mut Writer, path_and_query: String, now: f64) {
    let hash = window().location().hash().unwrap_or_default();
    if let Ok(h) = window().history() {
        let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&format!("{path_and_query}{hash}")));
    }
    w.last_ms = Some(now);
}

fn set_pending_flag(on: bool) {
    let _ = js_sys::Reflect::set(&window(), &"__alUrlPending".into(), &on.into());
}
