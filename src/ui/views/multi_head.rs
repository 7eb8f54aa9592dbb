//! View of `multi-head`: one heatmap per head, the concatenation, the output, the cost.

use leptos::prelude::*;

use super::matrix_canvas::{mat_table, Mat, MatrixGrid};
use crate::demos::multi_head::{from_values, MultiHeadOut};
use crate::ui::demo_frame::DemoCtx;

fn head(o: &MultiHeadOut, j: usize) -> Mat {
    let toks: Vec<String> = (0..o.n).map(|i| format!("t{i}")).collect();
    Mat::new(format!("head {j} (d_head = {})", o.d_head), o.heads.get(j).cloned().unwrap_or_default(), true)
        .labels(&toks, &toks)
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(from_values));
    let heads = Signal::derive(move || out.with(|o| (0..o.h).map(|j| head(o, j)).collect::<Vec<_>>()));
    let concat = Signal::derive(move || {
        out.with(|o| {
            Mat::new(format!("Concat(head 0 … head {}): ({}, 16)", o.h.saturating_sub(1), o.n), o.concat.clone(), false)
        })
    });
    let w_o = Signal::derive(move || out.with(|o| Mat::new("W_O: (16, 16)", o.w_o.clone(), false)));
    let output = Signal::derive(move || {
        out.with(|o| Mat::new(format!("output = Concat · W_O: ({}, 16)", o.n), o.output.clone(), false))
    });
    view! {
        <MatrixGrid ctx=ctx mats=heads min_w=170.0/>
        <p class="readout">{move || out.with(|o| format!(
            "Cost of Q Kᵀ and weights · V: {} heads × 2·n²·d_head = {} × 2·{}²·{} = {} multiply-adds (2·n²·d_model = {}).",
            o.h, o.h, o.n, o.d_head, o.flops_total, 2 * o.n * o.n * 16
        ))}</p>
        <MatrixGrid ctx=ctx mats=Signal::derive(move || vec![concat.get(), w_o.get(), output.get()]) min_w=215.0/>
        {move || ctx.show_numbers.get().then(|| out.with(|o| (0..o.h).map(|j| mat_table(&head(o, j))).collect_view()))}
    }
    .into_any()
}
