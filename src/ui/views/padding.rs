//! View of `padding`: per sentence, the masked scores and the weights.

use leptos::prelude::*;

use super::matrix_canvas::{mat_table, Mat, MatrixGrid};
use crate::demos::padding::{from_values, Sequence};
use crate::ui::demo_frame::DemoCtx;

fn mats(s: &Sequence) -> (Mat, Mat) {
    let scores = Mat::new(format!("masked scores, valid length {}", s.valid), s.masked.clone(), false)
        .labels(&s.tokens, &s.tokens);
    let mut weights = Mat::new("weights", s.weights.clone(), true).labels(&s.tokens, &s.tokens);
    let undefined: Vec<bool> = s.defined.iter().map(|d| !d).collect();
    if undefined.iter().any(|&u| u) {
        weights.undefined = Some(undefined);
    }
    (scores, weights)
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(from_values));
    let pair = move |i: usize| {
        let scores = Signal::derive(move || out.with(|o| mats(&o[i]).0));
        let weights = Signal::derive(move || out.with(|o| mats(&o[i]).1));
        view! {
            <div class="seq">
                <p class="seq-title">{move || out.with(|o| o[i].tokens.join(" "))}</p>
                <MatrixGrid ctx=ctx mats=Signal::derive(move || vec![scores.get(), weights.get()])/>
            </div>
        }
    };
    let empty_note = move || {
        out.with(|o| {
            let empty: Vec<usize> = o.iter().enumerate().filter(|(_, s)| s.valid == 0).map(|(i, _)| i + 1).collect(); // sentences are counted, like the prose
            (!empty.is_empty()).then(|| {
                let which = empty.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" and ");
                if o.iter().any(|s| s.defined.iter().any(|d| !d)) {
                    format!("Sentence {which} has valid length 0: every key is masked with −∞, so each softmax is 0/0 and has no value. Those rows are marked 0/0; real code must guard against them (they would turn into NaN).")
                } else {
                    format!("Sentence {which} has valid length 0: every score is the same −10⁶, so the softmax is uniform (1/4 each) over the padding: a number, but a meaningless one.")
                }
            })
        })
    };
    view! {
        {pair(0)}
        {pair(1)}
        {pair(2)}
        {move || empty_note().map(|t| view! { <p class="notice" role="note">{t}</p> })}
        {move || ctx.show_numbers.get().then(|| out.with(|o| o.iter().map(|s| { let (a, b) = mats(s); view! { {mat_table(&a)} {mat_table(&b)} } }).collect_view()))}
    }
    .into_any()
}
