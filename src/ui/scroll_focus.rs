//! A box that scrolls sideways must be reachable from the keyboard, or a reader without a
//! pointer cannot see what is past its edge (WCAG 2.1.1; axe's `scrollable-region-focusable`).
//! A display equation or a prose table wider than the column (on a phone) joins the Tab order,
//! where the arrow keys scroll it, and leaves it when the column is wide enough again: a focus
//! stop on every equation would cost keyboard readers dozens of useless presses per chapter.

use leptos::prelude::document;
use wasm_bindgen::JsCast;

const WIDE: &str = r#"main .prose math[display="block"], main .prose table"#;
/// Marks the elements this module made focusable, so it never touches another tabindex.
const MARK: &str = "data-scroll-focus";

/// Puts every wide equation and table of the page in the Tab order, and the others out of it.
/// Reads each one's width: call it where the page has just been laid out.
pub fn mark_wide() {
    let Ok(list) = document().query_selector_all(WIDE) else { return };
    for i in 0..list.length() {
        let Some(e) = list.item(i).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) else { continue };
        let wide = e.scroll_width() > e.client_width() + 1;
        let marked = e.has_attribute(MARK);
        if wide && !marked && !e.has_attribute("tabindex") {
            let _ = e.set_attribute("tabindex", "0");
            let _ = e.set_attribute(MARK, "");
        } else if !wide && marked {
            let _ = e.remove_attribute("tabindex");
            let _ = e.remove_attribute(MARK);
        }
    }
}
