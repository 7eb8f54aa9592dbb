//! The CSS width of each plot canvas, kept by one `ResizeObserver` instead of read with
//! `clientWidth` at every draw.
//!
//! A slider move first changes the page (the value shown beside the slider, the box around
//! `self-attn`'s X fields), then redraws the plots. Reading `clientWidth` at that point makes
//! the browser lay the page out in the middle of the move, and the plots' new heights make it
//! lay it out again before the frame is painted: two layouts per move instead of one. In
//! `self-attn` at n = d = 8 a layout of the chapter costs about 3 ms on this machine.
//!
//! The observer's callback runs after the browser's own layout, where reading the width costs
//! nothing; when a width changes it calls the hook set by `on_change` (the app redraws every
//! plot then, as on a window resize).

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlCanvasElement, ResizeObserver, ResizeObserverEntry};

/// The expando property holding a canvas's last known CSS width.
const KEY: &str = "__alCssWidth";

fn key() -> JsValue {
    wasm_bindgen::intern(KEY).into() // read at every draw: sent as a handle, not decoded
}

thread_local! {
    static OBSERVER: RefCell<Option<ResizeObserver>> = const { RefCell::new(None) };
    static ON_CHANGE: RefCell<Option<Box<dyn Fn()>>> = const { RefCell::new(None) };
}

/// Sets what runs when an observed canvas changes width (replacing any earlier hook).
pub fn on_change(hook: impl Fn() + 'static) {
    ON_CHANGE.with(|h| *h.borrow_mut() = Some(Box::new(hook)));
}

/// The canvas's CSS width (its `clientWidth`). The first call for a canvas reads it from the
/// layout and starts observing the canvas; later calls return the observed value.
pub fn css_width(canvas: &HtmlCanvasElement) -> f64 {
    if let Some(w) = js_sys::Reflect::get(canvas, &key()).ok().and_then(|v| v.as_f64()) {
        return w;
    }
    let w = f64::from(canvas.client_width());
    let _ = js_sys::Reflect::set(canvas, &key(), &w.into());
    observe(canvas);
    w
}

fn observe(canvas: &Element) {
    OBSERVER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let callback = Closure::<dyn Fn(js_sys::Array)>::new(changed);
            // No observer (an old browser): `css_width` keeps the first width it read; a window
            // resize still redraws, at that width.
            *slot = ResizeObserver::new(callback.as_ref().unchecked_ref()).ok();
            callback.forget(); // lives as long as the page
        }
        if let Some(observer) = slot.as_ref() {
            observer.observe(canvas);
        }
    });
}

fn changed(entries: js_sys::Array) {
    let mut any = false;
    for entry in entries.iter() {
        let Ok(entry) = entry.dyn_into::<ResizeObserverEntry>() else { continue };
        let target = entry.target();
        if !target.is_connected() {
            // Removed from the page (another chapter): the observer would keep it alive.
            OBSERVER.with(|o| o.borrow().as_ref().map(|o| o.unobserve(&target)));
            let _ = js_sys::Reflect::delete_property(&target, &key());
            continue;
        }
        // After layout, so this read is free; clientWidth, as the draw measured before.
        let w = f64::from(target.client_width());
        let old = js_sys::Reflect::get(&target, &key()).ok().and_then(|v| v.as_f64());
        if old != Some(w) {
            let _ = js_sys::Reflect::set(&target, &key(), &w.into());
            any = true;
        }
    }
    if any {
        ON_CHANGE.with(|h| {
            if let Some(hook) = h.borrow().as_ref() {
                hook();
            }
        });
    }
}
