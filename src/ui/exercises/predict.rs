//! A predict exercise: pick one choice (radio buttons) or put every choice in order (move up /
//! move down buttons, usable from the keyboard), "Check", then "See it" sets the chapter's demo.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::{verdict_view, ExerciseCtx, Shown};
use crate::exercises::check::check_choice;
use crate::exercises::{Exercise, Task};

fn letter(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

fn focus(id: &str) {
    if let Some(el) = document().get_element_by_id(id).and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
        let _ = el.focus();
    }
}

#[component]
pub fn PredictForm(ex: &'static Exercise) -> impl IntoView {
    let ctx = expect_context::<ExerciseCtx>();
    let Task::Predict { choices, correct, see } = ex.task else { return ().into_any() };
    let ordering = correct.len() > 1;
    let picked = RwSignal::new(None::<usize>);
    let order = RwSignal::new((0..choices.len()).collect::<Vec<usize>>());
    let verdict = RwSignal::new(None::<Shown>);
    let checked = RwSignal::new(false);
    let moved = RwSignal::new(String::new());
    let check = move || {
        let answer: Vec<usize> =
            if ordering { order.get_untracked() } else { picked.get_untracked().into_iter().collect() };
        if answer.is_empty() {
            verdict.set(Some(Shown::Unreadable("no choice is picked yet.".into())));
            return;
        }
        checked.set(true);
        verdict.set(Some(if check_choice(correct, &answer) {
            ctx.mark_solved(ex.id);
            Shown::Right(if see.is_some() { "Press \"See it\" to watch it in the demo.".into() } else { String::new() })
        } else {
            let words = if ordering { "That order is not the right one." } else { "That is not the one." };
            Shown::Wrong(format!("{words} Try again, or open a hint."), None)
        }));
    };
    let name = format!("ex-{}-choice", ex.id);
    let choice_list = if ordering {
        let row = move |pos: usize, c: usize| {
            let n = choices.len();
            let mv = move |to: usize, dir: &'static str| {
                order.update(|o| o.swap(pos, to));
                moved.set(format!("{} moved to position {}.", letter(c), to + 1));
                // The row is rebuilt at its new place; the focus follows the choice that moved, to
                // the other button where this one is now disabled (top or bottom).
                let dir = match dir {
                    "up" if to == 0 => "down",
                    "down" if to + 1 == n => "up",
                    d => d,
                };
                let id = format!("ex-{}-{dir}-{c}", ex.id);
                request_animation_frame(move || focus(&id));
            };
            view! {
                <li>
                    <span class="ex-pos">{format!("{}.", pos + 1)}</span>
                    <span class="ex-letter">{letter(c)}</span>
                    <span class="ex-choice-text" inner_html=choices[c]></span>
                    <span class="ex-move">
                        <button type="button" id=format!("ex-{}-up-{c}", ex.id) disabled=pos == 0
                            aria-label=format!("Move {} up", letter(c))
                            on:click=move |_| mv(pos - 1, "up")>"↑"</button>
                        <button type="button" id=format!("ex-{}-down-{c}", ex.id) disabled=pos + 1 == n
                            aria-label=format!("Move {} down", letter(c))
                            on:click=move |_| mv(pos + 1, "down")>"↓"</button>
                    </span>
                </li>
            }
        };
        view! {
            <p class="ex-instructions">"Put them in order, first at the top:"</p>
            <ol class="ex-order">
                {move || order.get().into_iter().enumerate().map(|(pos, c)| row(pos, c)).collect_view()}
            </ol>
            <p class="visually-hidden" aria-live="polite">{move || moved.get()}</p>
        }
        .into_any()
    } else {
        view! {
            <fieldset class="ex-choices">
                <legend>"Pick one"</legend>
                {choices.iter().enumerate().map(|(i, c)| view! {
                    <label class="ex-choice">
                        <input type="radio" name=name.clone() prop:checked=move || picked.get() == Some(i)
                            on:change=move |_| picked.set(Some(i)) />
                        <span class="ex-letter">{letter(i)}</span>
                        <span class="ex-choice-text" inner_html=*c></span>
                    </label>
                }).collect_view()}
            </fieldset>
        }
        .into_any()
    };
    let see_error = RwSignal::new(None::<String>);
    view! {
        <form class="ex-form ex-predict" on:submit=move |ev| {
            ev.prevent_default();
            check();
        }>
            {choice_list}
            <div class="ex-buttons">
                <button type="submit" class="ex-check">"Check"</button>
                {see.map(|s| view! {
                    <button type="button" class="ex-see" hidden=move || !checked.get()
                        on:click=move |_| see_error.set(ctx.apply(s.demo, s.pairs).err())>
                        "See it"
                    </button>
                })}
            </div>
        </form>
        {verdict_view(verdict)}
        {move || see_error.get().map(|e| view! { <p class="notice error" role="alert">{e}</p> })}
    }
    .into_any()
}
