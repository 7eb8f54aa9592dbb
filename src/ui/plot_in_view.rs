//! On a phone a demo's controls are pinned to the bottom of the screen, under its plots
//! (static/style.css). A demo with text above its plots (a model's status, a file picker, how to
//! read the chips) can leave every plot behind that panel when a link has just scrolled to the
//! demo's title: the reader would move a slider and see nothing change. When the focus enters the
//! panel and no plot shows enough of itself between the site's header and the panel, the page
//! scrolls to put the nearest plot's top under the header. It never scrolls while a plot is seen.

use leptos::prelude::{document, window};
use wasm_bindgen::JsCast;

/// The breakpoint below which the controls are pinned (static/style.css).
const PINNED: &str = "(max-width: 900px)";
/// Pixels of a plot that count as seen (all of a shorter plot).
const ENOUGH: f64 = 120.0;
/// Room left between the header and the plot's top, in pixels.
const GAP: f64 = 8.0;

/// Scrolls the page, if needed, so that one of `demo`'s plots is seen above its `controls`.
pub fn keep_a_plot_in_view(demo: &web_sys::Element, controls: &web_sys::Element) {
    if !window().match_media(PINNED).ok().flatten().is_some_and(|m| m.matches()) {
        return;
    }
    let top = document()
        .query_selector(".site-header")
        .ok()
        .flatten()
        .map_or(0.0, |h| h.get_bounding_client_rect().bottom().max(0.0));
    let panel = controls.get_bounding_client_rect();
    // Only a panel pinned to the screen's foot (not one in its place below a demo scrolled past).
    let foot = window().inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(f64::MAX);
    if panel.bottom() < foot - 1.0 {
        return;
    }
    let bottom = panel.top();
    let Some(dy) = scroll_needed(&plot_spans(demo), top, bottom) else { return };
    window().scroll_by_with_x_and_y(0.0, dy);
}

/// (top, bottom) of each plot of the demo on the page (not hidden), in viewport pixels, top to
/// bottom (two models' sides stand side by side on a wide phone).
fn plot_spans(demo: &web_sys::Element) -> Vec<(f64, f64)> {
    let Ok(list) = demo.query_selector_all(".demo-view canvas.plot") else { return Vec::new() };
    let mut spans: Vec<(f64, f64)> = (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into::<web_sys::Element>().ok())
        .map(|c| c.get_bounding_client_rect())
        .filter(|r| r.height() > 0.0)
        .map(|r| (r.top(), r.bottom()))
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    spans
}

/// How far to scroll (pixels, down positive) so that a plot is seen between `top` and
/// `bottom`, or `None` when one already is. The plot chosen is the first one not wholly above
/// the region (the one the reader would reach by scrolling on), else the last one.
fn scroll_needed(plots: &[(f64, f64)], top: f64, bottom: f64) -> Option<f64> {
    let seen = |&(t, b): &(f64, f64)| b.min(bottom) - t.max(top) >= ENOUGH.min(b - t);
    if plots.is_empty() || bottom - top < ENOUGH || plots.iter().any(seen) {
        return None;
    }
    let &(t, _) = plots.iter().find(|&&(_, b)| b > top).or(plots.last())?;
    Some(t - top - GAP)
}
