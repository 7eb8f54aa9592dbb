//! What a forward pass is asked for and what it returns, the same for every decoder family and
//! both backends (the CPU's `forward` and the GPU's).

use ndarray::{Array2, Array3};

use super::{Capture, Patches, RunError};

#[derive(Debug, Clone, Default)]
pub struct ForwardOptions {
    pub capture: Capture,
    /// (layer, query head) pairs whose output is zeroed before the output projection (the head
    /// is "knocked out"); its keys and values are still cached (for the other heads of its group,
    /// in grouped-query attention).
    pub ablate: Vec<(usize, usize)>,
    /// Logits for every new token instead of only the last.
    pub all_logits: bool,
    /// Keep the residual stream after the embeddings and after each block.
    pub hidden_states: bool,
    /// Also keep every layer's weights shrunk to at most n × n per head (each cell the largest
    /// weight of its block): a model view of long prompts without storing every T × T matrix.
    pub thumbnails: Option<usize>,
    /// Keep each layer's heads' concatenated output before the output projection.
    pub head_outputs: bool,
    /// Values written in place of what the pass computes (`model::patch`).
    pub patches: Patches,
}

pub struct ForwardOutput {
    /// (T, vocab), or (1, vocab) for the last token only.
    pub logits: Array2<f32>,
    /// Per layer, when captured: (H, T, S) per query head, S = all positions so far.
    pub attentions: Vec<Option<Array3<f32>>>,
    /// [embeddings, block 0 output, …, block L−1 output], each (T, C), when asked for.
    pub hidden_states: Vec<Array2<f32>>,
    /// Per layer, when asked for: (H, min(T, n), min(S, n)), each head's weights max-pooled.
    pub thumbnails: Vec<Array3<f32>>,
    /// Per layer, when asked for: (T, H·D), the heads' outputs side by side before the output
    /// projection (a knocked-out head's are zero, a patched head's the patch).
    pub head_outputs: Vec<Array2<f32>>,
}

impl ForwardOutput {
    /// The output, or `RunError::NotFinite` when a logit overflowed: NaN scores would reach the
    /// page as JSON nulls ("unreadable reply"), so the run is refused with what is wrong.
    pub fn finite(self) -> Result<Self, RunError> {
        if self.logits.iter().all(|v| v.is_finite()) {
            Ok(self)
        } else {
            Err(RunError::NotFinite)
        }
    }
}
