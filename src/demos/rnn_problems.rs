//! Demo `rnn-problems` (chapter "why-attention"): a recurrent network's two problems, one
//! picture each: the sequential steps before each state exists, and how little an early letter
//! still moves the encoder's last state (measured on the trained fixed-context model).

use super::DemoSpec;
use crate::seq2seq::{decode, encode, eval::sensitivity, Models, Variant};
use crate::state::{Param, Values};

pub static PARAMS: &[Param] = &[Param::text("text", "Input (letters a–z)", 30, "thequickbrownfoxjumpsoverthel")];

/// Steps that must run one after another before position j (1-based) has its state: j for a
/// recurrent network (h_j needs h_{j−1}), 1 for self-attention (every position at once).
pub fn sequential_steps(len: usize) -> (Vec<usize>, Vec<usize>) {
    ((1..=len).collect(), vec![1; len])
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Problems {
    pub letters: Vec<String>,
    pub rnn_steps: Vec<usize>,
    pub attention_steps: Vec<usize>,
    /// Mean ‖Δh_S‖ when each letter is replaced (`seq2seq::eval::sensitivity`).
    pub sensitivity: Vec<f64>,
}

pub fn run(models: &Models, v: &Values) -> Result<Problems, String> {
    let src = encode(v.text("text"))?;
    let word = decode(&src);
    let (rnn_steps, attention_steps) = sequential_steps(word.len());
    Ok(Problems {
        letters: word.chars().map(String::from).collect(),
        rnn_steps,
        attention_steps,
        sensitivity: sensitivity(models.get(Variant::Fixed), &src),
    })
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    let src = encode(v.text("text"))?;
    let (rnn, attn) = sequential_steps(src.len() - 1);
    Ok(
        serde_json::json!({ "input": decode(&src), "rnn_steps": rnn, "attention_steps": attn, "note": "The sensitivity is computed in the browser from the shipped weights; the page's Download data adds it." }),
    )
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "rnn-problems",
    title: "Two problems of a recurrent encoder",
    caption: "The first plot: how many steps must run one after another before each position's state exists. The second: how far the encoder's final state moves when one letter is changed, averaged over the other 25 letters, for the trained fixed-context model: the early letters barely register.",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::rnn_problems::view,
};
