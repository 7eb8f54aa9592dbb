//! Small wrappers over browser APIs. Each one fails softly: a missing API (storage disabled,
//! no clipboard) is a value, not a panic.

use leptos::prelude::{document, window};
use wasm_bindgen::{JsCast, JsValue};

/// Which of a demo's `keys` the page's link names (`<demo>.<key>=…` in its query): a value that
/// does not fit what the demo later loads gets a notice only when the link asked for it.
pub fn link_keys(demo: &str, keys: &[&'static str]) -> Vec<&'static str> {
    let given = link_keys_of(demo);
    keys.iter().copied().filter(|k| given.iter().any(|g| g == k)).collect()
}

/// Every key the page's link gives demo `demo` (without the demo's prefix).
pub fn link_keys_of(demo: &str) -> Vec<String> {
    let search = window().location().search().unwrap_or_default();
    let pairs = crate::state::query::parse_query(&search);
    pairs.iter().filter_map(|(k, _)| k.strip_prefix(demo)?.strip_prefix('.').map(str::to_string)).collect()
}

pub fn local_get(key: &str) -> Option<String> {
    window().local_storage().ok().flatten()?.get_item(key).ok().flatten()
}

pub fn local_set(key: &str, value: &str) {
    if let Some(s) = window().local_storage().ok().flatten() {
        let _ = s.set_item(key, value);
    }
}

pub fn location_origin() -> String {
    window().location().origin().unwrap_or_default()
}

pub fn now_ms() -> f64 {
    window().performance().map(|p| p.now()).unwrap_or(0.0)
}

/// Records that a plot finished drawing, for the benchmark (`bench/latency.mjs`) and tests:
/// `window.__alPaints` counts draws, `window.__alLastPaint` holds the time of the last one
/// and `window.__alFirstPaint` of the first (milliseconds since navigation started).
pub fn mark_paint() {
    let w: JsValue = window().into();
    if js_sys::Reflect::get(&w, &"__alFirstPaint".into()).map(|v| v.is_undefined()).unwrap_or(true) {
        let _ = js_sys::Reflect::set(&w, &"__alFirstPaint".into(), &now_ms().into());
    }
    let count = js_sys::Reflect::get(&w, &"__alPaints".into()).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let _ = js_sys::Reflect::set(&w, &"__alPaints".into(), &(count + 1.0).into());
    let _ = js_sys::Reflect::set(&w, &"__alLastPaint".into(), &now_ms().into());
}

/// Starts a download of `bytes_url` (a data: or blob: URL) as `filename`.
fn download_url(filename: &str, url: &str) -> Result<(), String> {
    let a: web_sys::HtmlAnchorElement =
        document().create_element("a").map_err(|_| "cannot create a link")?.unchecked_into();
    a.set_href(url);
    a.set_download(filename);
    a.click();
    Ok(())
}

/// Saves text as a file through a Blob URL.
pub fn download_text(filename: &str, mime: &str, text: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).map_err(|_| "cannot create the file")?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|_| "cannot create a download URL")?;
    let r = download_url(filename, &url);
    let _ = web_sys::Url::revoke_object_url(&url);
    r
}

/// Saves bytes as a file through a Blob URL.
pub fn download_bytes(filename: &str, mime: &str, bytes: &[u8]) -> Result<(), String> {
    let array = js_sys::Uint8Array::from(bytes);
    let parts = js_sys::Array::of1(&array);
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob =
        web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts).map_err(|_| "cannot create the file")?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|_| "cannot create a download URL")?;
    let r = download_url(filename, &url);
    let _ = web_sys::Url::revoke_object_url(&url);
    r
}

/// Saves a canvas as a PNG file.
pub fn download_canvas_png(filename: &str, canvas: &web_sys::HtmlCanvasElement) -> Result<(), String> {
    let url = canvas.to_data_url_with_type("image/png").map_err(|_| "the canvas cannot be exported")?;
    download_url(filename, &url)
}

/// Copies text to the clipboard; resolves to false where the clipboard is unavailable.
pub async fn copy_text(text: String) -> bool {
    let clip = window().navigator().clipboard();
    wasm_bindgen_futures::JsFuture::from(clip.write_text(&text)).await.is_ok()
}

/// GETs a same-site file's bytes, with a message that names the URL when it fails; a bundled
/// model file must be the one the book was built with (`formats::bundled`).
pub async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    use wasm_bindgen_futures::JsFuture;
    let window = web_sys::window().ok_or("no window")?;
    let resp: web_sys::Response = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|_| format!("could not fetch {url}"))?
        .unchecked_into();
    if !resp.ok() {
        return Err(format!("{url} answered HTTP {}", resp.status()));
    }
    let buf =
        JsFuture::from(resp.array_buffer().map_err(|_| "no body")?).await.map_err(|_| "the download broke off")?;
    let bytes = js_sys::Uint8Array::new(&buf).to_vec();
    crate::formats::bundled::check(url, &bytes)?;
    Ok(bytes)
}
