//! A demo's control panel: its controls, the main ones first (`DemoSpec::panel`). Beside the
//! plots on a wide screen it shows them all. Pinned under the plots on a phone it folds to a
//! bar at a tap, and a demo that names main controls shows only those until "More controls".
//! Controls that change nothing for the current values (`Demo::idle`) are hidden.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::demos::DemoSpec;
use crate::kit::controls::Control;
use crate::kit::DemoCtx;

#[component]
pub fn ControlPanel(
    spec: &'static DemoSpec,
    ctx: DemoCtx,
    /// Called with the panel when focus enters it (the frame keeps a plot in view).
    on_focus: Callback<web_sys::Element>,
) -> impl IntoView {
    let folded = RwSignal::new(false);
    let more = RwSignal::new(false);
    let controls = spec.panel();
    let extra = controls.iter().filter(|(_, main)| !main).count();
    let has_main = extra > 0 && extra < controls.len();
    let keys: Vec<&'static str> = controls.iter().filter(|(_, main)| !main).map(|(p, _)| p.key).collect();
    let values = ctx.values;
    let shown_extra = move || values.with(|v| keys.iter().filter(|k| !(spec.idle)(v).contains(k)).count());
    let list_id = format!("{}-controls", spec.id);
    let focus = move |ev: web_sys::FocusEvent| {
        if let Some(panel) = ev.current_target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
            on_focus.run(panel);
        }
    };
    let items = controls
        .into_iter()
        .map(|(p, main)| {
            let idle = move || values.with(|v| (spec.idle)(v).contains(&p.key));
            view! {
                <div class="panel-item" class:extra=!main class:idle=idle>
                    <Control demo_id=spec.id param=p values=ctx.values int_max=ctx.int_max />
                </div>
            }
        })
        .collect_view();
    let more_button = has_main.then(|| {
        view! {
            <button type="button" class="more-controls" aria-expanded=move || more.get().to_string()
                on:click=move |_| more.update(|m| *m = !*m)>
                {move || if more.get() {
                    "Fewer controls ▴".to_string()
                } else {
                    format!("More controls ({}) ▾", shown_extra())
                }}
            </button>
        }
    });
    view! {
        <div class="controls" class:folded=folded class:more=more class:has-main=has_main on:focusin=focus>
            <button type="button" class="panel-toggle" aria-controls=list_id.clone()
                aria-expanded=move || (!folded.get()).to_string() on:click=move |_| folded.update(|f| *f = !*f)>
                {move || if folded.get() { "Show the controls ▴" } else { "Hide the controls ▾" }}
            </button>
            <div class="control-list" id=list_id>
                {items}
                {more_button}
            </div>
        </div>
    }
}
