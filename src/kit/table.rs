//! Tables of numbers ("Show numbers") and their cell format.
use crate::numerics::format::Signed;
use leptos::prelude::*;

/// A table of numbers ("Show numbers"), with a caption naming what it holds. Its box scrolls
/// when the table is wider or taller than it, so the box is a region named by the caption and
/// in the Tab order: a keyboard reader scrolls it with the arrow keys (every `.table-wrap` is).
pub fn number_table(caption: String, head: Vec<String>, rows: Vec<Vec<String>>) -> impl IntoView {
    let label = caption.clone();
    view! {
        <div class="table-wrap" role="region" tabindex="0" aria-label=label>
            <table class="numbers">
                <caption>{caption}</caption>
                <thead><tr>{head.into_iter().map(|h| view! { <th scope="col">{h}</th> }).collect_view()}</tr></thead>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|r| view! { <tr>{r.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}</tr> })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// Four decimals, or "—" for a missing value.
pub fn f4(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}", v = Signed(v))).unwrap_or_else(|| "—".into())
}
