//! The page's record of a training run, DOM-free: what the worker reported (every step's loss
//! and accuracy, the head snapshots), what it is doing, and what the view shows at a step.

use serde::Serialize;

use crate::session::protocol::{Reply, TrainStop};
use crate::train::{HeadSnapshot, StepStats, TrainConfig};

/// What the run is doing.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub enum Phase {
    /// Nothing trained yet for these settings.
    #[default]
    Idle,
    /// Steps are being taken; `until` is where it will stop (a link's step, or the last step).
    Training {
        until: usize,
    },
    Paused,
    Done,
    /// The loss stopped being finite: the message; the heads are those of the last good step.
    Diverged(String),
    /// The settings were refused, or the worker failed: the message.
    Failed(String),
}

/// The main button: its label and what a press does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MainAction {
    Train,
    Pause,
    Resume,
    /// Every step planned is done: nothing to do until the reader asks for more steps.
    Trained,
}

impl MainAction {
    pub fn label(self) -> &'static str {
        match self {
            MainAction::Train => "Train",
            MainAction::Pause => "Pause",
            MainAction::Resume => "Resume",
            MainAction::Trained => "Trained",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct RunLog {
    /// The settings this record belongs to (a change of settings starts a fresh record).
    pub config: Option<TrainConfig>,
    /// The request whose replies are being recorded (older ones are ignored).
    #[serde(skip)]
    pub id: Option<u64>,
    pub phase: Phase,
    /// One entry per step done, in order.
    pub history: Vec<StepStats>,
    /// Snapshots by step, ascending (at most `trainer::MAX_SNAPSHOTS` + 2).
    #[serde(skip)]
    pub snapshots: Vec<HeadSnapshot>,
    /// The last slice's speed.
    pub steps_per_s: f64,
    /// The run was restored from this browser's copy, at this step (`Reply::TrainRestored`).
    pub restored: Option<usize>,
}

impl RunLog {
    /// A fresh record for `config`, for the run asked for by request `id`.
    pub fn start(&mut self, config: &TrainConfig, id: Option<u64>, until: usize) {
        if !self.config.as_ref().is_some_and(|c| c.same_run(config)) || self.done() > until {
            *self = RunLog::default();
        }
        self.config = Some(config.clone());
        self.id = id;
        self.phase = Phase::Training { until };
    }

    /// Steps done.
    pub fn done(&self) -> usize {
        self.history.last().map_or(0, |s| s.step)
    }

    /// Steps are being taken (not merely the untrained model's heads being prepared).
    pub fn training(&self) -> bool {
        matches!(self.phase, Phase::Training { until } if until > 0)
    }

    /// What the main button does now, for a run of `steps` steps. While the untrained model's
    /// heads are still being prepared it trains: the run supersedes the preview.
    pub fn main_action(&self, steps: usize) -> MainAction {
        match self.phase {
            _ if self.training() => MainAction::Pause,
            _ if self.done() >= steps => MainAction::Trained,
            Phase::Paused | Phase::Done if self.done() > 0 => MainAction::Resume,
            _ => MainAction::Train,
        }
    }

    /// Takes in a reply of the worker; false when it was not for this run.
    pub fn apply(&mut self, reply: &Reply) -> bool {
        if reply.id().is_none() || reply.id() != self.id {
            return false;
        }
        match reply {
            Reply::TrainProgress { steps, steps_per_s, .. } => {
                // Only steps that follow on: a duplicate or a gap would break the curve.
                for s in steps {
                    if s.step == self.done() + 1 {
                        self.history.push(*s);
                    }
                }
                if *steps_per_s > 0.0 {
                    self.steps_per_s = *steps_per_s;
                }
            }
            Reply::TrainRestored { step, .. } => self.restored = Some(*step),
            Reply::TrainStopped { reason, .. } => {
                self.phase = match reason {
                    TrainStop::Paused => Phase::Paused,
                    // Step 0 reached: the untrained model's heads, shown before Train.
                    TrainStop::Reached if self.done() == 0 => Phase::Idle,
                    TrainStop::Reached => {
                        let last = self.config.as_ref().map_or(0, |c| c.steps);
                        if self.done() >= last {
                            Phase::Done
                        } else {
                            Phase::Paused
                        }
                    }
                    TrainStop::Diverged { message } => Phase::Diverged(message.clone()),
                };
            }
            Reply::Error { message, .. } => self.phase = Phase::Failed(message.clone()),
            _ => return false,
        }
        true
    }

    /// Keeps a snapshot (replacing one of the same step), in step order.
    pub fn snapshot(&mut self, id: u64, s: HeadSnapshot) {
        if Some(id) != self.id {
            return;
        }
        match self.snapshots.binary_search_by_key(&s.step, |x| x.step) {
            Ok(i) => self.snapshots[i] = s,
            Err(i) => self.snapshots.insert(i, s),
        }
    }

    /// The snapshot shown at `step` (0: the latest): the last one at or before it.
    pub fn at(&self, step: usize) -> Option<&HeadSnapshot> {
        if step == 0 {
            return self.snapshots.last();
        }
        let i = self.snapshots.partition_point(|s| s.step <= step);
        self.snapshots.get(i.checked_sub(1)?)
    }

    /// The memory the snapshots hold, in bytes (their attention weights and scores).
    pub fn snapshot_bytes(&self) -> usize {
        self.snapshots.iter().map(|s| 4 * (s.attention.len() + s.previous.len() + s.induction.len())).sum()
    }

    /// The first step at which the smoothed loss fell below `threshold` (the mean of the 20
    /// steps ending there): the moment the view marks as "solved".
    pub fn first_below(&self, threshold: f32) -> Option<usize> {
        const WINDOW: usize = 20;
        let losses: Vec<f32> = self.history.iter().map(|s| s.loss).collect();
        (WINDOW..=losses.len())
            .find(|&end| losses[end - WINDOW..end].iter().sum::<f32>() / (WINDOW as f32) < threshold)
            .map(|end| self.history[end - 1].step)
    }
}
