//! Demo `causal`: the look-ahead mask of a decoder (chapter "masking").

use ndarray::Array2;
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::attention::{attention, causal_mask, MaskFill};
use crate::numerics::rng::{normal_matrix, word_seed};

pub const WORDS: [&str; 8] = ["the", "cat", "sat", "on", "the", "mat", "and", "purred"];
pub const D: usize = 8;

crate::params! {
    pub struct Params {
        /// hide every key after the query's own position
        causal: bool = Param::boolean("causal", "Causal mask", true),
        /// how many of `WORDS` form the sequence
        n: usize = Param::int("n", "Tokens", 2, 8, 6),
    }
}

pub struct CausalDemo;

impl Demo for CausalDemo {
    const ID: &'static str = "causal";
    const TITLE: &'static str = "The causal mask";
    const CAPTION: &'static str = "Rows are queries, columns keys. With the causal mask each token attends only to \
        itself and earlier tokens: everything above the diagonal is −∞ before the softmax and exactly 0 after it.";
    type Params = Params;
    type Output = Causal;

    fn compute(p: &Params) -> Causal {
        compute(p.n.max(1), p.causal)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<CausalDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Causal {
    pub tokens: Vec<&'static str>,
    pub masked: Vec<Vec<f64>>,
    pub weights: Vec<Vec<f64>>,
}

pub fn compute(n: usize, causal: bool) -> Causal {
    let tokens: Vec<&'static str> = WORDS[..n.min(WORDS.len())].to_vec();
    let rows: Vec<f64> = tokens.iter().flat_map(|w| normal_matrix(1, D, word_seed(w), 1.0).row(0).to_vec()).collect();
    let x = Array2::from_shape_vec((tokens.len(), D), rows).unwrap_or_else(|_| Array2::zeros((0, D)));
    let wq = normal_matrix(D, D, 11, 1.0 / (D as f64).sqrt());
    let wk = normal_matrix(D, D, 12, 1.0 / (D as f64).sqrt());
    let mask = causal_mask(tokens.len());
    // (n, d) x (d, d) -> (n, d) for Q and K; V = X
    let a =
        attention(x.dot(&wq).view(), x.dot(&wk).view(), x.view(), causal.then(|| mask.view()), MaskFill::NegInf, true);
    Causal {
        tokens,
        masked: a.masked.rows().into_iter().map(|r| r.to_vec()).collect(),
        weights: a.weights.rows().into_iter().map(|r| r.to_vec()).collect(),
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `causal`: masked scores and weights with and without the look-ahead mask.

    use leptos::prelude::*;

    use super::{Causal, CausalDemo};
    use crate::kit::matrix_canvas::{mat_table, Mat, MatrixGrid};
    use crate::kit::DemoCtx;

    fn mats(c: &Causal) -> (Mat, Mat) {
        (
            Mat::new("scores Q Kᵀ/√d (masked)", c.masked.clone(), false).labels(&c.tokens, &c.tokens),
            Mat::new("weights", c.weights.clone(), true).labels(&c.tokens, &c.tokens),
        )
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<CausalDemo>(ctx);
        let scores = Signal::derive(move || out.with(|o| mats(o).0));
        let weights = Signal::derive(move || out.with(|o| mats(o).1));
        view! {
            <MatrixGrid ctx=ctx mats=Signal::derive(move || vec![scores.get(), weights.get()])/>
            <p class="muted">"Rows: queries. Columns: keys."</p>
            {move || ctx.show_numbers.get().then(|| out.with(|o| {
                let (a, b) = mats(o);
                view! { {mat_table(&a)} {mat_table(&b)} }
            }))}
        }
        .into_any()
    }
}
