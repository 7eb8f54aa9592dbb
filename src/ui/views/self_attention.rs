//! View of `self-attn`: every intermediate matrix of the chosen stage, and the permutation check.

use leptos::prelude::*;

use super::matrix_canvas::{mat_table, Mat, MatrixGrid};
use crate::demos::self_attention::{from_values, SelfAttention};
use crate::ui::demo_frame::DemoCtx;

fn mat(o: &SelfAttention, i: usize) -> Mat {
    let Some(m) = o.matrices.get(i) else { return Mat::default() };
    let (nr, nc) = (m.rows.len(), m.rows.first().map_or(0, Vec::len));
    let n = o.tokens.len();
    let dims: Vec<String> = (1..=nc).map(|j| format!("{j}")).collect();
    let rows: Vec<String> = if nr == n { o.tokens.clone() } else { (1..=nr).map(|j| j.to_string()).collect() };
    let cols = if nc == n && nr == n { o.tokens.clone() } else { dims };
    Mat::new(format!("{}  {}", m.name, m.shape), m.rows.clone(), m.weights).labels(&rows, &cols)
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(from_values));
    let mats = Signal::derive(move || out.with(|o| (0..o.matrices.len()).map(|i| mat(o, i)).collect::<Vec<_>>()));
    view! {
        <MatrixGrid ctx=ctx mats=mats/>
        <p class="readout">{move || out.with(|o| {
            let verdict = if o.equivariance_gap < 1e-9 {
                "permutation-equivariant: shuffling the input only shuffles the output"
            } else {
                "not equivariant: the output depends on the positions, not only on the set of tokens"
            };
            format!("Permutation check, max |f(P X) − P f(X)| for the reversal P: {:.1e} ({verdict}).", o.equivariance_gap)
        })}</p>
        {move || ctx.show_numbers.get().then(|| out.with(|o| (0..o.matrices.len()).map(|i| mat_table(&mat(o, i))).collect_view()))}
    }
    .into_any()
}
