//! The training lab's runs in the worker: one run at a time, advanced in slices of about 50 ms
//! so that the worker reads the page's messages (a pause, a reset) between slices.

use std::cell::{Cell, RefCell};

use super::dispatch::yield_now;
use super::{error, post, post_bytes};
use crate::session::protocol::{Reply, TrainStop};
use crate::train::{export, HeadSnapshot, TrainConfig, Trainer};

/// How long one slice of steps may run before the worker reports and reads its messages.
const SLICE_MS: f64 = 50.0;

#[derive(Default)]
pub struct Runs {
    trainer: RefCell<Option<Trainer>>,
    /// Bumped by every request that ends the run in progress: a slice loop whose number is no
    /// longer current stops.
    generation: Cell<u64>,
}

fn snapshot(id: u64, s: HeadSnapshot) {
    let data = s.attention.clone();
    post(&Reply::TrainSnapshot { id, snapshot: s }, Some(data));
}

impl Runs {
    pub fn pause(&self) {
        self.generation.set(self.generation.get() + 1);
    }

    pub fn reset(&self) {
        self.pause();
        *self.trainer.borrow_mut() = None;
    }

    pub async fn train(&self, id: u64, config: TrainConfig, until: usize) {
        self.pause();
        let generation = self.generation.get();
        let until = until.min(config.steps);
        let fresh = match &mut *self.trainer.borrow_mut() {
            Some(t) if t.config.same_run(&config) && t.step_count() <= until => {
                t.config.steps = config.steps;
                false
            }
            _ => true,
        };
        if fresh {
            match Trainer::new(config) {
                Ok(t) => {
                    snapshot(id, t.snapshot());
                    *self.trainer.borrow_mut() = Some(t);
                }
                Err(e) => return error(Some(id), e),
            }
        }
        loop {
            if self.generation.get() != generation {
                let step = self.trainer.borrow().as_ref().map_or(0, Trainer::step_count);
                return post(&Reply::TrainStopped { id, step, reason: TrainStop::Paused }, None);
            }
            let t0 = js_sys::Date::now();
            let (mut steps, mut snaps, mut stop) = (Vec::new(), Vec::new(), None);
            {
                let mut slot = self.trainer.borrow_mut();
                let Some(t) = slot.as_mut() else { return };
                let every = t.snapshot_every();
                while t.step_count() < until && js_sys::Date::now() - t0 < SLICE_MS {
                    match t.step() {
                        Ok(s) => {
                            steps.push(s);
                            if s.step.is_multiple_of(every) || s.step == until {
                                snaps.push(t.snapshot());
                            }
                        }
                        Err(message) => {
                            stop = Some(TrainStop::Diverged { message });
                            break;
                        }
                    }
                }
                if stop.is_none() && t.step_count() >= until {
                    stop = Some(TrainStop::Reached);
                }
                let secs = (js_sys::Date::now() - t0) / 1e3;
                let steps_per_s = if secs > 0.0 { steps.len() as f64 / secs } else { 0.0 };
                post(&Reply::TrainProgress { id, steps: std::mem::take(&mut steps), steps_per_s }, None);
                snaps.into_iter().for_each(|s| snapshot(id, s));
                if let Some(reason) = stop {
                    if matches!(reason, TrainStop::Diverged { .. }) {
                        snapshot(id, t.snapshot());
                    }
                    return post(&Reply::TrainStopped { id, step: t.step_count(), reason }, None);
                }
            }
            // Let the page's messages in: a pause or a reset bumps the generation.
            yield_now().await;
        }
    }

    /// The current run's model as a GPT-2 checkpoint.
    pub fn export(&self, id: u64) {
        let out = match &*self.trainer.borrow() {
            Some(t) => export::checkpoint(t.model()),
            None => Err("there is no trained model yet: press Train first".into()),
        };
        match out {
            Ok(ck) => post_bytes(&Reply::TrainCheckpoint { id, config_json: ck.config_json }, ck.safetensors),
            Err(e) => error(Some(id), e),
        }
    }
}
