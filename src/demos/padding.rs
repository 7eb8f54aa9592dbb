//! Demo `padding`: masked softmax with valid lengths on a padded batch (chapter "masking").

use ndarray::Array2;
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::attention::{attention, valid_length_mask, MaskFill};
use crate::numerics::rng::{normal_matrix, word_seed};

pub const SENTENCES: [&[&str]; 3] =
    [&["Dive", "into", "Deep", "Learning"], &["Learn", "to", "code"], &["Hello", "world"]];
pub const LEN: usize = 4;
pub const D: usize = 4;

crate::options! {
    /// What a masked score becomes before the softmax.
    pub enum Fill { NegInf = ("neginf", "−∞"), Big = ("big", "−10⁶") }
}

impl Fill {
    pub fn mask_fill(self) -> MaskFill {
        match self {
            Fill::NegInf => MaskFill::NegInf,
            Fill::Big => MaskFill::Value(-1e6),
        }
    }
}

crate::params! {
    pub struct Params {
        /// each sentence's valid length: keys from there on are padding
        v1: usize = Param::int("v1", "Valid length, sentence 1", 0, 4, 4),
        v2: usize = Param::int("v2", "Valid length, sentence 2", 0, 4, 3),
        v3: usize = Param::int("v3", "Valid length, sentence 3", 0, 4, 2),
        fill: Fill = Param::choice("fill", "Masked scores become", Fill::OPTIONS, 0),
    }
}

pub struct PaddingDemo;

impl Demo for PaddingDemo {
    const ID: &'static str = "padding";
    const TITLE: &'static str = "Masked softmax with valid lengths";
    const CAPTION: &'static str = "Three sentences padded to four tokens. Keys past each valid length are masked \
        before the softmax, so their weights are exactly 0. Set a valid length to 0 to see what each way of masking \
        does to a row with nothing left.";
    type Params = Params;
    type Output = Batch;

    fn compute(p: &Params) -> Batch {
        Batch { sequences: compute([p.v1, p.v2, p.v3].map(|v| v.min(LEN)), p.fill.mask_fill()) }
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<PaddingDemo>();

/// The three sentences, as "Download data" writes them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Batch {
    pub sequences: Vec<Sequence>,
}

/// A token's embedding: the same word always gets the same vector; padding is all zeros.
pub fn embed(word: &str) -> Vec<f64> {
    if word == "<pad>" {
        return vec![0.0; D];
    }
    normal_matrix(1, D, word_seed(&word.to_lowercase()), 1.0).row(0).to_vec()
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sequence {
    pub tokens: Vec<String>,
    pub valid: usize,
    /// X Xᵀ / √d with masked entries filled (−∞ is written as null in JSON)
    pub masked: Vec<Vec<f64>>,
    pub weights: Vec<Vec<f64>>,
    /// rows with no softmax (valid length 0 with −∞)
    pub defined: Vec<bool>,
}

pub fn compute(valid: [usize; 3], fill: MaskFill) -> Vec<Sequence> {
    SENTENCES
        .iter()
        .zip(valid)
        .map(|(words, valid)| {
            let tokens: Vec<String> = (0..LEN).map(|i| words.get(i).map_or("<pad>", |w| *w).to_string()).collect();
            let x = Array2::from_shape_vec((LEN, D), tokens.iter().flat_map(|t| embed(t)).collect())
                .unwrap_or_else(|_| Array2::zeros((LEN, D)));
            let mask = valid_length_mask(LEN, LEN, valid);
            // Self-attention of the padded sequence with Q = K = V = X.
            let a = attention(x.view(), x.view(), x.view(), Some(mask.view()), fill, true);
            Sequence {
                tokens,
                valid,
                masked: a.masked.rows().into_iter().map(|r| r.to_vec()).collect(),
                weights: a.weights.rows().into_iter().map(|r| r.to_vec()).collect(),
                defined: a.defined,
            }
        })
        .collect()
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `padding`: per sentence, the masked scores and the weights.

    use leptos::prelude::*;

    use super::{Demo, PaddingDemo, Params, Sequence};
    use crate::kit::matrix_canvas::{mat_table, Mat, MatrixGrid};
    use crate::kit::DemoCtx;

    fn mats(s: &Sequence) -> (Mat, Mat) {
        let scores = Mat::new(format!("masked scores, valid length {}", s.valid), s.masked.clone(), false)
            .labels(&s.tokens, &s.tokens);
        let mut weights = Mat::new("weights", s.weights.clone(), true).labels(&s.tokens, &s.tokens);
        let undefined: Vec<bool> = s.defined.iter().map(|d| !d).collect();
        if undefined.iter().any(|&u| u) {
            weights.undefined = Some(undefined);
        }
        (scores, weights)
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let params = ctx.params::<Params>();
        let out = Memo::new(move |_| params.with(|p| PaddingDemo::compute(p).sequences));
        let pair = move |i: usize| {
            let scores = Signal::derive(move || out.with(|o| mats(&o[i]).0));
            let weights = Signal::derive(move || out.with(|o| mats(&o[i]).1));
            view! {
                <div class="seq">
                    <p class="seq-title">{move || out.with(|o| o[i].tokens.join(" "))}</p>
                    <MatrixGrid ctx=ctx mats=Signal::derive(move || vec![scores.get(), weights.get()])/>
                </div>
            }
        };
        let empty_note = move || {
            out.with(|o| {
                // sentences are counted from 1, like the prose
                let empty: Vec<usize> =
                    o.iter().enumerate().filter(|(_, s)| s.valid == 0).map(|(i, _)| i + 1).collect();
                (!empty.is_empty()).then(|| {
                    let which = empty.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" and ");
                    if o.iter().any(|s| s.defined.iter().any(|d| !d)) {
                        format!(
                            "Sentence {which} has valid length 0: every key is masked with −∞, so each softmax is \
                             0/0 and has no value. Those rows are marked 0/0; real code must guard against them \
                             (they would turn into NaN)."
                        )
                    } else {
                        format!(
                            "Sentence {which} has valid length 0: every score is the same −10⁶, so the softmax is \
                             uniform (1/4 each) over the padding: a number, but a meaningless one."
                        )
                    }
                })
            })
        };
        view! {
            {pair(0)}
            {pair(1)}
            {pair(2)}
            {move || empty_note().map(|t| view! { <p class="notice" role="note">{t}</p> })}
            {move || ctx.show_numbers.get().then(|| out.with(|o| o.iter().map(|s| {
                let (a, b) = mats(s);
                view! { {mat_table(&a)} {mat_table(&b)} }
            }).collect_view()))}
        }
        .into_any()
    }
}
