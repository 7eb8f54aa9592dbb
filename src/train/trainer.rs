//! A training run: the model, AdamW, and batches drawn from the run's seed, so the same config
//! gives the same losses bit for bit; head scores on the fixed probe; snapshots for the scrubber.

use serde::{Deserialize, Serialize};

use super::adamw::{clip_grad_norm, AdamW};
use super::task::{self, Batch};
use super::{Model, TrainConfig};
use crate::numerics::rng::Rng;

/// Weight decay of the matrices (AdamW's decoupled decay; biases and norms have none).
pub const WEIGHT_DECAY: f32 = 0.1;
/// Gradients are clipped to this global norm before each step.
pub const CLIP: f32 = 1.0;
/// At most this many head snapshots per run (plus the one at step 0): the capture interval is
/// chosen from the run's length so that the scrubber's memory is bounded.
pub const MAX_SNAPSHOTS: usize = 100;

/// One optimiser step's figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepStats {
    /// Steps done after this one (1 for the first).
    pub step: usize,
    /// The batch's loss before the step, and the fraction of scored targets predicted right.
    pub loss: f32,
    pub accuracy: f32,
    /// The gradient's global norm before clipping.
    pub grad_norm: f32,
}

/// The heads as they were after `step` steps: every head's attention on the probe and its
/// scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadSnapshot {
    pub step: usize,
    /// (L, H, T, T) flattened.
    #[serde(skip)]
    pub attention: Vec<f32>,
    /// Per head, layer by layer (L · H each).
    pub previous: Vec<f32>,
    pub induction: Vec<f32>,
    /// The probe's loss (over its scored targets).
    pub probe_loss: f32,
}

pub struct Trainer {
    pub config: TrainConfig,
    model: Model,
    opt: AdamW,
    rng: Rng,
    step: usize,
    probe: Vec<u32>,
    /// Whether each probe position's next token is scored (for the probe's loss).
    probe_scored: Vec<bool>,
}

impl Trainer {
    pub fn new(config: TrainConfig) -> Result<Trainer, String> {
        config.check()?;
        let seed = config.seed as u64;
        // Two streams from one seed: the initial weights and the batches.
        let model = Model::init(&config.model(), seed.wrapping_mul(2).wrapping_add(1))?;
        let opt = AdamW::new(model.params.len(), config.lr);
        let (probe, probe_scored) = config.task.scored_probe(config.length);
        Ok(Trainer { model, opt, rng: Rng::new(seed.wrapping_mul(2)), step: 0, probe, probe_scored, config })
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    pub fn step_count(&self) -> usize {
        self.step
    }

    pub fn done(&self) -> bool {
        self.step >= self.config.steps
    }

    pub fn probe(&self) -> &[u32] {
        &self.probe
    }

    /// Capture the heads every this many steps.
    pub fn snapshot_every(&self) -> usize {
        self.config.steps.div_ceil(MAX_SNAPSHOTS).max(1)
    }

    /// One AdamW step on a fresh batch. A loss or gradient that is not finite stops the run
    /// with a message and leaves the parameters as they were (the last good state).
    pub fn step(&mut self) -> Result<StepStats, String> {
        let batch: Batch = self.config.task.batch(self.config.length, self.config.batch, &mut self.rng);
        let fwd = self.model.forward(&batch)?;
        let mut grad = self.model.backward(&batch, &fwd);
        let grad_norm = clip_grad_norm(&mut grad, CLIP);
        if !fwd.loss.is_finite() || !grad_norm.is_finite() {
            return Err(format!(
                "training diverged at step {}: the loss became {} (try a smaller learning rate); \
                 the heads shown are from the last good step",
                self.step + 1,
                if fwd.loss.is_finite() { "finite but the gradient did not".to_string() } else { fwd.loss.to_string() }
            ));
        }
        let groups = self.model.decay_groups(WEIGHT_DECAY);
        self.opt.step(&mut self.model.params, &grad, &groups);
        if self.model.params.iter().any(|v| !v.is_finite()) {
            return Err(format!("training diverged at step {}: a weight became infinite", self.step + 1));
        }
        self.step += 1;
        let accuracy = if fwd.counted > 0 { fwd.correct as f32 / fwd.counted as f32 } else { 0.0 };
        Ok(StepStats { step: self.step, loss: fwd.loss, accuracy, grad_norm })
    }

    /// AdamW's moments and step count (`saved`).
    pub fn moments(&self) -> (&[f32], &[f32], i32) {
        self.opt.moments()
    }

    /// The batch generator's state (`saved`).
    pub fn rng_state(&self) -> u64 {
        self.rng.state()
    }

    /// Puts this fresh trainer in a saved run's state at `step` (`saved::decode` checks it).
    pub fn restore(
        &mut self,
        step: usize,
        rng: u64,
        params: Vec<f32>,
        moments: (Vec<f32>, Vec<f32>, i32),
    ) -> Result<(), String> {
        if params.len() != self.model.params.len() {
            return Err(format!("{} weights for a model of {}", params.len(), self.model.params.len()));
        }
        let (m, v, t) = moments;
        self.opt.set_moments(m, v, t)?;
        self.model.params = params;
        self.rng = Rng::new(rng);
        self.step = step;
        Ok(())
    }

    /// Makes one weight NaN, so that the next step diverges (tests of the divergence path).
    #[doc(hidden)]
    pub fn poison_for_tests(&mut self) {
        self.model.params[0] = f32::NAN;
    }

    /// The heads now, on the probe.
    pub fn snapshot(&self) -> HeadSnapshot {
        let t = self.probe.len();
        // The probe's last input has its target cut off with the rest of the example.
        let targets =
            (0..t).map(|p| if self.probe_scored[p] && p + 1 < t { self.probe[p + 1] as i32 } else { -1 }).collect();
        let batch = Batch { b: 1, t, ids: self.probe.clone(), targets };
        let fwd = self.model.forward(&batch).expect("the probe fits the model it was made for");
        let attention = fwd.attention();
        let heads = self.config.n_layer * self.config.n_head;
        let (previous, induction) =
            (0..heads).map(|k| head_scores(&attention[k * t * t..(k + 1) * t * t], &self.probe)).unzip();
        HeadSnapshot { step: self.step, attention, previous, induction, probe_loss: fwd.loss }
    }
}

/// One head's (previous-token score, induction score) from its (T, T) attention on `tokens`:
/// - previous-token: the mean over queries t ≥ 1 of A[t, t − 1];
/// - induction: for query t, S_t = { j : 1 ≤ j < t, tokens[j − 1] = tokens[t] } (just after an
///   earlier occurrence of the current token); the mean of Σ_{j ∈ S_t} A[t, j] over the queries
///   whose S_t is not empty (0 when there are none).
pub fn head_scores(att: &[f32], tokens: &[u32]) -> (f32, f32) {
    let t = tokens.len();
    let previous = if t > 1 { (1..t).map(|i| att[i * t + i - 1]).sum::<f32>() / (t - 1) as f32 } else { 0.0 };
    let (mut sum, mut queries) = (0.0f32, 0);
    for i in 0..t {
        let hits: Vec<usize> = (1..i).filter(|&j| tokens[j - 1] == tokens[i]).collect();
        if !hits.is_empty() {
            sum += hits.iter().map(|&j| att[i * t + j]).sum::<f32>();
            queries += 1;
        }
    }
    (previous, if queries > 0 { sum / queries as f32 } else { 0.0 })
}

/// The probe as text, one character per token.
pub fn probe_text(tokens: &[u32]) -> String {
    tokens.iter().map(|&id| task::token_char(id)).collect()
}
