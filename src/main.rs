#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(attention_live::ui::app::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("Attention, live runs in the browser: see README.md (./scripts/serve.sh serves it).");
}
