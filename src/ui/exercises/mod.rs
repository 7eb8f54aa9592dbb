//! The checked exercises at a chapter's end, on the page: one numbered card per exercise (its
//! kind's answer form, hints one at a time, the worked solution), the chapter's progress bar
//! and the answer sheet that prints after the exercises when the reader asks for it.
//!
//! The checks themselves are DOM-free (`crate::exercises`). Progress stays in this browser:
//! localStorage key `exercises:<chapter>` holds the solved ids, as `read` holds the chapters read.

mod card;
mod compute;
mod make;
mod predict;
mod sheet;

pub use card::ExerciseCard;
pub use sheet::{AnswerSheet, ExercisesBar};

use std::collections::BTreeSet;

use leptos::prelude::*;

use crate::chapters::{Chapter, Segment};
use crate::kit::browser::{local_get, local_set};
use crate::state::Values;

fn storage_key(slug: &str) -> String {
    format!("exercises:{slug}")
}

/// The ids of the exercises solved in chapter `slug` (kept in this browser only).
pub fn solved_ids(slug: &str) -> BTreeSet<String> {
    local_get(&storage_key(slug)).unwrap_or_default().split(',').filter(|s| !s.is_empty()).map(String::from).collect()
}

/// How many of `chapter`'s exercises are solved, and how many it has.
pub fn progress(chapter: &Chapter) -> (usize, usize) {
    let solved = solved_ids(chapter.slug);
    let ids: Vec<&str> = chapter.exercises().map(|e| e.id).collect();
    (ids.iter().filter(|id| solved.contains(**id)).count(), ids.len())
}

/// What the exercises of the open chapter share: the demos they set and read, by id, and the
/// chapter's progress. Provided by the chapter page before its body is built.
#[derive(Clone, Copy)]
pub struct ExerciseCtx {
    pub slug: &'static str,
    pub chapter: &'static Chapter,
    demos: StoredValue<Vec<(&'static str, RwSignal<Values>)>>,
    pub solved: RwSignal<BTreeSet<String>>,
    /// Bumped by "Reset my answers": every card rebuilds its form empty.
    pub reset: RwSignal<u32>,
    /// "Print with solutions" ticked: the answer sheet prints after the exercises.
    pub print_solutions: RwSignal<bool>,
}

impl ExerciseCtx {
    pub fn new(chapter: &'static Chapter, demos: Vec<(&'static str, RwSignal<Values>)>) -> Self {
        ExerciseCtx {
            slug: chapter.slug,
            chapter,
            demos: StoredValue::new(demos),
            solved: RwSignal::new(solved_ids(chapter.slug)),
            reset: RwSignal::new(0),
            print_solutions: RwSignal::new(false),
        }
    }

    /// The live values of demo `id` on this page.
    pub fn demo(&self, id: &str) -> Option<RwSignal<Values>> {
        self.demos.with_value(|d| d.iter().find(|(d, _)| *d == id).map(|(_, v)| *v))
    }

    /// Sets demo `id` to the URL `pairs` exactly as opening a shared link would (unset keys take
    /// the demo's baseline: `DemoSpec::from_link`), and scrolls it into view. The address
    /// follows, as for any control.
    pub fn apply(&self, id: &str, pairs: &[(&str, &str)]) -> Result<(), String> {
        let values = self.demo(id).ok_or_else(|| format!("the demo \"{id}\" is not on this page"))?;
        let spec = crate::demos::find(id).ok_or_else(|| format!("no demo \"{id}\""))?;
        let owned: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let (next, notices) = spec.from_link(&owned);
        if let Some(n) = notices.first() {
            return Err(n.message());
        }
        values.set(next);
        if let Some(el) = document().get_element_by_id(id) {
            el.scroll_into_view();
        }
        Ok(())
    }

    pub fn is_solved(&self, id: &str) -> bool {
        self.solved.with(|s| s.contains(id))
    }

    pub fn mark_solved(&self, id: &str) {
        if self.solved.with_untracked(|s| s.contains(id)) {
            return;
        }
        self.solved.update(|s| {
            s.insert(id.to_string());
        });
        self.save();
    }

    /// Forgets this chapter's progress and empties every card.
    pub fn reset_all(&self) {
        self.solved.set(BTreeSet::new());
        self.save();
        self.reset.update(|n| *n = n.wrapping_add(1));
    }

    fn save(&self) {
        let list: Vec<String> = self.solved.get_untracked().into_iter().collect();
        local_set(&storage_key(self.slug), &list.join(","));
    }

    /// The exercise's number in its chapter, from 1.
    pub fn number(&self, id: &str) -> usize {
        self.chapter.exercises().position(|e| e.id == id).map_or(0, |i| i + 1)
    }

    /// Whether `seg` is the chapter's first exercise (the progress bar goes before it).
    pub fn is_first(&self, seg: &Segment) -> bool {
        matches!(seg, Segment::Exercise(e) if self.number(e.id) == 1)
    }

    /// Whether `seg` is the chapter's last exercise (the answer sheet goes after it).
    pub fn is_last(&self, seg: &Segment) -> bool {
        matches!(seg, Segment::Exercise(e) if self.number(e.id) == self.chapter.exercises().count())
    }
}

/// The icon and words of a verdict, never colour alone.
#[derive(Clone, PartialEq)]
pub(crate) enum Shown {
    Right(String),
    /// Wrong, with the words and, if any, a targeted hint (HTML from our own files).
    Wrong(String, Option<&'static str>),
    Unreadable(String),
}

/// The verdict region: announced politely whenever it changes.
pub(crate) fn verdict_view(v: RwSignal<Option<Shown>>) -> impl IntoView {
    view! {
        <div class="ex-verdict" aria-live="polite">
            {move || v.get().map(|s| match s {
                Shown::Right(words) => view! {
                    <p class="right"><span class="icon" aria-hidden="true">"✓"</span>" "<strong>"Right."</strong>
                        " "{words}</p>
                }.into_any(),
                Shown::Wrong(words, hint) => view! {
                    <p class="wrong"><span class="icon" aria-hidden="true">"✗"</span>" "<strong>"Not right."</strong>
                        " "{words}" "{hint.map(|h| view! { <span class="ex-targeted" inner_html=h></span> })}</p>
                }.into_any(),
                Shown::Unreadable(why) => view! {
                    <p class="unreadable"><span class="icon" aria-hidden="true">"?"</span>" "
                        <strong>"Could not read that:"</strong>" "{why}</p>
                }.into_any(),
            })}
        </div>
    }
}
