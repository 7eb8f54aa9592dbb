//! Demo `lookup`: a colour database queried by a typed word (chapter "soft-lookup").

use super::DemoSpec;
use crate::numerics::soft_lookup::{lookup, Lookup};
use crate::state::{Param, Values};

pub static PARAMS: &[Param] =
    &[Param::text("q", "Query word", 40, "blu"), Param::float("beta", "Sharpness β", 0.0, 100.0, 0.5, 10.0)];

#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub query: String,
    pub beta: f64,
}

impl State {
    pub fn from_values(v: &Values) -> Self {
        State { query: v.text("q").to_string(), beta: v.float("beta") }
    }
}

pub fn compute(s: &State) -> Lookup {
    lookup(&s.query, s.beta)
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    super::to_json(&compute(&State::from_values(v)))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "lookup",
    title: "A soft lookup in a colour dictionary",
    caption: "Each key's score is the cosine similarity of its letter pairs with the query; the weights are a softmax of β × score; the answer is the weighted average of the colours.",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::lookup::view,
};
