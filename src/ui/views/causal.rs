//! View of `causal`: masked scores and weights with and without the look-ahead mask.

use leptos::prelude::*;

use super::matrix_canvas::{mat_table, Mat, MatrixGrid};
use crate::demos::causal::{from_values, Causal};
use crate::ui::demo_frame::DemoCtx;

fn mats(c: &Causal) -> (Mat, Mat) {
    (
        Mat::new("scores Q Kᵀ/√d (masked)", c.masked.clone(), false).labels(&c.tokens, &c.tokens),
        Mat::new("weights", c.weights.clone(), true).labels(&c.tokens, &c.tokens),
    )
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(from_values));
    let scores = Signal::derive(move || out.with(|o| mats(o).0));
    let weights = Signal::derive(move || out.with(|o| mats(o).1));
    view! {
        <MatrixGrid ctx=ctx mats=Signal::derive(move || vec![scores.get(), weights.get()])/>
        <p class="muted">"Rows: queries. Columns: keys."</p>
        {move || ctx.show_numbers.get().then(|| out.with(|o| { let (a, b) = mats(o); view! { {mat_table(&a)} {mat_table(&b)} } }))}
    }
    .into_any()
}
