//! Attention, live: an interactive textbook about the attention mechanism.
//!
//! - `numerics`: pure functions on ndarray (no DOM), tested natively;
//! - `formats`: the safetensors container and the checkpoint load error;
//! - `state`: demo parameters and their URL form;
//! - `demos`: the registry of live demos;
//! - `gpt2`: the GPT-2 engine (loader, forward pass, sampling, tokenizer), DOM-free;
//! - `llama`: the Llama-family engine (RoPE, grouped-query attention, RMSNorm, SwiGLU), DOM-free;
//! - `gpu`: the wgpu compute backend (WebGPU in the browser), each kernel with a CPU twin;
//! - `exercises`: checked exercises (format, expression evaluator, checker, demo goals), DOM-free;
//! - `chapters`: the book's chapters, rendered from `chapters/` at build time;
//! - `ui` (wasm only): the Leptos app;
//! - `worker` (wasm only): the compute worker around `gpt2::session`, speaking `gpt2::protocol`.

// The threaded worker build (nightly, scripts/build_threads.sh): its pool threads sleep and wake
// with wasm's wait and notify instructions (numerics::par::spin).
#![cfg_attr(all(target_arch = "wasm32", target_feature = "atomics"), feature(stdarch_wasm_atomic_wait))]

pub mod chapters;
pub mod demos;
pub mod exercises;
pub mod formats;
pub mod gpt2;
pub mod gpu;
pub mod llama;
pub mod model;
pub mod numerics;
pub mod seq2seq;
pub mod session;
pub mod state;
pub mod train;

#[cfg(target_arch = "wasm32")]
pub mod kit;
#[cfg(target_arch = "wasm32")]
pub mod ui;
#[cfg(target_arch = "wasm32")]
pub mod worker;
