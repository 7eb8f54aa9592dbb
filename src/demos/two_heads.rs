//! Demo `two-heads`: two hand-built heads on "the cat sat on the mat" (chapter "multi-head").
//! Each token is [one-hot position (6) ; one-hot word (5)]. Head A looks at the previous
//! token: its query for position i is e_i and its key for position j is e_(j+1), so the score
//! is β where j = i − 1. Head B looks at the same word: query and key are both the word part.

use ndarray::Array2;
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::attention::{attention, causal_mask, MaskFill};

pub const TOKENS: [&str; 6] = ["the", "cat", "sat", "on", "the", "mat"];
const VOCAB: [&str; 5] = ["the", "cat", "sat", "on", "mat"];
const N: usize = 6;
const D: usize = N + VOCAB.len();

crate::params! {
    pub struct Params {
        beta: f64 = Param::float("beta", "Sharpness β", 0.0, 12.0, 0.5, 6.0),
        causal: bool = Param::boolean("causal", "Causal mask", true),
    }
}

pub struct TwoHeadsDemo;

impl Demo for TwoHeadsDemo {
    const ID: &'static str = "two-heads";
    const TITLE: &'static str = "Two heads, two relations";
    const CAPTION: &'static str =
        "Head A was built to look at the previous token, head B at earlier copies of the same word. The same \
        input, two different attention patterns: that is what several heads buy.";
    type Params = Params;
    type Output = TwoHeads;

    fn compute(p: &Params) -> TwoHeads {
        compute(p.beta, p.causal)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<TwoHeadsDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TwoHeads {
    pub tokens: Vec<&'static str>,
    pub previous_token: Vec<Vec<f64>>,
    pub same_word: Vec<Vec<f64>>,
}

/// X: (6, 11) = [one-hot position ; one-hot word].
pub fn embeddings() -> Array2<f64> {
    Array2::from_shape_fn((N, D), |(i, j)| {
        let hit = if j < N { j == i } else { VOCAB[j - N] == TOKENS[i] };
        if hit {
            1.0
        } else {
            0.0
        }
    })
}

pub fn compute(beta: f64, causal: bool) -> TwoHeads {
    let x = embeddings();
    let scale = beta * (D as f64).sqrt(); // attention divides by √d_k; undo it so β is the score

    // Head A: W_Q keeps the position part, W_K shifts it by one: key j is e_(j+1).
    let wq_a = Array2::from_shape_fn((D, D), |(r, c)| if r < N && c == r { scale } else { 0.0 });
    let wk_a = Array2::from_shape_fn((D, D), |(r, c)| if r < N && c == r + 1 && c < N { 1.0 } else { 0.0 });
    // Head B: both keep the word part.
    let wq_b = Array2::from_shape_fn((D, D), |(r, c)| if r >= N && c == r { scale } else { 0.0 });
    let wk_b = Array2::from_shape_fn((D, D), |(r, c)| if r >= N && c == r { 1.0 } else { 0.0 });
    let mask = causal_mask(N);
    let m = causal.then(|| mask.view());
    // (6, 11) x (11, 11) -> (6, 11) for every projection; V = X
    let a = attention(x.dot(&wq_a).view(), x.dot(&wk_a).view(), x.view(), m, MaskFill::NegInf, true);
    let b = attention(x.dot(&wq_b).view(), x.dot(&wk_b).view(), x.view(), m, MaskFill::NegInf, true);
    let rows = |m: &Array2<f64>| m.rows().into_iter().map(|r| r.to_vec()).collect();
    TwoHeads { tokens: TOKENS.to_vec(), previous_token: rows(&a.weights), same_word: rows(&b.weights) }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `two-heads`: the previous-token head and the same-word head.

    use leptos::prelude::*;

    use super::{TwoHeads, TwoHeadsDemo};
    use crate::kit::matrix_canvas::{mat_table, Mat, MatrixGrid};
    use crate::kit::DemoCtx;

    fn mats(t: &TwoHeads) -> (Mat, Mat) {
        (
            Mat::new("head A: previous token", t.previous_token.clone(), true).labels(&t.tokens, &t.tokens),
            Mat::new("head B: same word", t.same_word.clone(), true).labels(&t.tokens, &t.tokens),
        )
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<TwoHeadsDemo>(ctx);
        let a = Signal::derive(move || out.with(|o| mats(o).0));
        let b = Signal::derive(move || out.with(|o| mats(o).1));
        let numbers = move || {
            out.with(|o| {
                let (a, b) = mats(o);
                view! { {mat_table(&a)} {mat_table(&b)} }
            })
        };
        view! {
            <MatrixGrid ctx=ctx mats=Signal::derive(move || vec![a.get(), b.get()])/>
            <p class="muted">"Rows: queries. Columns: keys."</p>
            {move || ctx.show_numbers.get().then(numbers)}
        }
        .into_any()
    }
}
