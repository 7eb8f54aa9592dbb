//! Attention, live: an interactive textbook about the attention mechanism.
//!
//! The layers, each importing only those below it (`tests/book/layers.rs`):
//! - `numerics`, `formats`, `state`: pure functions on ndarray (no DOM), the file formats
//!   (safetensors, strict JSON, the checkpoint load error), demo parameters and their URL form;
//! - `gpu`: the wgpu compute backend (WebGPU in the browser), each kernel with a CPU twin and
//!   typed parameters;
//! - `model`: what every model family shares (forward options and outputs, the KV cache, run
//!   errors, limits, sampling, the engine over the CPU and the GPU);
//! - `train`, `seq2seq`, `gpt2`, `llama`: the engines, one per family, DOM-free;
//! - `session`: one `Session` generic over the families (`ModelFamily`), and the compute
//!   worker's protocol;
//! - `kit` (wasm only): what demo views are built from; `demos`: the registry of live demos;
//! - `exercises`: checked exercises (format, expression evaluator, checker, demo goals), DOM-free;
//! - `chapters`: the book's chapters, rendered from `chapters/` at build time;
//! - `ui`, `worker` (wasm only): the Leptos app, and the compute worker around a session.

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
pub mod marian;
pub mod model;
pub mod numerics;
pub mod seq2seq;
pub mod session;
pub mod state;
pub mod train;
pub mod vit;

#[cfg(target_arch = "wasm32")]
pub mod kit;
#[cfg(target_arch = "wasm32")]
pub mod ui;
#[cfg(target_arch = "wasm32")]
pub mod worker;
