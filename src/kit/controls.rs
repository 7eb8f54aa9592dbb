//! One control per `Param`, generated from its declaration: sliders (linear or logarithmic),
//! selects, text fields, seeds with a "resample" button, checkboxes. Every control has a
//! visible label tied to it (`for`/`id`), which is also its accessible name.

use leptos::prelude::*;

use crate::state::{fmt_sig, nearest_stop, Kind, Param, Value, Values};

pub use crate::state::round_sig;

/// The value as shown next to a control.
pub fn display(v: &Value) -> String {
    match v {
        Value::Float(x) => fmt_sig(*x),
        Value::Int(x) => x.to_string(),
        Value::Choice(s) | Value::Text(s) => s.clone(),
        Value::Seed(s) => format!("seed {s}"),
        Value::Bool(b) => if *b { "on" } else { "off" }.into(),
    }
}

#[component]
pub fn Control(
    demo_id: &'static str,
    param: &'static Param,
    values: RwSignal<Values>,
    /// Run-time maxima of integer sliders by key (`DemoCtx::int_max`).
    #[prop(optional)]
    int_max: Option<RwSignal<Vec<(&'static str, i64)>>>,
) -> impl IntoView {
    if matches!(param.kind, Kind::Cells { .. }) {
        return ().into_any(); // edited cell by cell in the demo's own view
    }
    let id = format!("{demo_id}-{}", param.key);
    let key = param.key;
    // A memo: a change of another control (or of the prompt, with every generated token) leaves
    // this one as it is, rather than setting every control's value and label again.
    let current = Memo::new(move |_| values.with(|v| v.get(key).cloned().unwrap_or_else(|| param.default_value())));
    let current = move || current.get();
    let set = move |v: Value| values.update(|vals| vals.set(key, v));
    let shown = move || display(&current());
    let label_id = id.clone();
    let widget = match param.kind {
        Kind::Float { min, max, step, log, .. } => {
            // A logarithmic slider's positions are its stops (`state::log_stops`), one value each.
            let stops = param.log_stops().unwrap_or_default();
            let (lo, hi, st) = if log { (0.0, stops.len().saturating_sub(1) as f64, 1.0) } else { (min, max, step) };
            let at = stops.clone();
            let pos = move || match current() {
                Value::Float(x) if log => nearest_stop(&at, x) as f64,
                Value::Float(x) => x,
                _ => lo,
            };
            view! {
                <input type="range" id=id.clone() min=lo max=hi step=st
                    prop:value=move || pos().to_string()
                    aria-valuetext=shown
                    on:input=move |ev| {
                        if let Ok(p) = event_target_value(&ev).parse::<f64>() {
                            let stop = || stops.get(p as usize).or(stops.last()).copied().unwrap_or(min);
                            set(Value::Float(if log { stop() } else { p }));
                        }
                    } />
            }
            .into_any()
        }
        Kind::Int { min, max, log, .. } => {
            let stops = param.log_stops().unwrap_or_default();
            let (lo, hi) = if log { (0.0, stops.len().saturating_sub(1) as f64) } else { (min as f64, max as f64) };
            let at = stops.clone();
            // A linear slider's end follows a run-time maximum when its view sets one.
            let hi = move || match int_max.and_then(|m| m.with(|m| m.iter().find(|e| e.0 == key).map(|e| e.1))) {
                Some(m) if !log => m.clamp(min, max) as f64,
                _ => hi,
            };
            let pos = move || match current() {
                Value::Int(x) if log => nearest_stop(&at, x as f64) as f64,
                Value::Int(x) => x as f64,
                _ => lo,
            };
            view! {
                <input type="range" id=id.clone() min=lo max=hi step=1
                    prop:value=move || {
                        // A new maximum can move the thumb by itself (the browser keeps it in range): set it again.
                        let _ = hi();
                        pos().to_string()
                    }
                    aria-valuetext=shown
                    on:input=move |ev| {
                        if let Ok(p) = event_target_value(&ev).parse::<f64>() {
                            let stop = || stops.get(p as usize).or(stops.last()).copied().unwrap_or(min as f64);
                            let x = if log { stop() } else { p };
                            set(Value::Int(x as i64));
                        }
                    } />
            }
            .into_any()
        }
        Kind::Choice { options, .. } => view! {
            <select id=id.clone()
                prop:value=move || display(&current())
                on:change=move |ev| set(Value::Choice(event_target_value(&ev)))>
                {options.iter().map(|(v, label)| view! { <option value=*v>{*label}</option> }).collect_view()}
            </select>
        }
        .into_any(),
        // Long texts (prompts) get a text area; the browser cuts a paste at `max_len`, and the note says so.
        Kind::Text { max_len, .. } if max_len > 1000 => {
            let full = move || matches!(current(), Value::Text(t) if t.chars().count() >= max_len);
            view! {
                <textarea id=id.clone() maxlength=max_len rows="3" spellcheck="false"
                    prop:value=move || display(&current())
                    on:input=move |ev| set(Value::Text(event_target_value(&ev)))></textarea>
                {move || full().then(|| view! {
                    <p class="muted text-limit" role="status">
                        {format!("At the limit of {max_len} characters: longer text is cut there.")}
                    </p>
                })}
            }
            .into_any()
        }
        Kind::Text { max_len, .. } => view! {
            <input type="text" id=id.clone() maxlength=max_len autocomplete="off" spellcheck="false"
                prop:value=move || display(&current())
                on:input=move |ev| set(Value::Text(event_target_value(&ev))) />
        }
        .into_any(),
        Kind::Seed { .. } => view! {
            <button type="button" id=id.clone() class="resample"
                title="Draw new random data (a new seed)"
                on:click=move |_| set(Value::Seed((js_sys::Math::random() * 4_294_967_295.0) as u32))>
                "Resample"
            </button>
        }
        .into_any(),
        Kind::Bool { .. } => view! {
            <input type="checkbox" id=id.clone()
                prop:checked=move || matches!(current(), Value::Bool(true))
                on:change=move |ev| set(Value::Bool(event_target_checked(&ev))) />
        }
        .into_any(),
        Kind::Cells { .. } => ().into_any(),
    };
    view! {
        <div class="control">
            <label for=label_id>
                <span class="label">{param.label}</span>
                {(!matches!(param.kind, Kind::Choice { .. } | Kind::Text { .. }))
                    .then(|| view! { <output class="value">{shown}</output> })}
            </label>
            {widget}
        </div>
    }
    .into_any()
}
