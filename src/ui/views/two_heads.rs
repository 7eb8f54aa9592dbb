//! View of `two-heads`: the previous-token head and the same-word head.

use leptos::prelude::*;

use super::matrix_canvas::{mat_table, Mat, MatrixGrid};
use crate::demos::two_heads::{compute, TwoHeads};
use crate::ui::demo_frame::DemoCtx;

fn mats(t: &TwoHeads) -> (Mat, Mat) {
    (
        Mat::new("head A: previous token", t.previous_token.clone(), true).labels(&t.tokens, &t.tokens),
        Mat::new("head B: same word", t.same_word.clone(), true).labels(&t.tokens, &t.tokens),
    )
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(|v| compute(v.float("beta"), v.flag("causal"))));
    let a = Signal::derive(move || out.with(|o| mats(o).0));
    let b = Signal::derive(move || out.with(|o| mats(o).1));
    view! {
        <MatrixGrid ctx=ctx mats=Signal::derive(move || vec![a.get(), b.get()])/>
        <p class="muted">"Rows: queries. Columns: keys."</p>
        {move || ctx.show_numbers.get().then(|| out.with(|o| { let (a, b) = mats(o); view! { {mat_table(&a)} {mat_table(&b)} } }))}
    }
    .into_any()
}
