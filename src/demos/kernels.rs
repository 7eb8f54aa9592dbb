//! Demo `kernels`: the four kernels K(d) for a width σ (chapter "kernel-regression").

use serde::Serialize;

use super::DemoSpec;
use crate::numerics::kernel_regression::Kernel;
use crate::state::{Param, Values};

pub static PARAMS: &[Param] = &[Param::log_float("sigma", "Width σ", 0.05, 5.0, 1.0)];

/// Distances plotted: 241 points on [−3, 3].
pub const D_MAX: f64 = 3.0;
pub const POINTS: usize = 241;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelCurves {
    pub sigma: f64,
    pub d: Vec<f64>,
    /// (kernel id, K(d) for each d)
    pub curves: Vec<(&'static str, Vec<f64>)>,
}

pub fn compute(sigma: f64) -> KernelCurves {
    let d: Vec<f64> = (0..POINTS).map(|i| -D_MAX + 2.0 * D_MAX * i as f64 / (POINTS - 1) as f64).collect();
    let curves = Kernel::ALL.iter().map(|k| (k.id(), d.iter().map(|&x| k.eval(x, sigma)).collect())).collect();
    KernelCurves { sigma, d, curves }
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    super::to_json(&compute(v.float("sigma")))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "kernels",
    title: "Four kernels",
    caption: "K(d) against the distance d = q − k between a query and a key. Normalising makes the constant factors irrelevant; only the shape and the width σ matter.",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::kernels::view,
};
