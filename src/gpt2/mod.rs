//! GPT-2, DOM-free: load a Hugging Face checkpoint, run it, sample from it.
//!
//! - `config`: the hyper-parameters (`Config`, with presets), read from `config.json`;
//! - `weights`: the checkpoint's tensors under their checkpoint names (`wte`, `h.0.ln_1`, …);
//! - `ops`: the CPU kernels (layer norm, causal attention, linear layers), and `gelu` (the
//!   browser's matrix product, on weights packed at load time, is `numerics::packed`);
//! - `model`: the forward pass with a KV cache, attention capture and head ablation;
//! - `gpu`: the forward pass on the GPU backend (`crate::gpu`), weights and cache on the device;
//! - `engine`: that forward pass on the CPU or on the GPU, one interface (`crate::model::engine`);
//! - `stream`: a checkpoint loaded while it downloads, each tensor written straight into its
//!   final buffer (the file is never held whole; `model::stream` reads the bytes);
//! - `tokenizer`: GPT-2's byte-level BPE (ids identical to Hugging Face's).
//!
//! The session that serves it to the page is `crate::session` (`session::gpt2` names its
//! tokenizer and start token).
//!
//! Everything here builds and is tested natively (`tests/engines/gpt2_*.rs`, `tests/gpu/`); the
//! browser runs the same code in a Web Worker.

pub mod config;
pub mod engine;
pub use crate::numerics::gelu;
pub mod gpu;
pub mod model;
pub mod ops;
pub mod stream;
pub mod tokenizer;
pub mod weights;

pub use crate::formats::LoadError;
// The types every family shares (`crate::model`), under this engine's name too.
pub use crate::model::sample::Sampling;
pub use crate::model::{Capture, ForwardOptions, ForwardOutput, KvCache, RunError};
pub use config::Config;
pub use model::Gpt2;
