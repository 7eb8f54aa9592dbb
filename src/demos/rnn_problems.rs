//! Demo `rnn-problems` (chapter "why-attention"): a recurrent network's two problems, one
//! picture each: the sequential steps before each state exists, and how little an early letter
//! still moves the encoder's last state (measured on the trained fixed-context model).

use serde::Serialize;

use super::{spec, to_json, Demo, DemoSpec};
use crate::seq2seq::{decode, encode, eval::sensitivity, Models, Variant};

crate::params! {
    pub struct Params {
        /// the string the encoder reads
        text: String = Param::text("text", "Input (letters a–z)", 30, "thequickbrownfoxjumpsoverthel"),
    }
}

pub struct RnnProblemsDemo;

impl Demo for RnnProblemsDemo {
    const ID: &'static str = "rnn-problems";
    const TITLE: &'static str = "Two problems of a recurrent encoder";
    const CAPTION: &'static str = "The first plot: how many steps must run one after another before each position's \
        state exists. The second: how far the encoder's final state moves when one letter is changed, averaged over \
        the other 25 letters, for the trained fixed-context model: the early letters barely register.";
    type Params = Params;
    /// The steps, which need no model (the view adds the sensitivity), or why the input cannot
    /// be read.
    type Output = Result<Steps, String>;

    fn compute(p: &Params) -> Result<Steps, String> {
        let src = encode(&p.text)?;
        let (rnn_steps, attention_steps) = sequential_steps(src.len() - 1);
        Ok(Steps {
            input: decode(&src),
            rnn_steps,
            attention_steps,
            note: "The sensitivity is computed in the browser from the shipped weights; the page's Download data \
                   adds it.",
        })
    }

    fn data(p: &Params) -> Result<serde_json::Value, String> {
        Self::compute(p).and_then(|s| to_json(&s))
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<RnnProblemsDemo>();

/// The sequential steps per position, for the input as read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Steps {
    pub input: String,
    pub rnn_steps: Vec<usize>,
    pub attention_steps: Vec<usize>,
    pub note: &'static str,
}

/// Steps that must run one after another before position j (1-based) has its state: j for a
/// recurrent network (h_j needs h_{j−1}), 1 for self-attention (every position at once).
pub fn sequential_steps(len: usize) -> (Vec<usize>, Vec<usize>) {
    ((1..=len).collect(), vec![1; len])
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problems {
    pub letters: Vec<String>,
    pub rnn_steps: Vec<usize>,
    pub attention_steps: Vec<usize>,
    /// Mean ‖Δh_S‖ when each letter is replaced (`seq2seq::eval::sensitivity`).
    pub sensitivity: Vec<f64>,
}

pub fn run(models: &Models, p: &Params) -> Result<Problems, String> {
    let src = encode(&p.text)?;
    let word = decode(&src);
    let (rnn_steps, attention_steps) = sequential_steps(word.len());
    Ok(Problems {
        letters: word.chars().map(String::from).collect(),
        rnn_steps,
        attention_steps,
        sensitivity: sensitivity(models.get(Variant::Fixed), &src),
    })
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `rnn-problems`: sequential steps per position (recurrent vs self-attention) and the
    //! fixed-context encoder's sensitivity to each input letter.

    use crate::numerics::format::Signed;
    use std::sync::Arc;

    use leptos::html::Canvas;
    use leptos::prelude::*;

    use super::{run, Params, Problems};
    use crate::kit::plot::bars::{draw_bars, Bars};
    use crate::kit::seq2seq_models::{load_models, loading_note};
    use crate::kit::DemoCtx;

    /// Both plots' bars, a row per letter.
    fn numbers(p: &Problems) -> impl IntoView {
        crate::kit::number_table(
            "Per input letter: sequential steps, and the change of the final state".into(),
            ["letter", "recurrent steps", "self-attention steps", "‖Δh_S‖"].map(String::from).to_vec(),
            (0..p.letters.len())
                .map(|i| {
                    vec![
                        p.letters[i].clone(),
                        p.rnn_steps[i].to_string(),
                        p.attention_steps[i].to_string(),
                        format!("{:.4}", Signed(p.sensitivity[i])),
                    ]
                })
                .collect(),
        )
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let models = load_models(ctx);
        let params = ctx.params::<Params>();
        let out = Memo::new(move |_| models.with(|m| m.as_ref().map(|m| params.with(|p| run(m, p).map(Arc::new)))));
        Effect::new(move |_| {
            if let Some(Ok(p)) = out.get() {
                ctx.computed.set(serde_json::to_value(&*p).ok());
            }
        });
        let (steps_canvas, sens_canvas) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
        let ok = move || out.get().and_then(Result::ok);
        ctx.paint(move |pal| {
            let (c, p) = (steps_canvas.get()?, ok()?);
            let rnn: Vec<f64> = p.rnn_steps.iter().map(|&x| x as f64).collect();
            let attn: Vec<f64> = p.attention_steps.iter().map(|&x| x as f64).collect();
            Some(draw_bars(
                &c,
                pal,
                &Bars {
                    categories: &p.letters,
                    series: &[
                        ("recurrent: hⱼ needs hⱼ₋₁", pal.orange, &rnn),
                        ("self-attention: all at once", pal.blue, &attn),
                    ],
                    x_desc: "input letter",
                    y_desc: "sequential steps",
                    y_max: None,
                },
            ))
        });
        ctx.paint(move |pal| {
            let (c, p): (_, Arc<Problems>) = (sens_canvas.get()?, ok()?);
            Some(draw_bars(
                &c,
                pal,
                &Bars {
                    categories: &p.letters,
                    series: &[("‖Δh_S‖", pal.orange, &p.sensitivity)],
                    x_desc: "letter changed",
                    y_desc: "change of the final state",
                    y_max: None,
                },
            ))
        });
        let readout = move || {
            ok().map(|p| {
                let n = p.sensitivity.len();
                let first = p.sensitivity.first().copied().unwrap_or(0.0);
                let last = p.sensitivity.last().copied().unwrap_or(0.0);
                format!(
                    "{n} letters: the last state waits on {n} steps in a row. Changing the first letter moves it by \
                     {first:.2}, the last letter by {last:.2}: {:.0}× less for the letter the decoder must write last.",
                    Signed(if first > 0.0 { last / first } else { f64::INFINITY }),
                    first = Signed(first),
                    last = Signed(last)
                )
            })
        };
        view! {
            {loading_note(models)}
            {move || out.get().and_then(Result::err).map(|e| view! { <p class="notice" role="alert">{e}</p> })}
            <p class="readout rnn-readout" role="status">{readout}</p>
            <div class="two-col">
                <canvas node_ref=steps_canvas class="plot" role="img"
                    aria-label="Sequential steps before each position's state exists"></canvas>
                <canvas node_ref=sens_canvas class="plot" role="img"
                    aria-label="How far the encoder's final state moves when each letter is changed"></canvas>
            </div>
            {move || ctx.show_numbers.get().then(|| ok().map(|p| numbers(&p)))}
        }
        .into_any()
    }
}
