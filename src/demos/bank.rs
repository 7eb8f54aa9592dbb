//! Demo `bank`: context changes a token's vector (chapter "self-attention"). Hand-set 2-D
//! embeddings (money, nature); parameter-free self-attention with sharpness β.

use ndarray::{Array1, Array2};
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::softmax::softmax;

pub const EMBEDDINGS: &[(&str, [f64; 2])] = &[
    ("the", [0.1, 0.1]),
    ("river", [0.2, 2.0]),
    ("bank", [1.0, 1.0]),
    ("was", [0.1, 0.2]),
    ("muddy", [0.1, 1.5]),
    ("loaned", [1.6, 0.1]),
    ("me", [0.2, 0.1]),
    ("money", [2.0, 0.2]),
];

pub static SENTENCES: &[(&str, &str)] =
    &[("river", "the river bank was muddy"), ("money", "the bank loaned me money"), ("alone", "the bank")];

crate::params! {
    pub struct Params {
        /// the sentence's key in `SENTENCES`
        sentence: String = Param::choice("sentence", "Sentence", SENTENCES, 0),
        beta: f64 = Param::float("beta", "Sharpness β", 0.0, 4.0, 0.05, 1.0),
    }
}

pub struct BankDemo;

impl Demo for BankDemo {
    const ID: &'static str = "bank";
    const TITLE: &'static str = "Context changes a token";
    const CAPTION: &'static str = "Tokens as points (first axis: money, second: nature). The orange arrow is “bank” \
        after attending to its sentence: the same word, a different vector in each context.";
    type Params = Params;
    type Output = Bank;

    fn compute(p: &Params) -> Bank {
        compute(&p.sentence, p.beta)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<BankDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bank {
    pub tokens: Vec<&'static str>,
    pub vectors: Vec<[f64; 2]>,
    /// bank's attention weights over the sentence, and its output Σ α_j x_j
    pub weights: Vec<f64>,
    pub output: [f64; 2],
}

pub fn embed(w: &str) -> [f64; 2] {
    EMBEDDINGS.iter().find(|(k, _)| *k == w).map_or([0.0, 0.0], |(_, v)| *v)
}

pub fn compute(sentence: &str, beta: f64) -> Bank {
    let text = SENTENCES.iter().find(|(k, _)| *k == sentence).map_or(SENTENCES[0].1, |(_, t)| t);
    let tokens: Vec<&'static str> = text.split(' ').collect();
    let x = Array2::from_shape_fn((tokens.len(), 2), |(i, j)| embed(tokens[i])[j]); // (n, 2)
    let bank = Array1::from(embed("bank").to_vec()); // (2,)
    let scores = x.dot(&bank) * beta; // (n, 2) x (2,) -> (n,)
    let w = softmax(scores.view());
    let out = w.dot(&x); // (n,) x (n, 2) -> (2,)
    Bank { vectors: tokens.iter().map(|t| embed(t)).collect(), tokens, weights: w.to_vec(), output: [out[0], out[1]] }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `bank`: the tokens in the (money, nature) plane and where "bank" goes.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;

    use super::{Bank, BankDemo};
    use crate::kit::plot::{area, batch_dots, err, fit_canvas, style_mesh};
    use crate::kit::theme::Palette;
    use crate::kit::DemoCtx;

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<BankDemo>(ctx);
        let canvas = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| canvas.get().map(|c| out.with(|o| draw(&c, pal, o))));
        let label = "The sentence's tokens in the plane and the vector of bank before and after attention";
        let readout = move || {
            out.with(|o| {
                let (x, y) = (o.output[0], o.output[1]);
                let way = if y > x + 1e-9 {
                    "toward nature"
                } else if x > y + 1e-9 {
                    "toward money"
                } else {
                    "on the diagonal"
                };
                format!("“bank” goes from (1.00, 1.00) to ({x:.2}, {y:.2}): {way}.", x = Signed(x), y = Signed(y))
            })
        };
        let numbers = move || {
            out.with(|o| {
                crate::kit::number_table(
                    "bank's attention weights".into(),
                    vec!["token".into(), "vector".into(), "weight".into()],
                    (0..o.tokens.len())
                        .map(|i| {
                            let v = o.vectors[i];
                            vec![
                                o.tokens[i].to_string(),
                                format!("({}, {})", v[0], v[1]),
                                format!("{:.4}", Signed(o.weights[i])),
                            ]
                        })
                        .collect(),
                )
            })
        };
        view! {
            <canvas node_ref=canvas class="plot" role="img" aria-label=label></canvas>
            <p class="readout">{readout}</p>
            {move || ctx.show_numbers.get().then(numbers)}
        }
        .into_any()
    }

    fn draw(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &Bank) -> Result<(), String> {
        let f = fit_canvas(canvas, 0.7, 240.0, 380.0);
        let root = area(canvas, pal)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(f.px(10.0))
            .x_label_area_size(f.px(36.0))
            .y_label_area_size(f.px(40.0))
            .build_cartesian_2d(-0.1f64..2.3f64, -0.1f64..2.3f64)
            .map_err(err)?;
        style_mesh(&mut chart, &f, pal, "money", "nature").x_labels(6).y_labels(6).draw().map_err(err)?;
        let arrow = |to: [f64; 2], colour: RGBColor, w: f64| {
            PathElement::new(vec![(0.0, 0.0), (to[0], to[1])], colour.stroke_width(f.px(w)))
        };
        chart.draw_series([arrow([1.0, 1.0], pal.muted, 2.0), arrow(o.output, pal.orange, 3.0)]).map_err(err)?;
        let pts: Vec<_> = o
            .vectors
            .iter()
            .map(|v| {
                let (x, y) = chart.backend_coord(&(v[0], v[1]));
                (x, y, 4.5 * f.scale)
            })
            .collect();
        batch_dots(canvas, &pts, pal.blue.to_rgba())?;
        let (ox, oy) = chart.backend_coord(&(o.output[0], o.output[1]));
        batch_dots(canvas, &[(ox, oy, 5.5 * f.scale)], pal.orange.to_rgba())?;
        let font = f.font(12.0, pal.fg);
        let mut seen = Vec::new();
        for (t, v) in o.tokens.iter().zip(&o.vectors) {
            if !seen.contains(t) {
                seen.push(*t);
                chart
                    .draw_series(std::iter::once(Text::new(t.to_string(), (v[0] + 0.05, v[1] + 0.05), font.clone())))
                    .map_err(err)?;
            }
        }
        chart
            .draw_series(std::iter::once(Text::new(
                "bank, in context".to_string(),
                (o.output[0] + 0.05, o.output[1] - 0.12),
                f.font(12.0, pal.orange),
            )))
            .map_err(err)?;
        root.present().map_err(err)
    }
}
