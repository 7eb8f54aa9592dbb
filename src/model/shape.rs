//! A loaded model's shape as the session and the page see it, the same for every family: each
//! engine fills it from its own config (GPT-2's `n_layer`, a Llama-family model's
//! `num_hidden_layers`, …).

/// The sizes of a decoder model.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub layers: usize,
    /// H, the query heads.
    pub heads: usize,
    /// The key and value heads (H for multi-head attention, fewer with grouped queries).
    pub kv_heads: usize,
    /// D, the width of one head.
    pub head_dim: usize,
    /// C, the model's width.
    pub width: usize,
    /// The context window: the most positions one run may hold.
    pub window: usize,
    pub vocab: usize,
    /// The number of distinct parameters.
    pub params: usize,
}
