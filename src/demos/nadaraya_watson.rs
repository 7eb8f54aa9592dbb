//! Demo `nw`: Nadaraya–Watson regression as attention pooling (chapter "kernel-regression").

use ndarray::{arr1, Array1};
use serde::Serialize;

use super::DemoSpec;
use crate::numerics::kernel_regression::{estimate, loo_loss, query_grid, sample, truth, weights, Kernel, LooLoss};
use crate::state::{Param, Values};

pub static KERNEL_OPTIONS: &[(&str, &str)] =
    &[("gaussian", "Gaussian"), ("boxcar", "Boxcar"), ("epanechnikov", "Epanechnikov"), ("constant", "Constant")];

pub static PARAMS: &[Param] = &[
    Param::int("n", "Training points n", 5, 200, 40),
    Param::seed("seed", "Noise seed", 1),
    Param::choice("kernel", "Kernel", KERNEL_OPTIONS, 0),
    Param::log_float("sigma", "Width σ", 0.01, 10.0, 0.5),
    Param::float("q", "Query q", 0.0, 5.0, 0.01, 2.5),
];

#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub n: usize,
    pub seed: u32,
    pub kernel: Kernel,
    pub sigma: f64,
    pub q: f64,
}

impl State {
    pub fn from_values(v: &Values) -> Self {
        State {
            n: v.int("n").max(1) as usize,
            seed: v.seed("seed"),
            kernel: Kernel::from_id(v.text("kernel")).unwrap_or(Kernel::Gaussian),
            sigma: v.float("sigma"),
            q: v.float("q"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NwOutput {
    pub kernel: &'static str,
    pub sigma: f64,
    /// Training inputs (keys), sorted ascending, and targets (values).
    pub x_train: Vec<f64>,
    pub y_train: Vec<f64>,
    /// The query grid and, at each query, the truth 2 sin(q) + q and the estimate f(q)
    /// (null where every kernel weight is 0).
    pub queries: Vec<f64>,
    pub truth: Vec<f64>,
    pub estimate: Vec<Option<f64>>,
    /// How many grid queries have no estimate.
    pub undefined: usize,
    /// Attention weights, one row per grid query (rows of undefined queries are all 0).
    pub weights: Vec<Vec<f64>>,
    /// The selected query q, its weights over the training points and its estimate.
    pub q: f64,
    pub q_weights: Vec<f64>,
    pub q_estimate: Option<f64>,
    /// Leave-one-out squared error at this σ (null if no point can be predicted).
    pub loo: Option<LooLoss>,
}

pub fn compute(s: &State) -> NwOutput {
    let (x, y) = sample(s.n, s.seed);
    let queries = query_grid();
    let w = weights(queries.view(), x.view(), s.kernel, s.sigma); // (101, n)
    let est = estimate(&w, y.view());
    let qw = weights(arr1(&[s.q]).view(), x.view(), s.kernel, s.sigma); // (1, n)
    let q_est = estimate(&qw, y.view())[0];
    NwOutput {
        kernel: s.kernel.id(),
        sigma: s.sigma,
        truth: queries.iter().map(|&q| truth(q)).collect(),
        undefined: est.iter().filter(|e| e.is_none()).count(),
        estimate: est,
        weights: w.w.rows().into_iter().map(|r| r.to_vec()).collect(),
        q: s.q,
        q_weights: qw.w.row(0).to_vec(),
        q_estimate: q_est,
        loo: loo_loss(x.view(), y.view(), s.kernel, s.sigma),
        queries: queries.to_vec(),
        x_train: x.to_vec(),
        y_train: y.to_vec(),
    }
}

/// The training data alone (for the fitting loop, which must not redo the plots' work).
pub fn training_data(s: &State) -> (Array1<f64>, Array1<f64>) {
    sample(s.n, s.seed)
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    super::to_json(&compute(&State::from_values(v)))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "nw",
    title: "Nadaraya–Watson regression as attention pooling",
    caption: "Keys are the training inputs xᵢ, values their targets yᵢ; a query q attends to every key with weight K(q − xᵢ) / Σⱼ K(q − xⱼ), and the estimate f(q) is the weighted average of the values.",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::nw::view,
};
