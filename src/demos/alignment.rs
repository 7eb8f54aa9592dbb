//! Demo `alignment` (chapter "why-attention"): the reader's word, reversed by the fixed-context
//! model and by an attention model, with the attention model's alignment matrix. The weights
//! are fetched by the page; `data` gives the input and the expected answer, and the view adds
//! both models' outputs to "Download data".

use serde::Serialize;

use super::{spec, to_json, Demo, DemoSpec};
use crate::seq2seq::{decode, encode, eval::target, Decoded, Models, Variant};

crate::options! {
    /// The attention models shipped beside the fixed-context one (the URL value is each one's
    /// tensor prefix, `Variant::key`). The `bottleneck` demo offers the same choice.
    pub enum AttentionModel {
        Bahdanau = ("bahdanau", "Bahdanau (additive, previous state)"),
        LuongDot = ("luong_dot", "Luong dot"),
        LuongGeneral = ("luong_general", "Luong general"),
        LuongConcat = ("luong_concat", "Luong concat"),
        LuongLocal = ("luong_local", "Luong local-p (window D = 4)"),
    }
}

impl AttentionModel {
    pub fn variant(self) -> Variant {
        match self {
            AttentionModel::Bahdanau => Variant::Bahdanau,
            AttentionModel::LuongDot => Variant::LuongDot,
            AttentionModel::LuongGeneral => Variant::LuongGeneral,
            AttentionModel::LuongConcat => Variant::LuongConcat,
            AttentionModel::LuongLocal => Variant::LuongLocal,
        }
    }
}

crate::params! {
    pub struct Params {
        /// the word both models reverse
        text: String = Param::text("text", "Word to reverse (letters a–z)", 30, "attention"),
        model: AttentionModel = Param::choice("model", "Attention model", AttentionModel::OPTIONS, 0),
    }
}

pub struct AlignmentDemo;

impl Demo for AlignmentDemo {
    const ID: &'static str = "alignment";
    const TITLE: &'static str = "Reverse a word, with and without attention";
    const CAPTION: &'static str = "Both models read your word letter by letter and write it backwards. The \
        fixed-context model must rebuild it from one vector; the attention model looks back at every letter, and the \
        matrix shows where it looked for each output letter.";
    type Params = Params;
    /// The models run in the view; without them, the word as read and its expected answer, or
    /// why the word cannot be read.
    type Output = Result<Task, String>;

    fn compute(p: &Params) -> Result<Task, String> {
        let src = encode(&p.text)?;
        Ok(Task {
            input: decode(&src),
            expected: decode(&target(&src)),
            model: p.model.variant(),
            note: "The models run in the browser; the page's Download data adds their outputs and the alignment.",
        })
    }

    fn data(p: &Params) -> Result<serde_json::Value, String> {
        Self::compute(p).and_then(|t| to_json(&t))
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<AlignmentDemo>();

/// The reader's word and what a perfect model writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Task {
    pub input: String,
    pub expected: String,
    pub model: Variant,
    pub note: &'static str,
}

/// Both models' answers for one input.
#[derive(Debug, Clone, PartialEq, Serialize)]
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

/// What the page calls a model: "fixed context", or its label in `AttentionModel`.
pub fn model_label(v: Variant) -> &'static str {
    match v {
        Variant::Fixed => "fixed context",
        v => AttentionModel::OPTIONS.iter().find(|o| o.0 == v.key()).map_or("attention", |o| o.1),
    }
}

/// Decodes the controls' word with both models, or says why the word cannot be read.
pub fn run(models: &Models, p: &Params) -> Result<Alignment, String> {
    let src = encode(&p.text)?;
    if src.len() - 1 > models.max_len {
        return Err(format!("the models were trained on up to {} letters", models.max_len));
    }
    Ok(Alignment {
        input: decode(&src),
        expected: decode(&target(&src)),
        fixed: models.get(Variant::Fixed).greedy(&src),
        attention: models.get(p.model.variant()).greedy(&src),
    })
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `alignment`: both models' answers for the reader's word and the attention model's
    //! alignment matrix (output steps × input positions).

    use crate::numerics::format::Signed;
    use std::sync::Arc;

    use leptos::prelude::*;

    use super::{model_label, run, Alignment, Params};
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
        let params = ctx.params::<Params>();
        let out = Memo::new(move |_| {
            models
                .with(|m| m.as_ref().map(|m| params.with(|p| run(m, p).map(Arc::new))))
                .map(|r| r.map_err(|e| e.to_string()))
        });
        Effect::new(move |_| {
            if let Some(Ok(a)) = out.get() {
                ctx.computed.set(serde_json::to_value(&*a).ok());
            }
        });
        let model_name = move || params.with(|p| model_label(p.model.variant()));
        let answers = move || {
            out.get().map(|r| match r {
                Ok(a) => {
                    let mark = |ok: bool| if ok { ("✓", "right") } else { ("✗", "wrong") };
                    let (fm, fc) = mark(a.fixed_right());
                    let (am, ac) = mark(a.attention_right());
                    let centres = (!a.attention.centres.is_empty()).then(|| {
                        let ps: Vec<String> =
                            a.attention.centres.iter().map(|p| format!("{p:.1}", p = Signed(p))).collect();
                        view! {
                            <p class="muted">
                                "Predicted window centres pᵢ (0-based input positions): " {ps.join(", ")}
                            </p>
                        }
                    });
                    view! {
                        <dl class="answers">
                            <dt>"Fixed context"</dt>
                            <dd class=format!("answer {fc}")><code>{a.fixed_text()}</code>" "{fm}</dd>
                            <dt>{model_name}</dt>
                            <dd class=format!("answer attention {ac}")><code>{a.attention_text()}</code>" "{am}</dd>
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
