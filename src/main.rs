#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    // A chapter's demos' code (its wasm chunk) starts arriving now, while the page is being built.
    if let Some(path) = web_sys::window().and_then(|w| w.location().pathname().ok()) {
        let slug = path.trim_matches('/').split('/').next().unwrap_or_default();
        attention_live::demos::preload(&slug.replace('-', "_"));
    }
    leptos::mount::mount_to_body(attention_live::ui::app::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("Attention, live runs in the browser: see README.md (./scripts/serve.sh serves it).");
}
