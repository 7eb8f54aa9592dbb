//! The GPU backend (Mesa's lavapipe here and in CI; the test command fails these without an
//! adapter): every kernel against its CPU twin, typed parameters against the WGSL, both families'
//! forward passes, the session's self-test and fallback, and the device work per token.
//!
//! The native tests build as four binaries (`tests/engines`, `tests/gpu`, `tests/book` and
//! `tests/threads.rs`): linking dominates a native test run on two cores.
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

#[path = "../common/mod.rs"]
mod common;

mod gpt2_backend;
mod gpu_counts;
mod gpu_kernels;
mod gpu_llama_kernels;
mod inside_gpu;
mod llama_gpu;
mod marian_gpu;
mod vit_gpu;
