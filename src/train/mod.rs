//! The training lab's engine: a small GPT-2-architecture transformer trained from scratch on a
//! toy task (copy, sort, reverse, repeated strings), forward and backward written out per operation in the manner
//! of llm.c, with AdamW. DOM-free: the compute worker runs it in the browser, and the native
//! tests check it against PyTorch (`scripts/train/make_fixtures.py`).
//!
//! Why by hand and not an autodiff crate: see docs/performance.md ("The training engine").
//!
//! - `task`: the character vocabulary, the tasks' sequences and the fixed probe;
//! - `model`: the parameters (Hugging Face GPT-2's names and layouts), forward and backward;
//! - `adamw`: the optimiser and gradient clipping, as PyTorch's;
//! - `trainer`: a run (model + optimiser + batches from the seed), head scores and snapshots;
//! - `export`: the trained model as a GPT-2 checkpoint (`config.json` + `model.safetensors`);
//! - `saved`: a run as bytes, kept in the reader's browser across a reload.

use serde::{Deserialize, Serialize};

pub mod adamw;
pub mod export;
pub mod model;
pub mod saved;
pub mod task;
pub mod trainer;

pub use model::Model;
pub use task::Task;
pub use trainer::{HeadSnapshot, StepStats, Trainer};

/// How the model knows where a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Positions {
    /// A learned vector per position added to the token's embedding (`wpe`, GPT-2's way).
    #[default]
    Learned,
    /// The fixed sine and cosine table of the positional chapter, added to the embedding.
    Sinusoidal,
    /// Queries and keys rotated by their position inside each head (RoPE, adjacent pairs).
    Rope,
    /// Nothing: only the causal mask tells positions apart.
    None,
}

/// The model's shape. `vocab` and `n_positions` come from the task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    pub n_layer: usize,
    pub n_head: usize,
    pub n_embd: usize,
    pub vocab: usize,
    pub n_positions: usize,
    pub mlp: bool,
    pub positions: Positions,
}

/// The largest sizes the lab accepts (the page's sliders stop there too).
pub const MAX_LAYERS: usize = 4;
pub const MAX_HEADS: usize = 8;
pub const MAX_WIDTH: usize = 128;

impl ModelConfig {
    pub fn head_dim(&self) -> usize {
        self.n_embd / self.n_head.max(1)
    }

    /// Refuses sizes that do not fit, naming the constraint.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_LAYERS).contains(&self.n_layer) {
            return Err(format!("layers must be 1 to {MAX_LAYERS} (got {})", self.n_layer));
        }
        if !(1..=MAX_HEADS).contains(&self.n_head) {
            return Err(format!("heads must be 1 to {MAX_HEADS} (got {})", self.n_head));
        }
        if !(1..=MAX_WIDTH).contains(&self.n_embd) {
            return Err(format!("the width must be 1 to {MAX_WIDTH} (got {})", self.n_embd));
        }
        if !self.n_embd.is_multiple_of(self.n_head) {
            return Err(format!(
                "the heads must divide the width: {} heads do not divide {} (try {})",
                self.n_head,
                self.n_embd,
                (1..=self.n_head).rev().find(|h| self.n_embd.is_multiple_of(*h)).unwrap_or(1)
            ));
        }
        if self.positions == Positions::Rope && !self.head_dim().is_multiple_of(2) {
            return Err(format!(
                "RoPE rotates pairs of a head's dimensions, so the head size (width ÷ heads = {}) must be even",
                self.head_dim()
            ));
        }
        if self.vocab == 0 || self.n_positions == 0 {
            return Err("the vocabulary and the positions must not be empty".into());
        }
        Ok(())
    }
}

/// Everything that determines a run: the same config gives the same curves, bit for bit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    pub task: Task,
    /// Items per example (the task's n).
    pub length: usize,
    pub n_layer: usize,
    pub n_head: usize,
    pub n_embd: usize,
    pub mlp: bool,
    pub positions: Positions,
    pub lr: f32,
    pub batch: usize,
    pub steps: usize,
    pub seed: u32,
}

/// Bounds of the optimiser's settings.
pub const MAX_BATCH: usize = 128;
pub const MAX_STEPS: usize = 20_000;

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            task: Task::Repeat,
            length: 8,
            n_layer: 2,
            n_head: 4,
            n_embd: 64,
            mlp: false,
            positions: Positions::Rope,
            lr: 5e-3,
            batch: 32,
            steps: 3000,
            seed: 1,
        }
    }
}

impl TrainConfig {
    pub fn model(&self) -> ModelConfig {
        ModelConfig {
            n_layer: self.n_layer,
            n_head: self.n_head,
            n_embd: self.n_embd,
            vocab: task::VOCAB,
            n_positions: self.task.input_len(self.length),
            mlp: self.mlp,
            positions: self.positions,
        }
    }

    /// Whether `other` is the same run, perhaps with another number of steps: the learning
    /// rate is constant, so the steps taken do not depend on how many are planned.
    pub fn same_run(&self, other: &TrainConfig) -> bool {
        *self == TrainConfig { steps: self.steps, ..other.clone() }
    }

    /// Refuses settings that do not fit, naming the constraint.
    pub fn check(&self) -> Result<(), String> {
        self.task.check_length(self.length)?;
        self.model().check()?;
        if !(self.lr.is_finite() && self.lr > 0.0 && self.lr <= 1.0) {
            return Err(format!("the learning rate must be above 0 and at most 1 (got {})", self.lr));
        }
        if !(1..=MAX_BATCH).contains(&self.batch) {
            return Err(format!("the batch size must be 1 to {MAX_BATCH} (got {})", self.batch));
        }
        if !(1..=MAX_STEPS).contains(&self.steps) {
            return Err(format!("the number of steps must be 1 to {MAX_STEPS} (got {})", self.steps));
        }
        Ok(())
    }
}
