//! Demo `instruction-reach` (chapter "efficient", "Attention in today's models"): how much
//! attention the last turn of a prompt pays to an instruction at its start, as more turns come
//! between them. A bundled model in a Web Worker analyses the prompt with 0, 1, … turns in between
//! (`Request::Analyze`); `reach` (DOM-free, tested natively on the same models) sums each head's
//! attention from the last turn's tokens to the instruction's.

use std::ops::Range;

use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::session::protocol::{Analysis, Attention, Query};

crate::options! {
    /// The bundled models (the URL value is the model's folder under `/models/`), and SmolLM2-135M from
    /// this browser's cache.
    pub enum Model {
        StoriesLlama = ("stories-llama", "Pet stories, Llama family"),
        Stories = ("stories", "Pet stories, GPT-2"),
        Smollm2 = ("smollm2", "SmolLM2-135M, Llama family (once loaded in “A real model, live”)"),
    }
}

/// The instruction at the start, the turns that can come between, and the last turn. The
/// bundled models were trained on short pet stories, so each turn is a sentence of that kind.
pub const INSTRUCTION: &str = "Every story is about a cat called Tom.";
pub const TURNS: [&str; 8] = [
    " The dog runs in the park.",
    " A bird sings in the morning.",
    " The pig eats apples in the barn.",
    " A fox sneaks through the woods.",
    " The duck swims in the pond.",
    " A horse pulls the cart.",
    " The mouse hides in a hole.",
    " A goat climbs the rocks.",
];
pub const LAST: &str = " Now the cat sleeps in the sun.";

crate::params! {
    pub struct Params {
        model: Model = Param::choice("model", "Model", Model::OPTIONS, 0),
        /// the most turns put between the instruction and the last turn (the plot runs 0 to this)
        turns: usize = Param::int("turns", "Turns in between (at most)", 1, 8, 8),
    }
}

pub struct InstructionReachDemo;

impl Demo for InstructionReachDemo {
    const ID: &'static str = "instruction-reach";
    const TITLE: &'static str = "Does the last turn still look at the instruction?";
    const CAPTION: &'static str = "An instruction opens the prompt, then come from none up to the chosen number of \
        other turns, then the last turn. \
        For each layer, the share of the last turn's attention that its most attentive head puts on the \
        instruction, beside the share that attention spread evenly over the text would give.";
    type Params = Params;
    /// The shares come from the model in the worker: without it, the prompts the view sends.
    type Output = Inputs;
    /// No "Show numbers": its shares are printed in the readout under the plot.
    const NUMBERS: bool = false;

    fn compute(p: &Params) -> Inputs {
        Inputs {
            model: p.model.key(),
            prompts: (0..=p.turns.min(TURNS.len())).map(|k| prompt(k).text).collect(),
            note: "The attention is computed by the model in the browser; the page's Download data adds the shares.",
        }
    }

    /// The page asks the worker's session for each prompt's attention; here the same session runs
    /// on the model files, and the same `reach` follows.
    // Natively only: the page fetches and asks the worker; the engine stays out of the page.
    #[cfg(not(target_arch = "wasm32"))]
    fn load(p: &Params, read: &mut super::Reader) -> Option<Result<serde_json::Value, String>> {
        if p.model == Model::Smollm2 {
            return None; // read from the browser's cache only
        }
        let mut run = || {
            let session = super::bundled_session(p.model.key(), read)?;
            let mut out = Vec::new();
            for k in 0..=p.turns.min(TURNS.len()) {
                let (a, w) = super::now(session.analyze(&query(k)))?.map_err(|e| e.to_string())?;
                out.push(reach(&prompt(k), &a, &w)?);
            }
            Ok(serde_json::json!({ "reaches": super::to_json(&out)? }))
        };
        Some(run())
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<InstructionReachDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inputs {
    pub model: &'static str,
    pub prompts: Vec<String>,
    pub note: &'static str,
}

/// A prompt and where its instruction and last turn are, in characters.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub turns: usize,
    pub text: String,
    pub instruction: Range<usize>,
    pub last: Range<usize>,
}

/// The instruction, the first `turns` turns, the last turn.
pub fn prompt(turns: usize) -> Prompt {
    let mut text = INSTRUCTION.to_string();
    let instruction = 0..text.chars().count();
    for t in TURNS.iter().take(turns) {
        text.push_str(t);
    }
    let start = text.chars().count();
    text.push_str(LAST);
    Prompt { turns: turns.min(TURNS.len()), last: start..text.chars().count(), text, instruction }
}

/// What the page asks about the prompt with `turns` turns in between: every layer's attention.
pub fn query(turns: usize) -> Query {
    Query { prompt: prompt(turns).text, top: 1, top_p: 1.0, ..Default::default() }
}

/// How much of the last turn's attention lands on the instruction, in one prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reach {
    pub turns: usize,
    pub tokens: usize,
    pub instruction_tokens: usize,
    pub last_tokens: usize,
    /// (layer, head): the attention weight on the instruction's tokens, summed over them and
    /// averaged over the last turn's tokens as queries.
    pub share: Vec<Vec<f64>>,
    /// The same for attention spread evenly over every token so far (a query at position i
    /// gives each of the i + 1 tokens 1/(i + 1)).
    pub even: f64,
}

impl Reach {
    /// Per layer, the most attentive head's share and the mean over heads.
    pub fn by_layer(&self) -> Vec<(f64, f64)> {
        let mean = |r: &Vec<f64>| r.iter().sum::<f64>() / r.len().max(1) as f64;
        self.share.iter().map(|r| (r.iter().copied().fold(0.0, f64::max), mean(r))).collect()
    }
}

/// Which tokens belong to the instruction and which to the last turn: a token is in a part
/// when its first character is. The tokens must spell the prompt (no token added or cut).
pub fn token_ranges(p: &Prompt, tokens: &[String]) -> Result<(Range<usize>, Range<usize>), String> {
    if tokens.concat() != p.text {
        return Err("the model's tokens do not spell the prompt (did it add a token, or cut the prompt?)".into());
    }
    let mut starts = Vec::with_capacity(tokens.len());
    let mut at = 0;
    for t in tokens {
        starts.push(at);
        at += t.chars().count();
    }
    let within = |r: &Range<usize>| {
        let first = starts.iter().position(|s| r.contains(s)).unwrap_or(0);
        let end = starts.iter().rposition(|s| r.contains(s)).map_or(first, |i| i + 1);
        first..end
    };
    Ok((within(&p.instruction), within(&p.last)))
}

/// The shares of one analysed prompt (every layer's weights must be in `w`).
pub fn reach(p: &Prompt, a: &Analysis, w: &Attention) -> Result<Reach, String> {
    let texts: Vec<String> = a.tokens.iter().map(|t| t.text.clone()).collect();
    let (instr, last) = token_ranges(p, &texts)?;
    if last.is_empty() || instr.is_empty() {
        return Err("the prompt has no instruction or no last turn".into());
    }
    let share = (0..a.n_layer)
        .map(|l| {
            (0..a.n_head)
                .map(|h| {
                    let m = w.full(l, h).ok_or("the worker sent only some layers' weights")?;
                    let on_instr = last.clone().map(|i| instr.clone().map(|j| m[[i, j]] as f64).sum::<f64>());
                    Ok(on_instr.sum::<f64>() / last.len() as f64)
                })
                .collect::<Result<Vec<f64>, String>>()
        })
        .collect::<Result<Vec<_>, String>>()?;
    let even = last.clone().map(|i| instr.len() as f64 / (i + 1) as f64).sum::<f64>() / last.len() as f64;
    Ok(Reach {
        turns: p.turns,
        tokens: texts.len(),
        instruction_tokens: instr.len(),
        last_tokens: last.len(),
        share,
        even,
    })
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `instruction-reach`: a compute worker loads the bundled model and analyses the
    //! prompt with 0 to `turns` turns in between; the page draws each layer's share against the
    //! number of turns, beside the even share.

    use leptos::html::Canvas;
    use leptos::prelude::*;

    use super::{prompt, query, reach, Params, Reach};
    use crate::session::protocol::Request;
    use crate::kit::plot::lines::{draw_lines, Curve, Lines};
    use crate::kit::probe::probe;
    use crate::kit::worker::Event;
    use crate::kit::DemoCtx;
    use crate::numerics::format::num_sig;

    fn pct(x: f64) -> String {
        format!("{}%", num_sig(100.0 * x, 2))
    }

    /// The readout at the most turns: the most attentive head, the mean, the even share.
    fn status_text(r: &[Reach]) -> String {
        let (Some(first), Some(last)) = (r.first(), r.last()) else { return String::new() };
        let best = |x: &Reach| {
            let mut b = (0, 0, 0.0);
            for (l, row) in x.share.iter().enumerate() {
                for (h, &s) in row.iter().enumerate() {
                    if s > b.2 {
                        b = (l, h, s);
                    }
                }
            }
            b
        };
        let (l, h, s) = best(last);
        let (_, _, s0) = best(first);
        format!(
            "With no turn in between, the most attentive head gives the instruction {} of the last turn's attention. \
             With {} ({} tokens) in between: {} (layer {l} head {h}), against {} if attention were spread \
             evenly over the text.",
            pct(s0),
            if last.turns == 1 { "1 turn".to_string() } else { format!("{} turns", last.turns) },
            last.tokens - last.instruction_tokens - last.last_tokens,
            pct(s),
            pct(last.even),
        )
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let params = ctx.params::<Params>();
        let ask = move || {
            let (model, turns) = params.with(|p| (p.model, p.turns.min(super::TURNS.len())));
            let requests = (0..=turns).map(|k| Request::Analyze(query(k))).collect();
            crate::demos::ask_model(model.key(), model.label(), requests)
        };
        let probe = probe(ctx, ask, move |ev| match ev {
            Event::Analysis(a, w) => {
                // The prompt is known by its text: the analysis names its tokens.
                let text: String = a.tokens.iter().map(|t| t.text.as_str()).collect();
                let Some(k) = (0..=super::TURNS.len()).find(|&k| prompt(k).text == text) else {
                    let why = format!("the model read {} tokens that are not one of the prompts asked", a.tokens.len());
                    return Some((a.id, Err(why)));
                };
                Some((a.id, reach(&prompt(k), &a, &w)))
            }
            _ => None,
        });
        let reaches = Memo::new(move |_| {
            probe.answers.with(|a| a.as_ref().map(|v| v.iter().cloned().collect::<Result<Vec<Reach>, String>>()))
        });
        Effect::new(move |_| match reaches.get() {
            Some(Ok(r)) => ctx.computed.set(serde_json::to_value(&r).ok()),
            Some(Err(e)) => ctx.error.set(Some(e)),
            None => {}
        });

        let canvas = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| {
            let c = canvas.get()?;
            let pal = *pal;
            reaches.with(|r| {
                let r = r.as_ref()?.as_ref().ok()?;
                let layers = r.first()?.share.len();
                let colours = [pal.blue, pal.orange, pal.green, pal.points];
                let labels: Vec<String> = (0..layers).map(|l| format!("layer {l}")).collect();
                let mut curves: Vec<Curve> = (0..layers)
                    .map(|l| Curve {
                        label: &labels[l],
                        colour: colours[l % colours.len()],
                        points: r.iter().map(|x| (x.turns as f64, x.by_layer()[l].0)).collect(),
                        dashed: false,
                    })
                    .collect();
                curves.push(Curve {
                    label: "spread evenly",
                    colour: pal.muted,
                    points: r.iter().map(|x| (x.turns as f64, x.even)).collect(),
                    dashed: true,
                });
                let spec = Lines {
                    curves: &curves,
                    x_desc: "turns in between",
                    y_desc: "top head's share on the instruction",
                    y_range: Some((0.0, 1.0)),
                    x_integer: true,
                };
                Some(draw_lines(&c, &pal, &spec))
            })
        });
        let status = move || {
            if let Some(wait) = probe.waiting(ctx, params.with(|p| p.model.key())) {
                return wait;
            }
            reaches.with(|r| match r {
                Some(Ok(r)) => status_text(r),
                _ => String::new(),
            })
        };
        view! {
            <p class="readout reach-status" role="status">{status}</p>
            // No answer (another model is loading, or is not stored): no plot of the last one.
            <canvas node_ref=canvas class="plot" role="img" hidden=move || reaches.with(|r| !matches!(r, Some(Ok(_))))
                aria-label="Each layer's share of the last turn's attention on the instruction, against the turns \
                    in between"></canvas>
        }
        .into_any()
    }
}
