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
    /// is read again whenever what it reads changes. A value past its maximum moves down to it, so
    /// the slider, its label and the link always say what the demo computes (never a value the
    /// demo silently clamps); a value the link asked for says so in the frame's notices. `id` is
    /// the demo's, for the notice's key.
    pub fn limit_ints(self, id: &'static str, limits: impl Fn() -> Vec<(&'static str, i64)> + 'static) {
        Effect::new(move |before: Option<()>| {
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
            if over.is_empty() {
                return;
            }
            // The first run reads the values the page opened with: a link's.
            if before.is_none() {
                let notes = over.iter().map(|&(key, x, max)| Notice {
                    key: format!("{id}.{key}"),
                    raw: x.to_string(),
                    reason: format!("with the other settings it goes up to {max}; using {max}"),
                    cut: false,
                });
                self.notices.update(|n| n.extend(notes));
            }
            self.values.update(|v| {
                for &(key, _, max) in &over {
                    v.set(key, Value::Int(max));
                }
            });
        });
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
