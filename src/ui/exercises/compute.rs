//! A compute exercise: a number or expression in a text field, checked on "Check" or Enter.

use leptos::prelude::*;

use super::{verdict_view, ExerciseCtx, Shown};
use crate::exercises::check::{check_answer, Verdict};
use crate::exercises::{Exercise, Task};

#[component]
pub fn ComputeForm(ex: &'static Exercise) -> impl IntoView {
    let ctx = expect_context::<ExerciseCtx>();
    let text = RwSignal::new(String::new());
    let verdict = RwSignal::new(None::<Shown>);
    let tolerance = match ex.task {
        Task::Compute { tolerance, .. } => tolerance.describe(),
        _ => String::new(),
    };
    let within = tolerance.clone();
    let check = move || {
        let t = text.get_untracked();
        verdict.set(Some(match check_answer(ex, &t) {
            Verdict::Right => {
                ctx.mark_solved(ex.id);
                Shown::Right(format!("That is within {within} of the answer."))
            }
            Verdict::Wrong(hint) => {
                Shown::Wrong(if hint.is_some() { String::new() } else { "Try again, or open a hint.".into() }, hint)
            }
            Verdict::Unreadable(why) => Shown::Unreadable(why),
        }));
    };
    let field_id = format!("ex-{}-answer", ex.id);
    view! {
        <form class="ex-form ex-compute" on:submit=move |ev| {
            ev.prevent_default();
            check();
        }>
            <label for=field_id.clone()>{format!("Your answer (within {tolerance})")}</label>
            <div class="ex-row">
                <input type="text" id=field_id class="ex-answer" inputmode="decimal" autocomplete="off"
                    spellcheck="false" placeholder="e.g. 0.25 or e/(1+e)" prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev)) />
                <button type="submit" class="ex-check">"Check"</button>
            </div>
        </form>
        {verdict_view(verdict)}
    }
}
