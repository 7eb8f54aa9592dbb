//! The messages of the probes that ask the model for more than an analysis: one head's queries,
//! keys and values (the Linformer demo), and the attention benchmark's row (the
//! efficient-attention chapter, `Request::AttentionBench`).

use serde::{Deserialize, Serialize};

pub use crate::gpu::bench::AttentionRow;

use super::Token;

/// One head's Q, K and V for a prompt: (T, d) each, row-major.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HeadQkv {
    pub id: u64,
    pub tokens: Vec<Token>,
    pub layer: usize,
    pub head: usize,
    pub d: usize,
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
}
