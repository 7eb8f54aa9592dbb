//! The memory a KV cache takes: every layer keeps, for every position so far, one key and one
//! value vector per key-value head.
//!
//!   bytes = 2 (K and V) · layers · kv_heads · head_size · positions · batch · bytes per value
//!
//! Multi-head attention has as many key-value heads as query heads; grouped-query attention
//! (GQA) shares each key-value head among a group of query heads; multi-query attention (MQA)
//! has one. A sliding window (Mistral) caps the positions kept at the window.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KvShape {
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_size: usize,
    /// Positions in the cache (the context, or the window when one caps it).
    pub positions: usize,
    pub batch: usize,
    pub bytes_per_value: usize,
}

impl KvShape {
    /// Bytes per position (one token of one sequence). In u64: the browser's usize is 32
    /// bits, and a cache of 4 GiB or more would wrap.
    pub fn bytes_per_token(&self) -> u64 {
        2 * self.layers as u64 * self.kv_heads as u64 * self.head_size as u64 * self.bytes_per_value as u64
    }
    pub fn bytes(&self) -> u64 {
        self.bytes_per_token() * self.positions as u64 * self.batch as u64
    }
}

/// Published shapes of real models (layers, width / heads, KV heads, context; window where the
/// cache rolls), for the table beside the calculator.
pub struct Model {
    pub name: &'static str,
    pub layers: usize,
    pub width: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub context: usize,
    pub window: Option<usize>,
    /// The published parameter count, where the book compares the cache with the weights.
    pub params: Option<u64>,
}

pub static MODELS: &[Model] = &[
    Model {
        name: "GPT-2 small (MHA)",
        layers: 12,
        width: 768,
        heads: 12,
        kv_heads: 12,
        context: 1024,
        window: None,
        params: None,
    },
    Model {
        name: "GPT-2 XL (MHA)",
        layers: 48,
        width: 1600,
        heads: 25,
        kv_heads: 25,
        context: 1024,
        window: None,
        params: None,
    },
    // Llama 2 7B's 6,738,415,616 parameters: 32 layers of 4 · 4096² (attention) + 3 · 4096 · 11008
    // (the gated feed-forward) + 2 · 4096 (norms) = 202,383,360 each, plus 2 · 32000 · 4096 for the
    // untied embedding and output matrices, plus 4096 for the final norm.
    Model {
        name: "Llama 2 7B (MHA)",
        layers: 32,
        width: 4096,
        heads: 32,
        kv_heads: 32,
        context: 4096,
        window: None,
        params: Some(6_738_415_616),
    },
    Model {
        name: "Llama 3 8B (GQA, 8 KV heads)",
        layers: 32,
        width: 4096,
        heads: 32,
        kv_heads: 8,
        context: 8192,
        window: None,
        params: None,
    },
    Model {
        name: "Mistral 7B (GQA, window 4096)",
        layers: 32,
        width: 4096,
        heads: 32,
        kv_heads: 8,
        context: 32768,
        window: Some(4096),
        params: None,
    },
    Model {
        name: "Falcon 7B (MQA)",
        layers: 32,
        width: 4544,
        heads: 71,
        kv_heads: 1,
        context: 2048,
        window: None,
        params: None,
    },
];

impl Model {
    /// The cache of one full-context sequence in 16-bit values.
    pub fn shape(&self) -> KvShape {
        KvShape {
            layers: self.layers,
            heads: self.heads,
            kv_heads: self.kv_heads,
            head_size: self.width / self.heads,
            positions: self.window.map_or(self.context, |w| w.min(self.context)),
            batch: 1,
            bytes_per_value: 2,
        }
    }

    /// The weights in 16-bit values (2 bytes per parameter), where the count is known.
    pub fn weight_bytes(&self) -> Option<u64> {
        self.params.map(|p| 2 * p)
    }
}
