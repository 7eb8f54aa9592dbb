//! Demo `gauss-dot`: from the Gaussian kernel to the dot product (chapter "scoring").
//! −½‖q − k‖² = qᵀk − ½‖k‖² − ½‖q‖²: the last term is the same for every key, so softmax
//! removes it; when every key has the same length the middle one goes too, leaving qᵀk.

use ndarray::{arr1, Array1};
use serde::Serialize;

use super::DemoSpec;
use crate::numerics::softmax::softmax;
use crate::state::{Param, Values};

pub static PARAMS: &[Param] = &[
    Param::float("theta", "Query direction θ (degrees)", 0.0, 360.0, 1.0, 40.0),
    Param::float("r", "Query length ‖q‖", 0.2, 3.0, 0.05, 1.5),
    Param::boolean("equal", "Give every key length 1.5", false),
];

/// The four keys, in the plane.
pub const KEYS: [[f64; 2]; 4] = [[2.0, 0.5], [0.5, 1.5], [-1.0, 1.0], [0.3, -2.5]];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GaussDot {
    pub q: [f64; 2],
    pub keys: Vec<[f64; 2]>,
    /// −½‖q − kᵢ‖²
    pub gauss: Vec<f64>,
    /// qᵀkᵢ
    pub dot: Vec<f64>,
    /// −½‖kᵢ‖²
    pub key_term: Vec<f64>,
    /// −½‖q‖², the same for every key
    pub query_term: f64,
    /// softmax of the Gaussian scores, and of the dot products alone
    pub w_gauss: Vec<f64>,
    pub w_dot: Vec<f64>,
    /// max |w_gauss − w_dot|: 0 when all keys have the same length
    pub max_diff: f64,
}

pub fn compute(theta_deg: f64, r: f64, equal: bool) -> GaussDot {
    let t = theta_deg.to_radians();
    let q = arr1(&[r * t.cos(), r * t.sin()]);
    let keys: Vec<Array1<f64>> = KEYS
        .iter()
        .map(|k| {
            let k = arr1(k);
            if equal {
                &k * (1.5 / k.dot(&k).sqrt())
            } else {
                k
            }
        })
        .collect();
    let gauss: Array1<f64> = keys.iter().map(|k| -0.5 * (&q - k).mapv(|x| x * x).sum()).collect();
    let dot: Array1<f64> = keys.iter().map(|k| q.dot(k)).collect();
    let w_gauss = softmax(gauss.view());
    let w_dot = softmax(dot.view());
    GaussDot {
        q: [q[0], q[1]],
        keys: keys.iter().map(|k| [k[0], k[1]]).collect(),
        key_term: keys.iter().map(|k| -0.5 * k.dot(k)).collect(),
        query_term: -0.5 * q.dot(&q),
        max_diff: (&w_gauss - &w_dot).iter().fold(0.0, |a, d| a.max(d.abs())),
        gauss: gauss.to_vec(),
        dot: dot.to_vec(),
        w_gauss: w_gauss.to_vec(),
        w_dot: w_dot.to_vec(),
    }
}

pub fn from_values(v: &Values) -> GaussDot {
    compute(v.float("theta"), v.float("r"), v.flag("equal"))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "gauss-dot",
    title: "From the Gaussian kernel to the dot product",
    caption: "−½‖q − k‖² = qᵀk − ½‖k‖² − ½‖q‖². The query's own term is the same for every key and cancels in the softmax; with equal key lengths the key term cancels too, and only qᵀk is left.",
    params: PARAMS,
    data: |v| super::to_json(&from_values(v)),
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::gauss_dot::view,
};
