//! Demo `collapse`: stacked attention alone makes the tokens identical; residuals, the FFN and
//! layer norm stop it (chapter "transformer-block").

use ndarray::Array2;
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::block::{random_layers, run_layers, BlockParts, LayerWeights};
use crate::numerics::rng::normal_matrix;

pub const D: usize = 16;

crate::params! {
    pub struct Params {
        layers: usize = Param::int("layers", "Layers L", 1, 48, 12),
        n: usize = Param::int("n", "Tokens n", 2, 16, 8),
        residual: bool = Param::boolean("residual", "Residual connections", false),
        ffn: bool = Param::boolean("ffn", "Feed-forward network", false),
        ln: bool = Param::boolean("ln", "Layer norm (pre-norm)", false),
        seed: u32 = Param::seed("seed", "Random weights", 1),
    }
}

impl Params {
    /// The parts of the block the toggles switch on.
    pub fn parts(&self) -> BlockParts {
        BlockParts { residual: self.residual, ffn: self.ffn, layer_norm: self.ln }
    }
}

pub struct CollapseDemo;

impl Demo for CollapseDemo {
    const ID: &'static str = "collapse";
    const TITLE: &'static str = "Why a block needs more than attention";
    const CAPTION: &'static str =
        "The spread ‖X − 1x̄ᵀ‖/‖X‖ of the token vectors after each of L layers with random weights: 0 means \
        every token has become the same vector. Grey: attention alone. Blue: your block.";
    type Params = Params;
    const MAIN: &'static [&'static str] = &["layers", "residual", "ffn", "ln"];
    type Output = Collapse;

    fn compute(p: &Params) -> Collapse {
        compute(p.layers.max(1), p.n.max(2), p.parts(), p.seed)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<CollapseDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Collapse {
    /// spread after each layer (index 0: the input), attention only and with the chosen parts
    pub attention_only: Vec<f64>,
    pub block: Vec<f64>,
    /// cosine similarity of the token rows after the last layer of the chosen block
    pub cosine: Vec<Vec<f64>>,
}

fn cosines(x: &Array2<f64>) -> Vec<Vec<f64>> {
    let norms: Vec<f64> = x.rows().into_iter().map(|r| r.dot(&r).sqrt().max(1e-300)).collect();
    let g = x.dot(&x.t()); // (n, d) x (d, n) -> (n, n)
    (0..x.nrows()).map(|i| (0..x.nrows()).map(|j| g[[i, j]] / (norms[i] * norms[j])).collect()).collect()
}

/// The demo with weights drawn once per (seed, L) by the caller (`random_layers`): moving
/// n or a toggle then reuses them instead of drawing ~2,800 normals per layer again.
pub fn compute_with(weights: &[LayerWeights], n: usize, parts: BlockParts, seed: u32) -> Collapse {
    let none = BlockParts { residual: false, ffn: false, layer_norm: false };
    let x0 = normal_matrix(n, D, seed as u64, 1.0); // (n, d)
    let (block, last) = run_layers(&x0, weights, parts);
    Collapse { attention_only: run_layers(&x0, weights, none).0, block, cosine: cosines(&last) }
}

pub fn compute(layers: usize, n: usize, parts: BlockParts, seed: u32) -> Collapse {
    compute_with(&random_layers(D, layers, seed as u64), n, parts, seed)
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `collapse`: the tokens' spread against depth, and their final cosine similarities.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;

    use super::{compute_with, Collapse, Params, D};
    use crate::kit::matrix_canvas::{Mat, MatrixGrid};
    use crate::kit::plot::{area, err, fit_canvas, legend_band, style_mesh, Mark};
    use crate::kit::theme::Palette;
    use crate::kit::DemoCtx;
    use crate::numerics::block::random_layers;

    pub fn view(ctx: DemoCtx) -> AnyView {
        // The random weights depend on (seed, L) only: drawn once, reused while n or a toggle moves.
        let params = ctx.params::<Params>();
        let key = Memo::new(move |_| params.with(|p| (p.seed, p.layers.max(1))));
        let weights = Memo::new(move |_| {
            let (seed, layers) = key.get();
            random_layers(D, layers, seed as u64)
        });
        let out = Memo::new(move |_| {
            let (seed, _) = key.get();
            weights.with(|w| params.with(|p| compute_with(w, p.n.max(2), p.parts(), seed)))
        });
        let canvas = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| canvas.get().map(|c| out.with(|o| draw(&c, pal, o))));
        let cos = Signal::derive(move || {
            out.with(|o| {
                let toks: Vec<String> = (0..o.cosine.len()).map(|i| format!("t{i}")).collect();
                vec![Mat::new("cosine similarity of the tokens after the last layer", o.cosine.clone(), false)
                    .labels(&toks, &toks)]
            })
        });
        let label = "Line chart of the tokens' spread against the number of layers";
        let readout = move || {
            out.with(|o| {
                let num = crate::numerics::format::num;
                format!(
                    "After {} layers: spread {} with your block, {} with attention alone.",
                    o.block.len() - 1,
                    num(o.block[o.block.len() - 1]),
                    num(o.attention_only[o.attention_only.len() - 1])
                )
            })
        };
        let numbers = move || {
            out.with(|o| {
                crate::kit::number_table(
                    "Spread per layer".into(),
                    vec!["layer".into(), "attention only".into(), "your block".into()],
                    (0..o.block.len())
                        .map(|l| {
                            vec![
                                l.to_string(),
                                format!("{:.4}", Signed(o.attention_only[l])),
                                format!("{:.4}", Signed(o.block[l])),
                            ]
                        })
                        .collect(),
                )
            })
        };
        view! {
            <canvas node_ref=canvas class="plot" role="img" aria-label=label></canvas>
            <p class="readout">{readout}</p>
            <MatrixGrid ctx=ctx mats=cos/>
            {move || ctx.show_numbers.get().then(numbers)}
        }
        .into_any()
    }

    fn draw(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &Collapse) -> Result<(), String> {
        let f = fit_canvas(canvas, 0.45, 220.0, 340.0);
        let root = area(canvas, pal)?;
        let plot = legend_band(
            &root,
            &f,
            pal,
            &[(Mark::Line, pal.muted, "attention only"), (Mark::Line, pal.blue, "your block")],
        )?;
        let layers = (o.block.len() - 1).max(1) as f64;
        let top = o.block.iter().chain(&o.attention_only).copied().fold(1.0, f64::max) * 1.05;
        let mut chart = ChartBuilder::on(&plot)
            .margin(f.px(10.0))
            .x_label_area_size(f.px(36.0))
            .y_label_area_size(f.px(44.0))
            .build_cartesian_2d(0f64..layers, 0f64..top)
            .map_err(err)?;
        style_mesh(&mut chart, &f, pal, "layer", "spread ‖X − 1x̄ᵀ‖ / ‖X‖").draw().map_err(err)?;
        for (series, colour) in [(&o.attention_only, pal.muted), (&o.block, pal.blue)] {
            chart
                .draw_series(LineSeries::new(
                    series.iter().enumerate().map(|(l, &v)| (l as f64, v)),
                    colour.stroke_width(f.px(2.5)),
                ))
                .map_err(err)?;
        }
        root.present().map_err(err)
    }
}
