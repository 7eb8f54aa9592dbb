//! View of `self-attn`: every intermediate matrix of the chosen stage, and the permutation check.

use leptos::prelude::*;

use super::matrix_canvas::{mat_table, Mat, MatrixGrid};
use crate::demos::self_attention::{from_values, SelfAttention, MAX, X_LIMIT};
use crate::state::{fmt_num, format_cells, Value};
use crate::ui::demo_frame::DemoCtx;

fn mat(o: &SelfAttention, i: usize) -> Mat {
    let Some(m) = o.matrices.get(i) else { return Mat::default() };
    let (nr, nc) = (m.rows.len(), m.rows.first().map_or(0, Vec::len));
    let n = o.tokens.len();
    let dims: Vec<String> = (0..nc).map(|j| format!("{j}")).collect();
    let rows: Vec<String> = if nr == n { o.tokens.clone() } else { (0..nr).map(|j| j.to_string()).collect() };
    let cols = if nc == n && nr == n { o.tokens.clone() } else { dims };
    Mat::new(format!("{}  {}", m.name, m.shape), m.rows.clone(), m.weights).labels(&rows, &cols)
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(from_values));
    let mats = Signal::derive(move || out.with(|o| (0..o.matrices.len()).map(|i| mat(o, i)).collect::<Vec<_>>()));
    view! {
        {x_editor(ctx, out)}
        <MatrixGrid ctx=ctx mats=mats/>
        <p class="readout">{move || out.with(|o| {
            let verdict = if o.equivariance_gap < 1e-9 {
                "permutation-equivariant: shuffling the input only shuffles the output"
            } else {
                "not equivariant: the output depends on the positions, not only on the set of tokens"
            };
            format!("Permutation check, max |f(P X) − P f(X)| for the reversal P: {} ({verdict}).", crate::numerics::format::num(o.equivariance_gap))
        })}</p>
        {move || ctx.show_numbers.get().then(|| out.with(|o| (0..o.matrices.len()).map(|i| mat_table(&mat(o, i))).collect_view()))}
    }
    .into_any()
}

/// X as a grid of number fields (rows = tokens in their original order). A committed value
/// (Enter, Tab or leaving the field) replaces that cell, and the whole X then lives in the link;
/// "Use the seed's X", or a new seed, drops the typed cells. The fields are
/// never rebuilt, so editing one leaves focus where the keyboard put it.
fn x_editor(ctx: DemoCtx, out: Memo<SelfAttention>) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let set_cell = move |i: usize, j: usize, raw: String| match raw.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v.abs() <= X_LIMIT => {
            error.set(None);
            let mut x = out.with_untracked(|o| o.x.clone());
            if let Some(cell) = x.get_mut(i).and_then(|r| r.get_mut(j)) {
                *cell = (v * 100.0).round() / 100.0 + 0.0; // hundredths; + 0.0 turns −0 into 0
                ctx.values.update(|vals| vals.set("x", Value::Text(format_cells(&x))));
            }
        }
        _ => error.set(Some(format!(
            "“{}” is not a number from −{l} to {l}: X is unchanged.",
            raw.trim(),
            l = fmt_num(X_LIMIT)
        ))),
    };
    // A new seed draws a new X: typed cells would hide it, so they go.
    let seed = Memo::new(move |_| ctx.values.with(|v| v.seed("seed")));
    Effect::new(move |prev: Option<u32>| {
        let s = seed.get();
        if prev.is_some_and(|p| p != s) && ctx.values.with_untracked(|v| !v.text("x").is_empty()) {
            ctx.values.update(|v| v.set("x", Value::Text(String::new())));
        }
        s
    });
    // All 8 × 8 fields always exist and keep their place: a box sized to X's shape shows the
    // top-left n × d of them, and those outside it leave the Tab order and the accessibility
    // tree. Hiding them instead (display: none) made each n or d move lay the table out again,
    // 3 to 5 ms here. (The box's size is set directly: custom properties set on it would be
    // inherited by every field and restyle them all.) The table is never rebuilt, so editing a
    // cell leaves focus where it is.
    let shape = Memo::new(move |_| out.with(|o| (o.x.len(), o.x.first().map_or(0, Vec::len))));
    let row_out: Vec<Memo<bool>> = (0..MAX).map(|i| Memo::new(move |_| i >= shape.get().0)).collect();
    let col_out: Vec<Memo<bool>> = (0..MAX).map(|j| Memo::new(move |_| j >= shape.get().1)).collect();
    // One memo per field: a move that leaves a cell's text as it was leaves its field alone
    // (setting a field's value, even to the same text, makes the browser lay it out again).
    let cells: Vec<Memo<String>> = (0..MAX * MAX)
        .map(|k| {
            Memo::new(move |_| {
                out.with(|o| o.x.get(k / MAX).and_then(|r| r.get(k % MAX)).map_or(String::new(), |&x| fmt_num(x)))
            })
        })
        .collect();
    view! {
        <div class="x-editor">
            <p class="x-editor-title">"Input X (one row per token): type in any cell"</p>
            <div class="x-cells-scroll">
                <div class="x-cells-clip" style=move || { let (n, d) = shape.get(); format!("width: calc(var(--xh) + {d} * var(--xw)); height: calc(var(--xt) + {n} * var(--xr))") }>
                    <table class="x-cells">
                        // The corner heads nothing: a plain cell (an empty header confuses screen readers).
                        <tr><td class="x-corner"></td>{col_out.iter().enumerate().map(|(j, &out_j)| view! {
                            <th scope="col" aria-hidden=move || out_j.get().then_some("true")>{j}</th>
                        }).collect_view()}</tr>
                        {row_out.iter().enumerate().map(|(i, &out_i)| view! {
                            <tr aria-hidden=move || out_i.get().then_some("true")>
                                <th scope="row">{format!("t{i}")}</th>
                                {col_out.iter().enumerate().map(|(j, &out_j)| { let cell = cells[i * MAX + j]; view! {
                                    <td><input type="number" step="0.1" min=-X_LIMIT max=X_LIMIT
                                        aria-label=format!("X row {i} column {j}")
                                        tabindex=move || (out_i.get() || out_j.get()).then_some("-1")
                                        aria-hidden=move || out_j.get().then_some("true")
                                        prop:value=move || cell.get()
                                        on:change=move |ev| set_cell(i, j, event_target_value(&ev)) /></td>
                                }}).collect_view()}
                            </tr>
                        }).collect_view()}
                    </table>
                </div>
            </div>
            {move || out.with(|o| o.typed).then(|| view! {
                <button type="button" class="x-reset" on:click=move |_| ctx.values.update(|v| v.set("x", Value::Text(String::new())))>
                    "Use the seed's X"
                </button>
            })}
            {move || error.get().map(|e| view! { <p class="notice error" role="alert">{e}</p> })}
        </div>
    }
}
