//! The reader's own picture, as RGBA pixels the compute worker takes: a file (chosen, dropped,
//! pasted, or taken with the camera where the browser offers it), or a drawing on a pad. Nothing
//! leaves the browser. A file that is not a picture, is too large, or cannot be decoded is refused
//! with the reason; a picture of more than [`MAX_PIXELS`] is scaled down first, and says so.

use std::cell::RefCell;
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, HtmlImageElement};

/// The largest file read (a camera's photo is a few MB).
pub const MAX_FILE_BYTES: f64 = 50e6;
/// Pictures with more pixels are scaled down in the page before they go to the model.
pub const MAX_PIXELS: f64 = 16e6;

/// A picture's pixels: `width` × `height`, 4 bytes each (RGBA, row by row).
#[derive(Debug, Clone, PartialEq)]
pub struct Rgba {
    pub width: usize,
    pub height: usize,
    pub bytes: std::sync::Arc<Vec<u8>>,
    /// What the page did to it (scaled down), to say beside it.
    pub note: Option<String>,
}

pub(super) fn context(c: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    c.get_context("2d").ok().flatten()?.dyn_into().ok()
}

/// A canvas's pixels.
pub fn from_canvas(c: &HtmlCanvasElement) -> Option<Rgba> {
    let (w, h) = (c.width(), c.height());
    let data = context(c)?.get_image_data(0.0, 0.0, f64::from(w), f64::from(h)).ok()?;
    Some(Rgba { width: w as usize, height: h as usize, bytes: std::sync::Arc::new(data.data().0), note: None })
}

/// Reads a file as a picture; `done` hears the pixels, or why there are none.
pub fn read_file(file: web_sys::File, done: impl FnOnce(Result<Rgba, String>) + 'static) {
    let name = file.name();
    let kind = file.type_();
    if !kind.starts_with("image/") {
        let what = if kind.is_empty() { "of no known type".to_string() } else { format!("a file of type {kind}") };
        return done(Err(format!("“{name}” is {what}, not a picture: choose a PNG, JPEG, GIF or WebP file")));
    }
    if file.size() > MAX_FILE_BYTES {
        let mb = file.size() / 1e6;
        return done(Err(format!("“{name}” is {mb:.0} MB: pictures up to {:.0} MB are read", MAX_FILE_BYTES / 1e6)));
    }
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&file) else {
        return done(Err(format!("“{name}” could not be opened")));
    };
    let Ok(img) = HtmlImageElement::new() else { return done(Err("this browser cannot show pictures".into())) };
    let done = Rc::new(RefCell::new(Some(done)));
    let finish = {
        let (done, url) = (done.clone(), url.clone());
        move |r: Result<Rgba, String>| {
            let _ = web_sys::Url::revoke_object_url(&url);
            if let Some(d) = done.borrow_mut().take() {
                d(r)
            }
        }
    };
    let loaded = {
        let (img, finish, name) = (img.clone(), finish.clone(), name.clone());
        Closure::once_into_js(move || finish(pixels(&img).ok_or_else(|| format!("“{name}” has no pixels to read"))))
    };
    let failed = Closure::once_into_js(move || {
        let why = "it is damaged, or in a format this browser does not decode";
        finish(Err(format!("“{name}” could not be read as a picture: {why}")))
    });
    img.set_onload(Some(loaded.unchecked_ref()));
    img.set_onerror(Some(failed.unchecked_ref()));
    img.set_src(&url);
}

/// A decoded image's pixels on white (a transparent picture's see-through parts become paper),
/// scaled down to [`MAX_PIXELS`] if larger.
fn pixels(img: &HtmlImageElement) -> Option<Rgba> {
    let (w, h) = (f64::from(img.natural_width()), f64::from(img.natural_height()));
    if w < 1.0 || h < 1.0 {
        return None;
    }
    // Within the pixels, and within the image processor's largest side.
    let side = crate::vit::preprocess::MAX_SIDE as f64;
    let scale = (MAX_PIXELS / (w * h)).sqrt().min(side / w.max(h)).min(1.0);
    let (sw, sh) = ((w * scale).round().max(1.0), (h * scale).round().max(1.0));
    let c: HtmlCanvasElement = document().create_element("canvas").ok()?.unchecked_into();
    c.set_width(sw as u32);
    c.set_height(sh as u32);
    let ctx = context(&c)?;
    ctx.set_fill_style_str("#ffffff");
    ctx.fill_rect(0.0, 0.0, sw, sh);
    ctx.draw_image_with_html_image_element_and_dw_and_dh(img, 0.0, 0.0, sw, sh).ok()?;
    let mut out = from_canvas(&c)?;
    if scale < 1.0 {
        out.note = Some(format!("Scaled down in the page from {w} × {h} to {sw} × {sh} pixels first."));
    }
    Some(out)
}

/// The first picture file of a list (a drop's, a paste's, a file input's).
fn first_file(files: Option<web_sys::FileList>) -> Option<web_sys::File> {
    files.and_then(|f| f.get(0))
}

/// Where the reader gives a picture: the drawing pad, a file chosen or taken with the camera, a
/// picture dropped or pasted anywhere on the page. `take` hears each picture, or why a file
/// is not one; `note` is said under the buttons (a picture scaled down).
#[component]
pub fn PictureInput(
    pad: u32,
    take: Callback<Result<Rgba, String>>,
    #[prop(into)] note: Signal<Option<String>>,
) -> impl IntoView {
    let take_file = move |file: Option<web_sys::File>| {
        if let Some(f) = file {
            read_file(f, move |r| {
                // The reader may have left the chapter while the picture decoded.
                let _ = take.try_run(r);
            })
        }
    };
    let on_input = move |e: web_sys::Event| {
        let input = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
        take_file(first_file(input.as_ref().and_then(|i| i.files())));
        if let Some(i) = input {
            i.set_value("");
        }
    };
    // A file dropped anywhere on the page is the reader's picture (rather than the browser
    // leaving the book to open it).
    let over = window_event_listener(leptos::ev::dragover, |e: web_sys::DragEvent| e.prevent_default());
    let drop = window_event_listener(leptos::ev::drop, move |e: web_sys::DragEvent| {
        e.prevent_default();
        take_file(first_file(e.data_transfer().and_then(|d| d.files())));
    });
    let paste = window_event_listener(leptos::ev::paste, move |e: web_sys::ClipboardEvent| {
        if let Some(f) = first_file(e.clipboard_data().and_then(|d| d.files())) {
            e.prevent_default();
            take_file(Some(f));
        }
    });
    on_cleanup(move || {
        paste.remove();
        over.remove();
        drop.remove();
    });
    let drawn = Callback::new(move |p: Rgba| take.run(Ok(p)));
    view! {
        <div class="picture-input">
            <super::draw_pad::DrawPad size=pad drawn=drawn/>
            <div class="picture-files">
                <label class="file-button">"Choose a picture…"
                    <input type="file" accept="image/*" on:change=on_input/></label>
                <label class="file-button">"Take a photo…"
                    <input type="file" accept="image/*" capture="environment" on:change=on_input/></label>
                <p class="muted">"Or drop a picture on the page, or paste one. It stays on this computer."</p>
                {move || note.get().map(|n| view! { <p class="muted">{n}</p> })}
            </div>
        </div>
    }
}
