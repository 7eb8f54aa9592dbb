//! What a demo's view receives from the frame around it.

use leptos::prelude::*;

use super::browser::mark_paint;
use super::theme::{Palette, Theme};
use crate::state::{Notice, Params, Value, Values};

/// What a demo's view receives.
#[derive(Clone, Copy)]
pub struct DemoCtx {
    pub values: RwSignal<Values>,
    /// "Show numbers": plots also render their data as tables.
    pub show_numbers: RwSignal<bool>,
    /// An error from drawing or computing, shown in place of the broken part.
    pub error: RwSignal<Option<String>>,
    pub theme: RwSignal<Theme>,
    /// Bumped on window resize: plots read it to redraw at the new width.
    pub resize: RwSignal<u32>,
    /// Outputs computed asynchronously by the view (e.g. by the GPT-2 worker), added to
    /// "Download data" under `computed`.
    pub computed: RwSignal<Option<serde_json::Value>>,
    /// Link values the demo could not use, shown above it. A view adds to them when a value
    /// turns out not to fit what it loaded (a layer the loaded model does not have).
    pub notices: RwSignal<Vec<Notice>>,
    /// Maxima a view sets on its integer sliders at run time, by key (the GPT-2 demo's layer,
    /// head and query token follow the loaded model and prompt); others keep their declared one.
    pub int_max: RwSignal<Vec<(&'static str, i64)>>,
}

impl DemoCtx {
    /// The demo's typed parameters, recomputed when a control (or a link, or Reset) changes one.
    pub fn params<P: Params>(self) -> Memo<P> {
        Memo::new(move |_| self.values.with(P::read))
    }

    /// The parameters now, without tracking (for event handlers).
    pub fn params_now<P: Params>(self) -> P {
        self.values.with_untracked(P::read)
    }

    /// Changes parameters from the view (a click on a key, a dragged point): each new value is
    /// clamped or checked by its control's range, and the link follows.
    pub fn set_params<P: Params>(self, change: impl FnOnce(&mut P)) {
        self.values.update(|v| {
            let mut p = P::read(v);
            change(&mut p);
            p.write(v);
        });
    }

    /// Ends integer sliders at run-time maxima: `limits` gives (key, last allowed value) pairs and
    /// is read again whenever what it reads changes (none yet: nothing is limited). A value past
    /// its maximum moves down to it, so the slider, its label and the link always say what the
    /// demo computes (never a value the demo silently clamps). A value the link asked for says so
    /// in the frame's notices, the first time its key has a limit, with `why(key, max)`
    /// ("this model has layers 0 to 3; showing layer 3"). `id` is the demo's, for the link's keys.
    pub fn limit_ints(
        self,
        id: &'static str,
        limits: impl Fn() -> Vec<(&'static str, i64)> + 'static,
        why: fn(&str, i64) -> String,
    ) {
        // The link's keys for this demo, until each has been judged against a limit.
        let linked = StoredValue::new(crate::kit::browser::link_keys_of(id));
        Effect::new(move |_| {
            let limits = limits();
            if self.int_max.with_untracked(|m| limits.iter().any(|l| !m.contains(l))) {
                self.int_max.update(|m| {
                    m.retain(|e| !limits.iter().any(|l| l.0 == e.0));
                    m.extend(limits.iter().copied());
                });
            }
            let over: Vec<(&'static str, i64, i64)> = self.values.with_untracked(|v| {
                limits
                    .iter()
                    .filter_map(|&(key, max)| match v.get(key) {
                        Some(Value::Int(x)) if *x > max => Some((key, *x, max)),
                        _ => None,
                    })
                    .collect()
            });
            let from_link: Vec<String> = linked.with_value(|l| l.clone());
            linked.update_value(|l| l.retain(|k| !limits.iter().any(|(key, _)| key == k)));
            if over.is_empty() {
                return;
            }
            let notes: Vec<Notice> = over
                .iter()
                .filter(|(key, ..)| from_link.iter().any(|k| k == key))
                .map(|&(key, x, max)| Notice {
                    key: format!("{id}.{key}"),
                    raw: x.to_string(),
                    reason: why(key, max),
                    cut: false,
                })
                .collect();
            if !notes.is_empty() {
                self.notices.update(|n| n.extend(notes));
            }
            self.values.update(|v| {
                for &(key, _, max) in &over {
                    v.set(key, Value::Int(max));
                }
            });
        });
    }

    /// [`limit_ints`](Self::limit_ints)' reason for settings that bound a slider.
    pub fn settings_limit(_key: &str, max: i64) -> String {
        format!("with the other settings it goes up to {max}; using {max}")
    }

    /// [`limit_ints`](Self::limit_ints)' reason for a loaded model's layers or heads.
    pub fn model_limit(key: &str, max: i64) -> String {
        format!("this model has {key}s 0 to {max}; showing {key} {max}")
    }

    /// Runs `draw` now and again whenever what it reads changes, and on theme or window-size
    /// changes. `draw` returns `None` while its canvases are not mounted yet; its error, if
    /// any, is shown in place of the demo's plots, and each draw is counted for the benchmark.
    pub fn paint(self, draw: impl Fn(&Palette) -> Option<Result<(), String>> + 'static) {
        Effect::new(move |_| {
            self.resize.track();
            let pal = self.theme.get().palette();
            crate::kit::plot::interned::prepare(&pal);
            if let Some(r) = draw(&pal) {
                self.report(r);
                mark_paint();
            }
        });
    }

    /// Reports a drawing result: clears the error on success.
    pub fn report(&self, r: Result<(), String>) {
        let next = r.err();
        if self.error.get_untracked() != next {
            self.error.set(next);
        }
    }
}
