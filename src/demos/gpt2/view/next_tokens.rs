//! The next-token distribution as labelled bars (HTML: long token texts stay readable); with
//! knock-outs, each token's intact and knocked-out probabilities side by side.

use crate::numerics::format::Signed;
use leptos::prelude::*;

use super::super::{next_rows, NextRow, Prob, CANDIDATES, SHOWN};
use super::generate::Generation;
use super::store::{store, Side};
use crate::kit::number_table;

/// The "Next token" panel: the chart and the generation buttons.
#[component]
pub fn NextTokens() -> impl IntoView {
    let s = store();
    let list = move || {
        s.result.with(|r| {
            let r = r.as_ref()?;
            Some(next_chart(&next_rows(&r.a.next, r.a.baseline.as_deref(), CANDIDATES, SHOWN), false))
        })
    };
    let knocked = move || s.result.with(|r| r.as_ref().is_some_and(|r| r.a.baseline.is_some()));
    // With knock-outs the chart has two bars a token: it takes the whole row.
    view! {
        <div class="gpt2-panel" class:wide=knocked>
            <h4>"Next token"</h4>
            {list}
            // Generation extends the prompt of both sides: it runs in the first model.
            {matches!(s.side, Side::A).then(|| view! { <Generation/> })}
        </div>
    }
}

/// The next-token chart: one row per token, a bar for the intact model and, with knock-outs,
/// a second bar for the model without those heads, each with its percentage. Bars share one
/// scale, the largest probability shown, so the two can be compared by length.
pub fn next_chart(rows: &[NextRow], short: bool) -> impl IntoView {
    let knocked = rows.iter().any(|r| r.knocked.is_some());
    let top =
        rows.iter().flat_map(|r| [Some(r.intact.bar()), r.knocked.map(|k| k.bar())]).flatten().fold(1e-9, f64::max);
    let width = move |p: f64| format!("width: {:.1}%", 100.0 * p / top);
    let label =
        if knocked { "Next tokens: intact model and with the knock-outs" } else { "The most likely next tokens" };
    view! {
        <ol class="next-list" class:short=short class:knocked=knocked aria-label=label>
            {rows.iter().map(|r| view! {
                <li data-token=r.text.clone()>
                    <span class="next-token">{format!("{:?}", r.text)}</span>
                    <span class="next-bars">
                        <span class="bar intact" style=width(r.intact.bar())></span>
                        {r.knocked.map(|k| view! { <span class="bar knocked" style=width(k.bar())></span> })}
                    </span>
                    <span class="next-prob">
                        <span class="p-intact">{r.intact.label()}</span>
                        {r.knocked.map(|k| view! { " → "<span class="p-knocked">{k.label()}</span> })}
                    </span>
                </li>
            }).collect_view()}
        </ol>
        {knocked.then(|| view! {
            <p class="muted legend-line">
                <span class="key intact"></span>" intact model  "<span class="key knocked"></span>" with the knock-outs"
            </p>
        })}
    }
}

/// The chart's numbers as a table, under "Show numbers".
#[component]
pub fn NextNumbers() -> impl IntoView {
    let s = store();
    move || {
        s.ctx.show_numbers.get().then(|| {
            s.result.with(|r| {
                r.as_ref().map(|r| {
                    let shown = next_rows(&r.a.next, r.a.baseline.as_deref(), CANDIDATES, SHOWN);
                    let knocked = shown.iter().any(|x| x.knocked.is_some());
                    let exact = |p: Prob| match p {
                        Prob::Exact(p) => format!("{p:.4}", p = Signed(p)),
                        Prob::Below(p) => format!("<{p:.4}", p = Signed(p)),
                    };
                    let rows = shown
                        .iter()
                        .map(|x| {
                            let mut row = vec![format!("{:?}", x.text), x.id.to_string(), exact(x.intact)];
                            row.extend(x.knocked.map(exact));
                            row
                        })
                        .collect();
                    let first = if knocked { "intact" } else { "probability" };
                    let mut head = vec!["token".to_string(), "id".into(), first.into()];
                    if knocked {
                        head.push("knocked out".into());
                    }
                    number_table("Next-token candidates".into(), head, rows)
                })
            })
        })
    }
}
