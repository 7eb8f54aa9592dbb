//! Demo `padding`: masked softmax with valid lengths on a padded batch (chapter "masking").

use ndarray::Array2;
use serde::Serialize;

use super::DemoSpec;
use crate::numerics::attention::{attention, valid_length_mask, MaskFill};
use crate::numerics::rng::{normal_matrix, word_seed};
use crate::state::{Param, Values};

pub const SENTENCES: [&[&str]; 3] =
    [&["Dive", "into", "Deep", "Learning"], &["Learn", "to", "code"], &["Hello", "world"]];
pub const LEN: usize = 4;
pub const D: usize = 4;

pub static FILLS: &[(&str, &str)] = &[("neginf", "−∞"), ("big", "−10⁶")];

pub static PARAMS: &[Param] = &[
    Param::int("v1", "Valid length, sentence 1", 0, 4, 4),
    Param::int("v2", "Valid length, sentence 2", 0, 4, 3),
    Param::int("v3", "Valid length, sentence 3", 0, 4, 2),
    Param::choice("fill", "Masked scores become", FILLS, 0),
];

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

pub fn fill_of(v: &Values) -> MaskFill {
    if v.text("fill") == "big" {
        MaskFill::Value(-1e6)
    } else {
        MaskFill::NegInf
    }
}

pub fn from_values(v: &Values) -> Vec<Sequence> {
    let l = |k| v.int(k).clamp(0, LEN as i64) as usize;
    compute([l("v1"), l("v2"), l("v3")], fill_of(v))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "padding",
    title: "Masked softmax with valid lengths",
    caption: "Three sentences padded to four tokens. Keys past each valid length are masked before the softmax, so their weights are exactly 0. Set a valid length to 0 to see what each way of masking does to a row with nothing left.",
    params: PARAMS,
    data: |v| super::to_json(&serde_json::json!({ "sequences": from_values(v) })),
    #[cfg(target_arch = "wasm32")]
    view: view::view,
};

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `padding`: per sentence, the masked scores and the weights.

    use leptos::prelude::*;

    use super::{from_values, Sequence};
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
        let out = Memo::new(move |_| ctx.values.with(from_values));
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
                let empty: Vec<usize> = o.iter().enumerate().filter(|(_, s)| s.valid == 0).map(|(i, _)| i + 1).collect(); // sentences are counted, like the prose
                (!empty.is_empty()).then(|| {
                    let which = empty.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" and ");
                    if o.iter().any(|s| s.defined.iter().any(|d| !d)) {
                        format!("Sentence {which} has valid length 0: every key is masked with −∞, so each softmax is 0/0 and has no value. Those rows are marked 0/0; real code must guard against them (they would turn into NaN).")
                    } else {
                        format!("Sentence {which} has valid length 0: every score is the same −10⁶, so the softmax is uniform (1/4 each) over the padding: a number, but a meaningless one.")
                    }
                })
            })
        };
        view! {
            {pair(0)}
            {pair(1)}
            {pair(2)}
            {move || empty_note().map(|t| view! { <p class="notice" role="note">{t}</p> })}
            {move || ctx.show_numbers.get().then(|| out.with(|o| o.iter().map(|s| { let (a, b) = mats(s); view! { {mat_table(&a)} {mat_table(&b)} } }).collect_view()))}
        }
        .into_any()
    }
}
