//! The lab's words and buttons: the task's sample batch, Train / Pause / Resume / Reset and the
//! checkpoint, the run's status, and the notes under the heads.

use crate::numerics::format::Signed;
use leptos::prelude::*;

use super::super::run::{MainAction, Phase};
use super::{focus_head, Lab, Opening, SOLVED_LOSS};
use crate::session::protocol::Request;

/// Four examples, the scored characters marked, and the sizes they imply.
pub fn samples(lab: Lab) -> impl IntoView {
    let rows = move || {
        lab.setup.with(|s| {
            s.samples
                .iter()
                .map(|e| {
                    let chars: Vec<(char, bool)> = e.text.chars().zip(e.scored.iter().copied()).collect();
                    view! {
                        <li><code>{chars.into_iter().map(|(c, scored)| view! {
                            <span class:scored=scored>{c.to_string()}</span>
                        }).collect_view()}</code></li>
                    }
                })
                .collect_view()
        })
    };
    let sizes = move || {
        lab.setup.with(|s| match &s.refused {
            Some(why) => format!("These settings cannot train: {why}."),
            None => format!(
                "Each example: {} tokens read, {} scored (underlined). The model: {} parameters.",
                s.seq_len,
                match s.scored {
                    Some(k) => format!("{k} predictions"),
                    None => "the letters of each repeat after its first".to_string(),
                },
                crate::numerics::format::grouped(s.n_params as u64)
            ),
        })
    };
    let refused = move || lab.setup.with(|s| s.refused.is_some());
    view! {
        <div class="train-samples">
            <p class="train-samples-title">"A sample batch"</p>
            <ul class="train-batch">{rows}</ul>
            <p class="train-sizes" class:notice=refused role=move || if refused() { "alert" } else { "note" }>
                {sizes}
            </p>
        </div>
    }
}

pub fn buttons(lab: Lab) -> impl IntoView {
    let log = lab.log;
    let refused = move || lab.setup.with(|s| s.refused.is_some());
    let action = move || {
        let steps = lab.params.with(|p| p.config().steps);
        log.with(|l| l.main_action(steps))
    };
    let main_label = move || action().label();
    let main = move |_| match action() {
        MainAction::Pause => lab.pause(),
        MainAction::Train | MainAction::Resume => lab.train(None),
        MainAction::Trained => {}
    };
    // Done: until the reader asks for more steps.
    let done =
        move || log.with(|l| matches!(l.phase, Phase::Done) && l.done() >= lab.params.with(|p| p.config().steps));
    let nothing = move || log.with(|l| l.done() == 0);
    // GPT-2, the format of both, has no rotary positions (`train::export` refuses them).
    let rope = move || lab.params.with(|p| p.config().positions == crate::train::Positions::Rope);
    let no_export = move || nothing() || log.with(|l| l.training()) || rope();
    let export = move |_| {
        lab.worker.send(Request::TrainExport { id: 0 });
    };
    view! {
        <div class="row-actions train-actions">
            <button type="button" class="train-main primary" on:click=main disabled=move || refused() || done()>
                {main_label}
            </button>
            <button type="button" class="train-reset" on:click=move |_| lab.reset() disabled=nothing>"Reset"</button>
            <button type="button" class="train-export" on:click=export disabled=no_export>
                "Download checkpoint"
            </button>
            <button type="button" class="train-open" on:click=move |_| lab.open_in(Opening::Gpt2) disabled=no_export
                title="The trained model in the GPT-2 chapter: head view, model view, knock-outs, generation">
                "Open in the GPT-2 chapter"
            </button>
            <button type="button" class="train-inside" on:click=move |_| lab.open_in(Opening::Inside)
                disabled=no_export title="The trained model in \"Looking inside a model\": head detectors on \
                repeated random letters, logit lens, activation patching">
                "Look inside"
            </button>
        </div>
        {move || rope().then(|| view! {
            <p class="muted train-export-note">"A model with RoPE cannot be downloaded or opened in the other \
                chapters: GPT-2 has no rotary positions. Train with learned, sinusoidal or no positions for that."</p>
        })}
    }
}

fn mb(bytes: usize) -> String {
    format!("{:.1} MB", Signed(bytes as f64 / 1e6))
}

/// The status line: what the run is doing, its figures, when it was solved, what is kept.
pub fn status(lab: Lab) -> impl IntoView {
    let log = lab.log;
    let text = move || {
        let steps = lab.params.with(|p| p.config().steps);
        let shown = lab.params.with(|p| p.step as usize);
        log.with(|l| {
            let last = l.history.last();
            let figures = last.map_or(String::new(), |s| {
                format!(" · loss {:.3} · accuracy {:.0}%", Signed(s.loss), Signed(100.0 * s.accuracy))
            });
            let speed =
                if l.steps_per_s > 0.0 { format!(" · {:.0} steps/s", Signed(l.steps_per_s)) } else { String::new() };
            let head = match &l.phase {
                Phase::Idle => "Press Train: the model starts from random weights (its heads are below)".to_string(),
                Phase::Training { until: 0 } => "Preparing the model".to_string(),
                Phase::Training { until } if *until < steps => {
                    format!("Retraining to step {until} to reproduce the link: step {}{figures}{speed}", l.done())
                }
                Phase::Training { .. } => format!("Training: step {} of {steps}{figures}{speed}", l.done()),
                Phase::Paused => format!("Paused at step {} of {steps}{figures}", l.done()),
                Phase::Done => format!("Done: {steps} steps{figures} (raise Steps to train on)"),
                Phase::Diverged(m) => format!("Stopped: {m}"),
                Phase::Failed(m) => format!("Not trained: {m}"),
            };
            let solved = lab.solved.get().map_or(String::new(), |(step, secs)| {
                let after = secs.map_or(String::new(), |s| format!(", after {:.1} s", Signed(s)));
                format!(" Solved (loss under {SOLVED_LOSS} over 20 steps) at step {step}{after}.")
            });
            let restored = l.restored.map_or(String::new(), |step| {
                format!(" Restored from this browser, where the run was kept at step {step}.")
            });
            let kept = if l.snapshots.is_empty() {
                String::new()
            } else {
                let every = l.config.as_ref().map_or(1, |c| c.steps.div_ceil(crate::train::trainer::MAX_SNAPSHOTS));
                let at = l.at(shown).map_or(0, |s| s.step);
                let n = l.snapshots.len();
                let (kept, every) = (
                    if n == 1 { "1 snapshot".to_string() } else { format!("{n} snapshots") },
                    if every == 1 { "every step".to_string() } else { format!("every {every} steps") },
                );
                format!(" Heads shown at step {at}; {kept} kept ({every}, {}).", mb(l.snapshot_bytes()))
            };
            format!("{head}.{restored}{solved}{kept}")
        })
    };
    let step = move || log.with(|l| l.done().to_string());
    let solved_ms = move || lab.solved.get().and_then(|(_, s)| s).map(|s| format!("{:.0}", Signed(s * 1e3)));
    let restored = move || log.with(|l| l.restored.map(|s| s.to_string()));
    let phase = move || {
        log.with(|l| match l.phase {
            Phase::Idle => "idle",
            Phase::Training { until: 0 } => "preparing",
            Phase::Training { .. } => "training",
            Phase::Paused => "paused",
            Phase::Done => "done",
            Phase::Diverged(_) => "diverged",
            Phase::Failed(_) => "failed",
        })
    };
    let loss = move || log.with(|l| l.history.last().map(|s| s.loss.to_string()));
    let first_loss = move || log.with(|l| l.history.first().map(|s| s.loss.to_string()));
    let rate = move || log.with(|l| format!("{:.2}", Signed(l.steps_per_s)));
    view! {
        <p class="train-status" role="status" aria-live="polite" data-step=step data-phase=phase data-loss=loss
            data-first-loss=first_loss data-solved-ms=solved_ms data-rate=rate data-restored=restored>{text}</p>
    }
}

pub fn probe_note(lab: Lab) -> impl IntoView {
    move || {
        lab.setup.with(|s| {
            view! {
                <p class="train-probe">"Probe: " <code>{s.probe.clone()}</code>
                    " — each square is one head's attention on it: row i is the query at position i, column j \
                    the key at j (brighter is more weight). Click a head to show it large below."</p>
            }
        })
    }
}

pub fn focus_note(lab: Lab) -> impl IntoView {
    move || {
        let shown = lab.params.with(|p| p.step as usize);
        let nh = lab.setup.with(|s| s.config.n_head);
        lab.log
            .with(|l| {
                l.at(shown).map(|snap| {
                    let k = focus_head(lab.focus.get(), snap);
                    format!(
                        "Layer {}, head {}: previous-token score {:.2}, induction score {:.2}{}",
                        k / nh.max(1),
                        k % nh.max(1),
                        Signed(snap.previous.get(k).copied().unwrap_or(0.0)),
                        Signed(snap.induction.get(k).copied().unwrap_or(0.0)),
                        if lab.focus.get().is_none() {
                            " (the highest induction score; click another head)"
                        } else {
                            ""
                        }
                    )
                })
            })
            .map(|t| view! { <h4 class="train-focus">{t}</h4> })
    }
}
