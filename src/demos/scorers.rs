//! Demo `scorers`: one query, the same keys, four scoring functions (chapter "scoring").

use ndarray::{Array1, Array2};
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::attention::{additive_score, general_score};
use crate::numerics::rng::normal_matrix;
use crate::numerics::softmax::softmax;

crate::params! {
    pub struct Params {
        /// the number of keys
        n: usize = Param::int("n", "Keys n", 2, 8, 5),
        /// the size of the query and of each key
        d: usize = Param::int("d", "Query and key size d", 2, 8, 4),
        /// the hidden size of the additive scorer
        h: usize = Param::int("h", "Additive hidden size h", 1, 16, 8),
        /// draws the query and the keys
        seed: u32 = Param::seed("seed", "Query and keys", 1),
        /// draws the scorers' weights
        wseed: u32 = Param::seed("wseed", "Scorer parameters", 2),
    }
}

pub struct ScorersDemo;

impl Demo for ScorersDemo {
    const ID: &'static str = "scorers";
    const TITLE: &'static str = "Four ways to score a key";
    const CAPTION: &'static str = "The same query and keys scored four ways; each set of scores goes through its own \
        softmax. Redraw the data or the scorers' parameters and compare.";
    type Params = Params;
    type Output = Scorers;

    fn compute(p: &Params) -> Scorers {
        compute(p.n.max(1), p.d.max(1), p.h.max(1), p.seed, p.wseed)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<ScorersDemo>();

pub const SCORERS: [&str; 4] = ["dot qᵀk", "scaled dot qᵀk/√d", "general qᵀWk", "additive wᵥᵀtanh(W_q q + W_k k)"];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scorers {
    pub names: Vec<&'static str>,
    /// scores[s][i]: scorer s, key i
    pub scores: Vec<Vec<f64>>,
    pub weights: Vec<Vec<f64>>,
    pub q: Vec<f64>,
    pub keys: Vec<Vec<f64>>,
}

pub fn compute(n: usize, d: usize, h: usize, seed: u32, wseed: u32) -> Scorers {
    let q: Array1<f64> = normal_matrix(1, d, seed as u64, 1.0).row(0).to_owned();
    let k: Array2<f64> = normal_matrix(n, d, seed as u64 ^ 0x5151, 1.0); // (n, d)
    let w = normal_matrix(d, d, wseed as u64, 1.0 / (d as f64).sqrt()); // (d, d)
    let w_q = normal_matrix(h, d, wseed as u64 ^ 1, 1.0 / (d as f64).sqrt()); // (h, d)
    let w_k = normal_matrix(h, d, wseed as u64 ^ 2, 1.0 / (d as f64).sqrt()); // (h, d)
    let w_v = normal_matrix(1, h, wseed as u64 ^ 3, 1.0).row(0).to_owned(); // (h,)
    let dot: Array1<f64> = k.dot(&q); // (n, d) x (d,) -> (n,)
    let rows: Vec<Array1<f64>> = k.rows().into_iter().map(|r| r.to_owned()).collect();
    let scores = [
        dot.clone(),
        &dot / (d as f64).sqrt(),
        rows.iter().map(|ki| general_score(&q, ki, &w)).collect(),
        rows.iter().map(|ki| additive_score(&q, ki, &w_q, &w_k, &w_v)).collect(),
    ];
    Scorers {
        names: SCORERS.to_vec(),
        weights: scores.iter().map(|s| softmax(s.view()).to_vec()).collect(),
        scores: scores.iter().map(|s| s.to_vec()).collect(),
        q: q.to_vec(),
        keys: rows.iter().map(|r| r.to_vec()).collect(),
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `scorers`: the weights of four scoring functions side by side.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;

    use super::ScorersDemo;
    use crate::kit::plot::bars::{draw_bars, Bars};
    use crate::kit::DemoCtx;

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<ScorersDemo>(ctx);
        let canvas = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| {
            let c = canvas.get()?;
            let pal = *pal;
            Some(out.with(|o| {
                let cats: Vec<String> = (0..o.keys.len()).map(|i| format!("k{i}")).collect();
                let colours = [pal.orange, pal.blue, pal.green, pal.muted];
                let series: Vec<(&str, plotters::style::RGBColor, &[f64])> = (0..4)
                    .map(|s| (["dot", "scaled dot", "general", "additive"][s], colours[s], o.weights[s].as_slice()))
                    .collect();
                draw_bars(
                    &c,
                    &pal,
                    &Bars { categories: &cats, series: &series, x_desc: "key", y_desc: "weight", y_max: Some(1.0) },
                )
            }))
        });
        view! {
            <canvas node_ref=canvas class="plot" role="img"
                aria-label="Grouped bar chart: each key's weight under the four scoring functions"></canvas>
            {move || ctx.show_numbers.get().then(|| out.with(|o| crate::kit::number_table(
                "Scores (before the softmax)".into(),
                std::iter::once("key".to_string()).chain(o.names.iter().map(|n| n.to_string())).collect(),
                (0..o.keys.len())
                    .map(|i| {
                        std::iter::once(format!("k{i}"))
                            .chain((0..4).map(|s| format!("{:.4}", Signed(o.scores[s][i]))))
                            .collect()
                    })
                    .collect(),
            )))}
        }
        .into_any()
    }
}
