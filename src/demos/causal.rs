//! Demo `causal`: the look-ahead mask of a decoder (chapter "masking").

use ndarray::Array2;
use serde::Serialize;

use super::DemoSpec;
use crate::numerics::attention::{attention, causal_mask, MaskFill};
use crate::numerics::rng::{normal_matrix, word_seed};
use crate::state::{Param, Values};

pub const WORDS: [&str; 8] = ["the", "cat", "sat", "on", "the", "mat", "and", "purred"];
pub const D: usize = 8;

pub static PARAMS: &[Param] = &[Param::boolean("causal", "Causal mask", true), Param::int("n", "Tokens", 2, 8, 6)];

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

pub fn from_values(v: &Values) -> Causal {
    compute(v.int("n").max(1) as usize, v.flag("causal"))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "causal",
    title: "The causal mask",
    caption: "Rows are queries, columns keys. With the causal mask each token attends only to itself and earlier tokens: everything above the diagonal is −∞ before the softmax and exactly 0 after it.",
    params: PARAMS,
    data: |v| super::to_json(&from_values(v)),
    #[cfg(target_arch = "wasm32")]
    view: view::view,
};

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `causal`: masked scores and weights with and without the look-ahead mask.

    use leptos::prelude::*;

    use super::{from_values, Causal};
    use crate::kit::matrix_canvas::{mat_table, Mat, MatrixGrid};
    use crate::kit::DemoCtx;

    fn mats(c: &Causal) -> (Mat, Mat) {
        (
            Mat::new("scores Q Kᵀ/√d (masked)", c.masked.clone(), false).labels(&c.tokens, &c.tokens),
            Mat::new("weights", c.weights.clone(), true).labels(&c.tokens, &c.tokens),
        )
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = Memo::new(move |_| ctx.values.with(from_values));
        let scores = Signal::derive(move || out.with(|o| mats(o).0));
        let weights = Signal::derive(move || out.with(|o| mats(o).1));
        view! {
            <MatrixGrid ctx=ctx mats=Signal::derive(move || vec![scores.get(), weights.get()])/>
            <p class="muted">"Rows: queries. Columns: keys."</p>
            {move || ctx.show_numbers.get().then(|| out.with(|o| { let (a, b) = mats(o); view! { {mat_table(&a)} {mat_table(&b)} } }))}
        }
        .into_any()
    }
}
