//! View of `rnn-problems`: sequential steps per position (recurrent vs self-attention) and the
//! fixed-context encoder's sensitivity to each input letter.

use std::sync::Arc;

use leptos::html::Canvas;
use leptos::prelude::*;

use crate::demos::rnn_problems::{run, Problems};
use crate::ui::demo_frame::DemoCtx;
use crate::ui::plot::bars::{draw_bars, Bars};
use crate::ui::seq2seq_models::{load_models, loading_note};

pub fn view(ctx: DemoCtx) -> AnyView {
    let models = load_models(ctx);
    let out = Memo::new(move |_| models.with(|m| m.as_ref().map(|m| ctx.values.with(|v| run(m, v).map(Arc::new)))));
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
            let (first, last) = (p.sensitivity.first().copied().unwrap_or(0.0), p.sensitivity.last().copied().unwrap_or(0.0));
            format!(
                "{n} letters: the last state waits on {n} steps in a row. Changing the first letter moves it by {first:.2}, the last letter by {last:.2}: {:.0}× less for the letter the decoder must write last.",
                if first > 0.0 { last / first } else { f64::INFINITY }
            )
        })
    };
    view! {
        {loading_note(models)}
        {move || out.get().and_then(Result::err).map(|e| view! { <p class="notice" role="alert">{e}</p> })}
        <p class="readout rnn-readout" role="status">{readout}</p>
        <div class="two-col">
            <canvas node_ref=steps_canvas class="plot" role="img" aria-label="Sequential steps before each position's state exists"></canvas>
            <canvas node_ref=sens_canvas class="plot" role="img" aria-label="How far the encoder's final state moves when each letter is changed"></canvas>
        </div>
    }
    .into_any()
}
