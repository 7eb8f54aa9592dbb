//! GPT-2, DOM-free: load a Hugging Face checkpoint, run it, sample from it.
//!
//! - `config`: the hyper-parameters (`Config`, with presets), read from `config.json`;
//! - `weights`: the checkpoint's tensors under their checkpoint names (`wte`, `h.0.ln_1`, …);
//! - `ops`: the CPU kernels (layer norm, causal attention, linear layers), and `gelu` (the
//!   browser's matrix product, on weights packed at load time, is `numerics::packed`);
//! - `model`: the forward pass with a KV cache, attention capture and head ablation;
//! - `gpu`: the forward pass on the GPU backend (`crate::gpu`), weights and cache on the device;
//! - `engine`: that forward pass on the CPU or on the GPU, one interface;
//! - `sample`: temperature, top-k, top-p and greedy decoding with a seeded RNG;
//! - `stream`: a checkpoint loaded while it downloads, each tensor written straight into its
//!   final buffer (the file is never held whole);
//! - `tokenizer`: GPT-2's byte-level BPE (ids identical to Hugging Face's);
//! - `session`: a loaded model answering the page's questions, and `protocol`, those questions
//!   and answers as the compute worker's messages (the packed attention buffer included);
//! - `llama_session`: a Llama-family model (`crate::llama`) answering the same questions with the
//!   same replies, and `model_session`, either family, told apart by `config.json`.
//!
//! Everything here builds and is tested natively (`tests/gpt2_*.rs`); the browser runs the same
//! code in a Web Worker.

pub mod config;
pub mod download;
pub mod engine;
pub mod generation;
pub use crate::numerics::gelu;
pub mod gpu;
pub mod llama_session;
pub mod manifest;
pub mod model;
pub mod model_session;
pub mod ops;
pub mod protocol;
pub mod sample;
pub mod session;
pub mod stream;
pub mod tokenizer;
pub mod weights;

pub use crate::formats::LoadError;
pub use crate::formats::RunError;
pub use config::Config;
pub use model::{Capture, ForwardOptions, ForwardOutput, Gpt2, KvCache};
pub use sample::Sampling;
