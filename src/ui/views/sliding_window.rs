//! View of `sliding-window`: the one-layer mask and the reach after stacked layers as
//! matrices, and the chosen query's tokens labelled by the layer that first brings them.

use leptos::prelude::*;

use super::matrix_canvas::{mat_table, Mat, MatrixGrid};
use crate::demos::sliding_window::{from_values, SlidingWindow};
use crate::ui::demo_frame::DemoCtx;

fn mats(s: &SlidingWindow) -> (Mat, Mat) {
    let layers = if s.layers == 1 { "1 layer".to_string() } else { format!("{} layers", s.layers) };
    (
        Mat::new(format!("one layer's mask (w = {})", s.window), s.mask.clone(), true).labels(&s.tokens, &s.tokens),
        Mat::new(format!("reached after {layers}"), s.reach.clone(), true).labels(&s.tokens, &s.tokens),
    )
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(from_values));
    let grid = Signal::derive(move || {
        out.with(|o| {
            let (a, b) = mats(o);
            vec![a, b]
        })
    });
    let readout = move || {
        out.with(|o| {
            let field = o.receptive_field;
            format!(
                "Query {} (\"{}\") hears from {} token{} after {} layer{}: L·(w − 1) + 1 = {}·{} + 1 = {}{}.",
                o.query,
                o.tokens[o.query],
                o.reached,
                if o.reached == 1 { "" } else { "s" },
                o.layers,
                if o.layers == 1 { "" } else { "s" },
                o.layers,
                o.window.saturating_sub(1),
                field,
                if field > o.query + 1 {
                    format!(", cut to the {} tokens it has before it", o.query + 1)
                } else {
                    String::new()
                },
            )
        })
    };
    let strip = move || {
        out.with(|o| {
            o.tokens
                .iter()
                .zip(&o.first_layer)
                .enumerate()
                .map(|(j, (t, l))| {
                    let class = match (j == o.query, l) {
                        (true, _) => "tok query",
                        (false, Some(_)) => "tok reached",
                        (false, None) => "tok",
                    };
                    let title = match l {
                        Some(l) if j == o.query => format!("the query itself (layer {l})"),
                        Some(l) => format!("reaches the query at layer {l}"),
                        None if j > o.query => "after the query: never seen (causal)".to_string(),
                        None => "out of reach at this depth".to_string(),
                    };
                    let layer = l.map(|l| l.to_string()).unwrap_or_default();
                    view! { <span class=class title=title.clone() aria-label=format!("{t}: {title}")>{t.to_string()}<small>{layer}</small></span> }
                })
                .collect_view()
        })
    };
    view! {
        <MatrixGrid ctx=ctx mats=grid/>
        <p class="muted">"Rows are queries, columns are keys. Yellow (1): in the mask, the query may attend to the key; in the second matrix, information from the key has reached the query. Dark (0): it may not, or has not."</p>
        <p class="readout" role="status">{readout}</p>
        <div class="token-strip" aria-label="The query's tokens, each numbered by the layer at which it first reaches the query">{strip}</div>
        {move || ctx.show_numbers.get().then(|| out.with(|o| { let (a, b) = mats(o); view! { {mat_table(&a)} {mat_table(&b)} } }))}
    }
    .into_any()
}
