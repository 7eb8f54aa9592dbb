//! A make exercise: the goal and whether the demo meets it, re-evaluated live as the reader
//! moves its controls; and an explain exercise: free text, then the model answer (not graded).

use leptos::prelude::*;

use super::ExerciseCtx;
use crate::exercises::{goals, Exercise, Task};
use crate::state::Values;

#[component]
pub fn MakeForm(ex: &'static Exercise) -> impl IntoView {
    let ctx = expect_context::<ExerciseCtx>();
    let Task::Make { demo, goal, witness } = ex.task else { return ().into_any() };
    let describe = goals::find(goal).map_or(goal, |g| g.describe);
    let Some(values) = ctx.demo(demo) else {
        return view! {
            <p class="notice error" role="note">{format!("The demo \"{demo}\" is not on this page.")}</p>
        }
        .into_any();
    };
    let met = Memo::new(move |_| values.with(|v| goals::met(goal, v)));
    // "Show me" is not solving it: the state it set does not count until the reader changes it.
    let shown = RwSignal::new(None::<Values>);
    let announce = RwSignal::new(String::new());
    Effect::new(move |was: Option<bool>| {
        let now = met.get() == Ok(true);
        let by_reader = shown.with(|s| values.with(|v| s.as_ref() != Some(v)));
        // Only a change counts: a link that opens the demo in a state that meets the goal is not
        // the reader's doing.
        if now && by_reader && was.is_some() {
            ctx.mark_solved(ex.id);
        }
        if now && was == Some(false) {
            announce.set("Goal met.".into());
        }
        now
    });
    let error = RwSignal::new(None::<String>);
    let show_me = move |_| match ctx.apply(demo, witness) {
        Ok(()) => shown.set(Some(values.get_untracked())),
        Err(e) => error.set(Some(e)),
    };
    view! {
        <div class="ex-form ex-make">
            <p class="ex-goal"><strong>"Goal: "</strong>{describe}"."</p>
            <p class="ex-goal-state" class:met=move || met.get() == Ok(true)>
                {move || match met.get() {
                    Ok(true) => view! { <span class="icon" aria-hidden="true">"✓"</span>" "<strong>"Met"</strong>
                        " by the demo as it is now." }.into_any(),
                    Ok(false) => view! { <span class="icon" aria-hidden="true">"○"</span>" "<strong>"Not yet"</strong>
                        ": move the demo's controls." }.into_any(),
                    Err(e) => view! { <span class="icon" aria-hidden="true">"?"</span>" "{e} }.into_any(),
                }}
            </p>
            <p class="visually-hidden" aria-live="polite">{move || announce.get()}</p>
            <div class="ex-buttons">
                <button type="button" class="ex-show-me" on:click=show_me>"Show me"</button>
            </div>
            {move || error.get().map(|e| view! { <p class="notice error" role="alert">{e}</p> })}
        </div>
    }
    .into_any()
}

#[component]
pub fn ExplainForm(ex: &'static Exercise) -> impl IntoView {
    let ctx = expect_context::<ExerciseCtx>();
    let text = RwSignal::new(String::new());
    let open = RwSignal::new(false);
    let field_id = format!("ex-{}-text", ex.id);
    let model_id = format!("ex-{}-model", ex.id);
    view! {
        <div class="ex-form ex-explain">
            <label for=field_id.clone()>"Your explanation (for you: it is not checked)"</label>
            <textarea id=field_id class="ex-text" rows="4" prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            <div class="ex-buttons">
                <button type="button" class="ex-show-model" aria-expanded=move || open.get().to_string()
                    aria-controls=model_id.clone()
                    on:click=move |_| {
                        open.update(|o| *o = !*o);
                        // Written, then compared with the model: done, as far as the page can tell.
                        if !text.get_untracked().trim().is_empty() {
                            ctx.mark_solved(ex.id);
                        }
                    }>
                    {move || if open.get() { "Hide the model answer" } else { "Show the model answer (not graded)" }}
                </button>
            </div>
            <div class="prose ex-solution ex-model" id=model_id hidden=move || !open.get()>
                <strong>"Model answer (not graded; compare it with yours). "</strong>
                <span inner_html=ex.solution></span>
            </div>
        </div>
    }
}
