//! The training lab's runs in the worker: one run at a time, advanced in slices of about 50 ms
//! so that the worker reads the page's messages (a pause, a reset) between slices. The run is
//! kept in this browser as it trains (`saved_run`): where it stops, and every few seconds while
//! it trains, so that a reload, or a return to the chapter later, finds it.

use std::cell::{Cell, RefCell};

use super::dispatch::yield_now;
use super::{error, post, post_bytes, saved_run};
use crate::session::protocol::{Reply, TrainStop};
use crate::train::{export, saved, HeadSnapshot, StepStats, TrainConfig, Trainer};

/// How long one slice of steps may run before the worker reports and reads its messages.
const SLICE_MS: f64 = 50.0;
/// While training, the run is kept again after this long (it is also kept where it stops).
const SAVE_EVERY_MS: f64 = 5_000.0;

#[derive(Default)]
pub struct Runs {
    trainer: RefCell<Option<Trainer>>,
    /// What the page was sent of the run: every step's figures and the snapshots (kept with it).
    history: RefCell<Vec<StepStats>>,
    snapshots: RefCell<Vec<HeadSnapshot>>,
    /// Bumped by every request that ends the run in progress: a slice loop whose number is no
    /// longer current stops.
    generation: Cell<u64>,
    /// When the run was last kept (worker clock, ms).
    saved_at: Cell<f64>,
}

impl Runs {
    pub fn pause(&self) {
        self.generation.set(self.generation.get() + 1);
    }

    pub fn reset(&self) {
        self.pause();
        *self.trainer.borrow_mut() = None;
        self.history.borrow_mut().clear();
        self.snapshots.borrow_mut().clear();
        saved_run::clear();
    }

    /// Sends a snapshot (its attention beside the message) and keeps it with the run.
    fn snapshot(&self, id: u64, s: HeadSnapshot) {
        post(&Reply::TrainSnapshot { id, snapshot: s.clone() }, Some(s.attention.clone()));
        let mut kept = self.snapshots.borrow_mut();
        match kept.binary_search_by_key(&s.step, |x| x.step) {
            Ok(i) => kept[i] = s,
            Err(i) => kept.insert(i, s),
        }
    }

    /// Keeps the run in this browser (a run with no step done is not worth keeping).
    fn save(&self) {
        if let Some(t) = self.trainer.borrow().as_ref().filter(|t| t.step_count() > 0) {
            saved_run::save(saved::encode(t, &self.history.borrow(), &self.snapshots.borrow()));
            self.saved_at.set(js_sys::Date::now());
        }
    }

    /// The run this browser kept, if it is of these settings and has not passed `until` (or
    /// `until` is 0: the page shows the kept run rather than an untrained model). A kept run
    /// that cannot be read is forgotten.
    async fn kept(config: &TrainConfig, until: usize) -> Option<saved::SavedRun> {
        let bytes = saved_run::load().await?;
        match saved::decode(&bytes) {
            Ok(run) if run.trainer.config.same_run(config) && (until == 0 || run.trainer.step_count() <= until) => {
                Some(run)
            }
            Ok(_) => None,
            Err(e) => {
                web_sys::console::warn_1(&e.into());
                saved_run::clear();
                None
            }
        }
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
            let kept = if config.check().is_ok() { Runs::kept(&config, until).await } else { None };
            if self.generation.get() != generation {
                return; // A newer request superseded this one while the kept run was read.
            }
            self.history.borrow_mut().clear();
            self.snapshots.borrow_mut().clear();
            match kept {
                Some(mut run) => {
                    run.trainer.config.steps = config.steps;
                    let step = run.trainer.step_count();
                    post(&Reply::TrainRestored { id, step }, None);
                    post(&Reply::TrainProgress { id, steps: run.history.clone(), steps_per_s: 0.0 }, None);
                    *self.history.borrow_mut() = run.history;
                    run.snapshots.into_iter().for_each(|s| self.snapshot(id, s));
                    *self.trainer.borrow_mut() = Some(run.trainer);
                }
                None => match Trainer::new(config) {
                    Ok(t) => {
                        self.snapshot(id, t.snapshot());
                        *self.trainer.borrow_mut() = Some(t);
                    }
                    Err(e) => return error(Some(id), e),
                },
            }
            self.saved_at.set(js_sys::Date::now());
        }
        loop {
            if self.generation.get() != generation {
                self.save();
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
                self.history.borrow_mut().extend_from_slice(&steps);
                post(&Reply::TrainProgress { id, steps: std::mem::take(&mut steps), steps_per_s }, None);
                snaps.into_iter().for_each(|s| self.snapshot(id, s));
                if let Some(reason) = stop {
                    let step = t.step_count();
                    if matches!(reason, TrainStop::Diverged { .. }) {
                        self.snapshot(id, t.snapshot());
                    }
                    drop(slot);
                    // A diverged run is not kept: the copy from before is its last good state.
                    if reason == TrainStop::Reached {
                        self.save();
                    }
                    return post(&Reply::TrainStopped { id, step, reason }, None);
                }
            }
            if js_sys::Date::now() - self.saved_at.get() > SAVE_EVERY_MS {
                self.save();
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
