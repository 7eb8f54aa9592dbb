//! The book: every chapter's numerics and demos against closed forms and hand arithmetic, the
//! numbers the prose quotes, the exercises, the registry and links, the built site, and the
//! library's layers.
//!
//! The native tests build as four binaries (`tests/engines`, `tests/gpu`, `tests/book` and
//! `tests/threads.rs`): linking dominates a native test run on two cores.
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

#[path = "../common/mod.rs"]
mod common;

mod attention;
mod attention_cost;
mod core_demos;
mod exercises;
mod flash_attention;
mod format;
mod gpt2_demo;
mod kernel_regression;
mod layers;
mod low_rank;
mod offline;
mod positional_block;
mod prose_numbers;
mod real_model_demos;
mod registry;
mod security;
mod seq2seq;
mod site;
mod sliding_window;
mod soft_lookup;
mod softmax;
mod url_state;
