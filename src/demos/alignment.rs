//! Demo `alignment` (chapter "why-attention"): the reader's word, reversed by the fixed-context
//! model and by an attention model, with the attention model's alignment matrix. The weights
//! are fetched by the page; `data` gives the input and the expected answer, and the view adds
//! both models' outputs to "Download data".

use super::DemoSpec;
use crate::seq2seq::{decode, encode, eval::target, Decoded, Models, Variant};
use crate::state::{Param, Values};

pub static ATTENTION: &[(&str, &str)] = &[
    ("bahdanau", "Bahdanau (additive, previous state)"),
    ("luong_dot", "Luong dot"),
    ("luong_general", "Luong general"),
    ("luong_concat", "Luong concat"),
    ("luong_local", "Luong local-p (window D = 4)"),
];

pub static PARAMS: &[Param] = &[
    Param::text("text", "Word to reverse (letters a–z)", 30, "attention"),
    Param::choice("model", "Attention model", ATTENTION, 0),
];

/// Both models' answers for one input.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Alignment {
    pub input: String,
    pub expected: String,
    pub fixed: Decoded,
    pub attention: Decoded,
}

impl Alignment {
    pub fn fixed_text(&self) -> String {
        decode(&self.fixed.out)
    }
    pub fn attention_text(&self) -> String {
        decode(&self.attention.out)
    }
    pub fn fixed_right(&self) -> bool {
        self.fixed.out == target(&self.fixed.src)
    }
    pub fn attention_right(&self) -> bool {
        self.attention.out == target(&self.attention.src)
    }
}

/// What the page calls a model: "fixed context", or its entry in `ATTENTION`.
pub fn model_label(v: Variant) -> &'static str {
    match v {
        Variant::Fixed => "fixed context",
        v => ATTENTION.iter().find(|o| o.0 == v.key()).map_or("attention", |o| o.1),
    }
}

pub fn variant(v: &Values) -> Variant {
    Variant::parse(v.text("model")).unwrap_or(Variant::Bahdanau)
}

/// Decodes the controls' word with both models, or says why the word cannot be read.
pub fn run(models: &Models, v: &Values) -> Result<Alignment, String> {
    let src = encode(v.text("text"))?;
    if src.len() - 1 > models.max_len {
        return Err(format!("the models were trained on up to {} letters", models.max_len));
    }
    Ok(Alignment {
        input: decode(&src),
        expected: decode(&target(&src)),
        fixed: models.get(Variant::Fixed).greedy(&src),
        attention: models.get(variant(v)).greedy(&src),
    })
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    let src = encode(v.text("text"))?;
    Ok(
        serde_json::json!({ "input": decode(&src), "expected": decode(&target(&src)), "model": variant(v), "note": "The models run in the browser; the page's Download data adds their outputs and the alignment." }),
    )
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "alignment",
    title: "Reverse a word, with and without attention",
    caption: "Both models read your word letter by letter and write it backwards. The fixed-context model must rebuild it from one vector; the attention model looks back at every letter, and the matrix shows where it looked for each output letter.",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: view::view,
};

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `alignment`: both models' answers for the reader's word and the attention model's
    //! alignment matrix (output steps × input positions).

    use std::sync::Arc;

    use leptos::prelude::*;

    use super::{model_label, run, variant, Alignment};
    use crate::kit::matrix_canvas::{mat_table, Mat, MatrixGrid};
    use crate::kit::seq2seq_models::{load_models, loading_note};
    use crate::kit::DemoCtx;
    use crate::seq2seq::label;

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
}
