//! One exercise as a numbered card: its heading with the "solved" mark and a link that opens
//! the chapter at it, the question, the form of its kind, hints one at a time and the solution.

use leptos::prelude::*;

use super::ExerciseCtx;
use crate::exercises::{Exercise, Task};
use crate::kit::browser::{copy_text, location_origin};
use crate::kit::link_box::LinkBox;
use crate::state::query::build_query;

/// The demo an exercise sets or reads, if any.
pub(crate) fn demo_of(ex: &Exercise) -> Option<&'static str> {
    match ex.task {
        Task::Predict { see: Some(s), .. } => Some(s.demo),
        Task::Make { demo, .. } => Some(demo),
        _ => None,
    }
}

/// `/<chapter>/?<the exercise's demo as it is now>#ex-<id>`: a lecturer sets the demo up, then
/// hands out the link ("exercise 3 of Masking").
fn exercise_link(ctx: &ExerciseCtx, ex: &Exercise) -> String {
    let pairs = demo_of(ex)
        .and_then(|id| Some(ctx.demo(id)?.with_untracked(|v| crate::demos::find(id).map(|s| s.link_pairs(v)))));
    let pairs = pairs.flatten().unwrap_or_default();
    let q = build_query(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    format!("{}/{}/{}{q}#ex-{}", location_origin(), ctx.slug, if q.is_empty() { "" } else { "?" }, ex.id)
}

fn kind_name(t: &Task) -> &'static str {
    match t {
        Task::Compute { .. } => "Compute",
        Task::Predict { .. } => "Predict",
        Task::Make { .. } => "Make it happen",
        Task::Explain => "Explain",
    }
}

#[component]
pub fn ExerciseCard(ex: &'static Exercise) -> impl IntoView {
    let ctx = expect_context::<ExerciseCtx>();
    let n = ctx.number(ex.id);
    let title_id = format!("ex-{}-title", ex.id);
    let link = RwSignal::new(None::<String>);
    let status = RwSignal::new(String::new());
    let on_link = move |_| {
        let url = exercise_link(&ctx, ex);
        link.set(Some(url.clone()));
        leptos::task::spawn_local(async move {
            let ok = copy_text(url).await;
            status.set(if ok { "Link copied.".into() } else { "Select the link below and copy it.".into() });
        });
    };
    // Rebuilt empty by "Reset my answers".
    let body = move || {
        ctx.reset.track();
        let form = match ex.task {
            Task::Compute { .. } => view! { <super::compute::ComputeForm ex=ex/> }.into_any(),
            Task::Predict { .. } => view! { <super::predict::PredictForm ex=ex/> }.into_any(),
            Task::Make { .. } => view! { <super::make::MakeForm ex=ex/> }.into_any(),
            Task::Explain => view! { <super::make::ExplainForm ex=ex/> }.into_any(),
        };
        view! { {form} <Hints ex=ex/> }
    };
    view! {
        <section class="exercise" id=format!("ex-{}", ex.id) aria-labelledby=title_id.clone()
            class:solved=move || ctx.is_solved(ex.id)>
            <header class="ex-head">
                <h3 id=title_id.clone()>{format!("Exercise {n}")}
                    <span class="ex-kind">{kind_name(&ex.task)}</span></h3>
                {move || ctx.is_solved(ex.id).then(|| view! {
                    <span class="tag ex-solved">
                        <span aria-hidden="true">"✓ "</span>
                        {if matches!(ex.task, Task::Explain) { "answered" } else { "solved" }}
                    </span>
                })}
                <button type="button" class="ex-link" on:click=on_link
                    aria-label=format!("Copy a link to exercise {n}")>"Link"</button>
            </header>
            <div class="prose ex-question" inner_html=ex.question></div>
            {body}
            <p class="ex-status" aria-live="polite">{move || status.get()}</p>
            {move || link.get().map(|url| view! { <LinkBox what="Link".to_string() url=url /> })}
        </section>
    }
}

/// Hints one at a time behind "Hint", then the worked solution behind "Solution" (for an
/// explain exercise the model answer has its own button in the form).
#[component]
fn Hints(ex: &'static Exercise) -> impl IntoView {
    let shown = RwSignal::new(0usize);
    let solution = RwSignal::new(false);
    let total = ex.hints.len();
    let explain = matches!(ex.task, Task::Explain);
    let sol_id = format!("ex-{}-solution", ex.id);
    view! {
        <div class="ex-help">
            <ol class="ex-hints" aria-live="polite">
                {move || ex.hints[..shown.get()].iter().enumerate().map(|(i, h)| view! {
                    <li class="prose"><strong>{format!("Hint {}: ", i + 1)}</strong><span inner_html=*h></span></li>
                }).collect_view()}
            </ol>
            <div class="ex-buttons">
                {move || (shown.get() < total).then(|| view! {
                    <button type="button" class="ex-hint" on:click=move |_| shown.update(|s| *s += 1)>
                        {if total > 1 { format!("Hint {} of {total}", shown.get() + 1) } else { "Hint".into() }}
                    </button>
                })}
                {(!explain).then(|| view! {
                    <button type="button" class="ex-show-solution" aria-expanded=move || solution.get().to_string()
                        aria-controls=sol_id.clone() on:click=move |_| solution.update(|s| *s = !*s)>
                        {move || if solution.get() { "Hide the solution" } else { "Solution" }}
                    </button>
                })}
            </div>
            {(!explain).then(|| view! {
                <div class="prose ex-solution" id=format!("ex-{}-solution", ex.id) hidden=move || !solution.get()>
                    <strong>"Solution. "</strong><span inner_html=ex.solution></span>
                </div>
            })}
        </div>
    }
}
