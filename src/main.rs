#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    // A chapter's demos' code (its wasm chunk) starts arriving now, while the page is being built.
    if let Some(location) = web_sys::window().map(|w| w.location()) {
        let (path, query) = (location.pathname().unwrap_or_default(), location.search().unwrap_or_default());
        if let Some(chunk) = attention_live::demos::chunk_of_page(&path, &query) {
            attention_live::demos::preload(chunk);
        }
    }
    leptos::mount::mount_to_body(attention_live::ui::app::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("Attention, live runs in the browser: see README.md (./scripts/serve.sh serves it).");
}
