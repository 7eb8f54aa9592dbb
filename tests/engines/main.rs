//! The model engines and the session, natively: GPT-2 and the Llama family against Hugging Face
//! fixtures, their loaders, tokenizers and sampling, the training lab's engine, the worker's
//! protocol and the session.
//!
//! The native tests build as four binaries (`tests/engines`, `tests/gpu`, `tests/book` and
//! `tests/threads.rs`): linking dominates a native test run on two cores.
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

#[path = "../common/mod.rs"]
mod common;

mod fuzz_loader;
mod gpt2_bundled;
mod gpt2_chars;
mod gpt2_compare;
mod gpt2_loader;
mod gpt2_ops;
mod gpt2_reference;
mod gpt2_sampling;
mod inside;
mod llama;
mod llama_bundled;
mod llama_tokenizer;
mod marian;
mod protocol;
mod session;
mod stream;
mod train;
mod vit;
