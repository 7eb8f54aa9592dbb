//! The model service: a loaded model answering the page's questions, for every family, DOM-free
//! (the compute worker is a thin shell around it, and the native tests run the same code).
//!
//! - `serve`: `Session<F>`, one loaded model of family `F`: the GPU attach with its self-test,
//!   the fallback to the CPU with a notice, analysis (tokens, attention, next-token
//!   probabilities, knock-outs), one head's Q, K and V, and generation (`generation`, with
//!   the tokens that end a text);
//! - `family`: what a family gives the session (`ModelFamily`: its CPU model, GPU twin and
//!   tokenizer); `gpt2` and `llama` implement it;
//! - `inside`: looking inside a loaded model: the logit lens, activation patching sweeps (one
//!   run at a time, for progress and Stop) and head detectors;
//! - `any`: `ModelSession`, a session of whichever family `config.json` names (the worker's);
//! - `protocol`: the compute worker's typed messages, the same types on both ends, split by
//!   concern (models, the training lab, probes);
//! - `translate`: a translation model (Marian) answering one question, the text to translate,
//!   with the translation, the beams and all three attentions;
//! - `vision`: a Vision Transformer answering one question, a picture, with its prediction and
//!   every attention over its patches;
//! - `manifest`: where the hub's models live and what their files must be (size and SHA-256);
//!   `download`: the checks a model download goes through.

pub mod any;
pub mod download;
pub mod family;
pub mod generation;
pub mod gpt2;
pub mod inside;
pub mod llama;
pub mod manifest;
pub mod protocol;
pub mod serve;
pub mod translate;
pub mod vision;

pub use any::{ends_text, family, ModelSession};
pub use family::ModelFamily;
pub use generation::{until_end_of_text, Generation};
pub use serve::Session;

/// A GPT-2 session (`session::gpt2` reads its checkpoint and tokenizer).
pub type Gpt2Session = Session<crate::gpt2::Gpt2>;
/// A Llama-family session (`session::llama`).
pub type LlamaSession = Session<crate::llama::Llama>;

/// What the page is told when a GPU run failed and the model moved to the CPU: the error's first
/// line (the rest, the driver's report, goes to the console).
pub fn gpu_failed(e: &crate::gpu::GpuError) -> String {
    let full = e.to_string();
    crate::gpu::log(&full);
    format!("WebGPU failed ({}); the model now runs on the CPU.", full.lines().next().unwrap_or_default().trim())
}
