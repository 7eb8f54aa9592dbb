//! Strings the plots send to the canvas context on every draw, interned.
//!
//! A `&str` passed to JavaScript is copied out of the wasm memory and decoded from UTF-8 each
//! time; a plot frame sends hundreds of them (a font, a colour, an alignment before each label),
//! and in a profile of `sinusoidal` the decoding cost more than the `fillText` calls
//! themselves. With wasm-bindgen's interning (the `enable-interning` feature), a string
//! interned once crosses as a handle to the JavaScript string made the first time. Interned
//! strings stay for the page's life, so only a bounded set is interned: the palette's
//! colours, fonts, the words for alignment. Labels are not.

use plotters::style::RGBColor;
use wasm_bindgen::intern;

use crate::kit::theme::Palette;

/// Interns the strings every plot sends, for this palette (again only when the theme changed).
pub fn prepare(pal: &Palette) {
    thread_local!(static DONE: std::cell::Cell<Option<Palette>> = const { std::cell::Cell::new(None) });
    if DONE.with(|d| d.get()) == Some(*pal) {
        return;
    }
    DONE.with(|d| d.set(Some(*pal)));
    for word in ["2d", "top", "middle", "bottom", "alphabetic", "start", "end", "left", "right", "center"] {
        intern(word);
    }
    for c in [pal.bg, pal.fg, pal.muted, pal.grid, pal.blue, pal.orange, pal.green, pal.points] {
        intern(&plotters_colour(c, 1.0));
        intern(&rgb(c));
    }
}

/// A colour as plotters' canvas backend writes it (`rgba(r,g,b,a)`, no spaces).
pub fn plotters_colour(c: RGBColor, alpha: f64) -> String {
    format!("rgba({},{},{},{})", c.0, c.1, c.2, alpha)
}

/// A colour as the matrix plots write it, interned when it is a palette colour (see `prepare`).
pub fn rgb(c: RGBColor) -> String {
    format!("rgb({}, {}, {})", c.0, c.1, c.2)
}

/// A font string, interned: fonts come in a handful of sizes per device pixel ratio.
pub fn font(css: String) -> String {
    intern(&css);
    css
}
