//! View of `train-lab`: the settings' sample batch, Train / Pause / Resume / Reset, the loss,
//! the heads on the probe and their scores, and the checkpoint. The run is in the compute
//! worker; `RunLog` records what it reports.

use leptos::html::Canvas;
use leptos::prelude::*;

use super::run::{Phase, RunLog};
use super::{Params, Setup, TrainLabDemo};
use crate::demos::Demo;
use crate::session::protocol::{Reply, Request, TrainStop};
use crate::kit::browser::{download_bytes, download_text, now_ms};
use crate::kit::controls::Control;
use crate::kit::worker::{ComputeWorker, Event};
use crate::kit::DemoCtx;

mod heads;
mod plots;
mod readout;

/// A run counts as solved once its loss, averaged over 20 steps, is below this (nats): about
/// 85% of the probability on the right token, where the copy task's curve has finished its drop.
pub const SOLVED_LOSS: f32 = 0.5;

/// Where the trained model is handed over to.
#[derive(Clone, Copy, PartialEq)]
pub enum Opening {
    /// The GPT-2 chapter: head view, model view, knock-outs, generation.
    Gpt2,
    /// "Looking inside a model": head detectors, logit lens, patching.
    Inside,
}

/// What the view keeps beside the record.
#[derive(Clone, Copy)]
pub struct Lab {
    pub ctx: DemoCtx,
    pub params: Memo<Params>,
    pub setup: Memo<Setup>,
    pub log: RwSignal<RunLog>,
    /// When the current run began (page clock, ms), and the step and seconds at which it was
    /// first solved (no seconds for a run restored past that step: it was solved in another visit).
    pub began: StoredValue<f64>,
    pub solved: RwSignal<Option<(usize, Option<f64>)>>,
    /// The head shown large (index layer · H + head); `None`: the best induction head.
    pub focus: RwSignal<Option<usize>>,
    /// The export request whose checkpoint opens in another chapter, and which (others are
    /// downloaded).
    pub opening: StoredValue<Option<(u64, Opening)>>,
    pub worker: ComputeWorker,
}

impl Lab {
    /// Trains on (or resumes, when the settings match the record) until `until` (or the last step).
    pub fn train(self, until: Option<usize>) {
        let p = self.ctx.params_now::<Params>();
        let config = p.config();
        if let Err(e) = config.check() {
            self.log.update(|l| l.phase = Phase::Failed(e));
            return;
        }
        let until = until.unwrap_or(config.steps);
        let id = self.worker.send(Request::Train { id: 0, config: config.clone(), until });
        let fresh = self.log.with_untracked(|l| {
            !l.config.as_ref().is_some_and(|c| c.same_run(&config)) || l.done() > until || l.done() == 0
        });
        if fresh {
            self.began.set_value(now_ms());
            self.solved.set(None);
        }
        self.log.update(|l| l.start(&config, id, until));
        if until == config.steps && p.step != 0 {
            // Follow the run live again.
            self.ctx.set_params::<Params>(|q| q.step = 0);
        }
    }

    /// The untrained model's heads (step 0), shown before Train is pressed.
    pub fn preview(self) {
        if self.ctx.params_now::<Params>().config().check().is_ok() {
            self.train(Some(0));
        }
    }

    pub fn pause(self) {
        self.worker.send(Request::TrainPause);
    }

    pub fn reset(self) {
        self.worker.send(Request::TrainReset);
        self.log.set(RunLog::default());
        self.solved.set(None);
        self.ctx.computed.set(None);
        if self.ctx.params_now::<Params>().step != 0 {
            self.ctx.set_params::<Params>(|q| q.step = 0);
        }
        self.preview();
    }

    /// A reply of the worker.
    fn on_reply(self, reply: Reply) {
        if !self.log.try_update(|l| l.apply(&reply)).unwrap_or(false) {
            if let Reply::Error { message, .. } = reply {
                self.ctx.error.set(Some(message));
            }
            return;
        }
        // (Searched for until found: the search reads the whole history.)
        let unsolved = self.solved.get_untracked().is_none();
        let solved = if unsolved { self.log.with_untracked(|l| l.first_below(SOLVED_LOSS)) } else { None };
        if let Some(step) = solved {
            let before = self.log.with_untracked(|l| l.restored.is_some_and(|r| step <= r));
            let secs = (!before).then(|| (now_ms() - self.began.get_value()) / 1e3);
            self.solved.set(Some((step, secs)));
        }
        if let Reply::TrainStopped { step, reason, .. } = reply {
            // The link now holds where the run stopped (a diverged run: its last good step).
            let good = if matches!(reason, TrainStop::Diverged { .. }) { step } else { step.max(1) };
            // (Step 0, the untrained preview, is what a link without a step shows anyway.)
            if step > 0 && self.ctx.params_now::<Params>().step as usize != good {
                self.ctx.set_params::<Params>(|q| q.step = good as i64);
            }
            self.ctx.computed.set(self.log.with_untracked(|l| serde_json::to_value(l).ok()));
        }
    }

    /// Asks the worker for the checkpoint, to open it in another chapter.
    pub fn open_in(self, target: Opening) {
        let id = self.worker.send(Request::TrainExport { id: 0 });
        self.opening.set_value(id.map(|id| (id, target)));
    }

    fn on_checkpoint(self, id: u64, config_json: String, safetensors: Vec<u8>) {
        if let Some((_, target)) = self.opening.get_value().filter(|(o, _)| *o == id) {
            self.opening.set_value(None);
            // Both chapters open on the lab's probe, the sequence the heads were shown on.
            let probe = self.setup.with_untracked(|s| s.probe.clone());
            let error = self.ctx.error;
            leptos::task::spawn_local(async move {
                use crate::demos::gpt2::trained;
                let r = match target {
                    Opening::Gpt2 => trained::open_on(config_json, safetensors, Some(probe)).await,
                    Opening::Inside => match crate::demos::inside::trained_link(&config_json, Some(probe)) {
                        Ok(href) => trained::store_and_go(&config_json, &safetensors, &href).await,
                        Err(e) => Err(e),
                    },
                };
                if let Err(e) = r {
                    error.set(Some(e));
                }
            });
            return;
        }
        let r = download_text("config.json", "application/json", &config_json)
            .and_then(|_| download_bytes("model.safetensors", "application/octet-stream", &safetensors));
        if let Err(e) = r {
            self.ctx.error.set(Some(e));
        }
    }
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let params = ctx.params::<Params>();
    let setup = crate::demos::output::<TrainLabDemo>(ctx);
    let log = RwSignal::new(RunLog::default());
    let lab_slot = StoredValue::new(None::<Lab>);
    let worker = ComputeWorker::new(move |_, ev| {
        let Some(lab) = lab_slot.get_value() else { return };
        match ev {
            Event::Reply(r) => lab.on_reply(r),
            Event::Snapshot(id, s) => log.update(|l| l.snapshot(id, s)),
            Event::Checkpoint { id, config_json, safetensors } => lab.on_checkpoint(id, config_json, safetensors),
            Event::Died(why) => log.update(|l| {
                // The worker's run is gone with it: the next Train starts afresh.
                l.phase = Phase::Failed(format!("{why}. Press Train to start the run again."));
                l.config = None;
            }),
            _ => {}
        }
    });
    let lab = Lab {
        ctx,
        params,
        setup,
        log,
        began: StoredValue::new(0.0),
        solved: RwSignal::new(None),
        focus: RwSignal::new(None),
        opening: StoredValue::new(None),
        worker,
    };
    lab_slot.set_value(Some(lab));

    // The scrubber's slider spans the run; fewer steps move a step past them to the last.
    let limits = move || vec![("step", params.with(|p| p.config().steps) as i64)];
    ctx.limit_ints(<super::TrainLabDemo as crate::demos::Demo>::ID, limits, DemoCtx::settings_limit);
    // Other settings (the number of steps aside): the record is of another run; the worker's run stops.
    Effect::new(move |prev: Option<crate::train::TrainConfig>| {
        let config = params.with(|p| p.config());
        if prev.is_some_and(|p| !p.same_run(&config)) {
            lab.reset();
        }
        config
    });
    // A link with a step: train again to it (the same seed gives the same run); else the
    // untrained heads.
    let linked = ctx.params_now::<Params>();
    if linked.step > 0 && linked.config().check().is_ok() {
        lab.train(Some((linked.step as usize).min(linked.config().steps)));
    } else {
        lab.preview();
    }

    let (loss, prev, ind, grid, head) = (
        NodeRef::<Canvas>::new(),
        NodeRef::<Canvas>::new(),
        NodeRef::<Canvas>::new(),
        NodeRef::<Canvas>::new(),
        NodeRef::<Canvas>::new(),
    );
    let layout = StoredValue::new(heads::Grid::default());
    let shown = move || params.with(|p| (p.step > 0).then_some(p.step as usize));
    // While a run trains, the log changes at every slice of steps (20 times a second) but its
    // snapshots only every few dozen steps: each drawing tracks only what it shows, so the page's
    // main thread (which shares the reader's cores with the worker's threads) redraws the heads
    // when a snapshot arrives, not at every slice.
    let snapshots = Memo::new(move |_| {
        log.with(|l| (l.id, l.snapshots.len(), l.snapshots.last().map(|s| s.step), l.config.as_ref().map(|c| c.steps)))
    });
    let snapshot_shown = Memo::new(move |_| {
        let at = shown().unwrap_or(0);
        log.with(|l| (l.id, l.at(at).map(|s| s.step)))
    });
    ctx.paint(move |pal| {
        let a = loss.get()?;
        let at = shown();
        Some(log.with(|l| plots::draw_loss(&a, pal, l, at)))
    });
    ctx.paint(move |pal| {
        let (b, c) = (prev.get()?, ind.get()?);
        let hs = setup.with(|s| (s.config.n_layer, s.config.n_head));
        let at = shown();
        // (Read, not merely tracked: a memo no one reads is never computed.)
        let _ = snapshots.get();
        Some(log.with_untracked(|l| {
            plots::draw_scores(&b, pal, l, hs, false, at)?;
            plots::draw_scores(&c, pal, l, hs, true, at)
        }))
    });
    ctx.paint(move |pal| {
        let (g, h) = (grid.get()?, head.get()?);
        let (hs, probe) = setup.with(|s| ((s.config.n_layer, s.config.n_head), s.probe.clone()));
        let at = shown().unwrap_or(0);
        let _ = snapshot_shown.get();
        let focus = lab.focus.get();
        Some(log.with_untracked(|l| {
            let Some(snap) = l.at(at) else {
                let _ = (g.set_height(0), h.set_height(0));
                return Ok(());
            };
            let k = focus_head(focus, snap);
            layout.set_value(heads::draw_grid(&g, pal, snap, hs, k)?);
            heads::draw_head(&h, pal, snap, &probe, hs.0 * hs.1, k)
        }))
    });
    let on_grid_click = move |ev: web_sys::MouseEvent| {
        if let Some(k) = layout.get_value().head_at(ev.offset_x() as f64, ev.offset_y() as f64) {
            lab.focus.set(Some(k));
        }
    };

    view! {
        <div class="train-lab">
            {readout::samples(lab)}
            {readout::buttons(lab)}
            {readout::status(lab)}
            // The step scrubber, above the plots it moves through (`TrainLabDemo::IN_VIEW`).
            {step_param().map(|param| view! {
                <div class="scrubber">
                    <Control demo_id=TrainLabDemo::ID param=param values=ctx.values int_max=ctx.int_max />
                </div>
            })}
            <canvas node_ref=loss class="plot train-loss" role="img"
                aria-label="Loss and accuracy against the training step"></canvas>
            <h4>"The heads on the probe"</h4>
            {readout::probe_note(lab)}
            <canvas node_ref=grid class="plot train-heads" role="img" on:click=on_grid_click
                aria-label="Every head's attention on the probe sequence; click one to show it large"></canvas>
            <div class="train-scores">
                <canvas node_ref=prev class="plot train-prev" role="img"
                    aria-label="Each head's previous-token score against the step"></canvas>
                <canvas node_ref=ind class="plot train-ind" role="img"
                    aria-label="Each head's induction score against the step"></canvas>
            </div>
            {readout::focus_note(lab)}
            <canvas node_ref=head class="plot train-head" role="img"
                aria-label="One head's attention: queries down, keys across, labelled with the probe"></canvas>
        </div>
    }
    .into_any()
}

/// The "Show step" parameter, drawn in the view rather than in the control panel.
fn step_param() -> Option<&'static crate::state::Param> {
    <Params as crate::state::Params>::TABLE.iter().find(|p| p.key == "step")
}

/// The head shown large: the reader's pick, else the one with the highest induction score.
pub fn focus_head(pick: Option<usize>, snap: &crate::train::HeadSnapshot) -> usize {
    let n = snap.induction.len();
    match pick {
        Some(k) if k < n => k,
        _ => (0..n).max_by(|&a, &b| snap.induction[a].total_cmp(&snap.induction[b])).unwrap_or(0),
    }
}
