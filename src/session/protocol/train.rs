//! The training lab's messages: a run's config, its steps and snapshots (the `train` engine's
//! types, as they travel), and why a run stopped.

use serde::{Deserialize, Serialize};

pub use crate::train::{HeadSnapshot, StepStats, TrainConfig};

/// Why a run stopped.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TrainStop {
    /// The page asked (`TrainPause`, `TrainReset`, or a new `Train`).
    Paused,
    /// `until` steps are done.
    Reached,
    /// The loss or a gradient stopped being finite: the message says where; the weights are
    /// those of the last good step.
    Diverged { message: String },
}
