//! The compute worker's entry point (built by Trunk as a second wasm binary, so the tokenizer
//! and the engine never weigh on the book's first paint).

#[cfg(target_arch = "wasm32")]
fn main() {
    attention_live::worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("gpt2-worker runs in the browser as a Web Worker.");
}
