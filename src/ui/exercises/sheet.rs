//! Before a chapter's exercises, its progress ("2 of 6 solved"), "Reset my answers" and "Print
//! with solutions"; after them, the answer sheet that prints only when that box is ticked.

use crate::numerics::format::Signed;
use leptos::prelude::*;

use super::ExerciseCtx;
use crate::exercises::expr::eval_key;
use crate::exercises::{Exercise, Task};

#[component]
pub fn ExercisesBar() -> impl IntoView {
    let ctx = expect_context::<ExerciseCtx>();
    let total = ctx.chapter.exercises().count();
    let done = move || ctx.solved.with(|s| ctx.chapter.exercises().filter(|e| s.contains(e.id)).count());
    let status = RwSignal::new(String::new());
    view! {
        <div class="ex-bar" role="group" aria-label="Exercises of this chapter">
            <p class="ex-progress">{move || format!("{} of {total} exercises solved", done())}
                <span class="ex-private">" (kept in this browser only)"</span></p>
            <button type="button" class="ex-reset" on:click=move |_| {
                ctx.reset_all();
                status.set("Your answers to this chapter's exercises were cleared.".into());
            }>"Reset my answers"</button>
            <label class="ex-print-toggle">
                <input type="checkbox" prop:checked=move || ctx.print_solutions.get()
                    on:change=move |ev| ctx.print_solutions.set(event_target_checked(&ev)) />
                " Print with solutions"
            </label>
            <p class="visually-hidden" aria-live="polite">{move || status.get()}</p>
        </div>
    }
}

/// The key of an exercise in words: the number, the choice(s), a state that meets the goal.
fn key_line(ex: &Exercise) -> Option<String> {
    let letter = |i: &usize| char::from(b'A' + (*i % 26) as u8).to_string();
    match ex.task {
        Task::Compute { answer, tolerance, .. } => {
            eval_key(answer).ok().map(|x| format!("Answer: {} ({} accepted).", trim(x), tolerance.describe()))
        }
        Task::Predict { correct, .. } => {
            Some(format!("Answer: {}.", correct.iter().map(letter).collect::<Vec<_>>().join(", ")))
        }
        Task::Make { witness, .. } => Some(format!(
            "One state that does it: {}.",
            witness.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
        )),
        Task::Explain => None,
    }
}

/// A key value to four significant decimals, without trailing zeros.
fn trim(x: f64) -> String {
    let s = format!("{x:.4}", x = Signed(x));
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// The lecturer's answer sheet: hidden on screen, printed after the exercises when "Print
/// with solutions" is ticked.
#[component]
pub fn AnswerSheet() -> impl IntoView {
    let ctx = expect_context::<ExerciseCtx>();
    let items = ctx
        .chapter
        .exercises()
        .enumerate()
        .map(|(i, ex)| {
            let label = if matches!(ex.task, Task::Explain) { "Model answer. " } else { "Solution. " };
            view! {
                <li class="prose">
                    <h3>{format!("Exercise {}", i + 1)}</h3>
                    {key_line(ex).map(|k| view! { <p><strong>{k}</strong></p> })}
                    {ex.hints.iter().enumerate().map(|(j, h)| view! {
                        <p><strong>{format!("Hint {}: ", j + 1)}</strong><span inner_html=*h></span></p>
                    }).collect_view()}
                    <p>
                        <strong>{label}</strong>
                        <span inner_html=ex.solution></span>
                    </p>
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="ex-answers" class:print=move || ctx.print_solutions.get()>
            <h2>"Solutions"</h2>
            <ol>{items}</ol>
        </section>
    }
}
