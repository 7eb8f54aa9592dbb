//! View of `alignment`: both models' answers for the reader's word and the attention model's
//! alignment matrix (output steps × input positions).

use std::sync::Arc;

use leptos::prelude::*;

use super::matrix_canvas::{mat_table, Mat, MatrixGrid};
use crate::demos::alignment::{model_label, run, variant, Alignment};
use crate::seq2seq::label;
use crate::ui::demo_frame::DemoCtx;
use crate::ui::seq2seq_models::{load_models, loading_note};

/// The attention model's weights, rows labelled by what it wrote and columns by what it read.
fn matrix(a: &Alignment) -> Mat {
    let rows: Vec<Vec<f64>> = a.attention.attn.iter().map(|r| r.iter().map(|&x| f64::from(x)).collect()).collect();
    let outs: Vec<String> = a.attention.out.iter().map(|&i| label(i)).collect();
    let ins: Vec<String> = a.attention.src.iter().map(|&i| label(i)).collect();
    Mat::new("weights α (rows: output, columns: input)", rows, true).labels(&outs, &ins)
}

pub fn view(ctx: DemoCtx) -> AnyView {
    let models = load_models(ctx);
    let out = Memo::new(move |_| {
        models
            .with(|m| m.as_ref().map(|m| ctx.values.with(|v| run(m, v).map(Arc::new))))
            .map(|r| r.map_err(|e| e.to_string()))
    });
    Effect::new(move |_| {
        if let Some(Ok(a)) = out.get() {
            ctx.computed.set(serde_json::to_value(&*a).ok());
        }
    });
    let model_name = move || ctx.values.with(|v| model_label(variant(v)));
    let answers = move || {
        out.get().map(|r| match r {
            Ok(a) => {
                let mark = |ok: bool| if ok { ("✓", "right") } else { ("✗", "wrong") };
                let (fm, fc) = mark(a.fixed_right());
                let (am, ac) = mark(a.attention_right());
                let centres = (!a.attention.centres.is_empty()).then(|| {
                    let ps: Vec<String> = a.attention.centres.iter().map(|p| format!("{p:.1}")).collect();
                    view! { <p class="muted">"Predicted window centres pᵢ (0-based input positions): " {ps.join(", ")}</p> }
                });
                view! {
                    <dl class="answers">
                        <dt>"Fixed context"</dt><dd class=format!("answer {fc}")><code>{a.fixed_text()}</code>" "{fm}</dd>
                        <dt>{model_name}</dt><dd class=format!("answer attention {ac}")><code>{a.attention_text()}</code>" "{am}</dd>
                        <dt>"Correct"</dt><dd class="answer"><code>{a.expected.clone()}</code></dd>
                    </dl>
                    {centres}
                }
                .into_any()
            }
            Err(e) => view! { <p class="notice" role="alert">{e}</p> }.into_any(),
        })
    };
    let mats = Signal::derive(move || out.get().and_then(Result::ok).map_or_else(Vec::new, |a| vec![matrix(&a)]));
    view! {
        {loading_note(models)}
        <div class="alignment">{answers}</div>
        <MatrixGrid ctx=ctx mats=mats min_w=420.0/>
        {move || ctx.show_numbers.get().then(|| out.get().and_then(Result::ok).map(|a| mat_table(&matrix(&a))))}
    }
    .into_any()
}
