//! Demo `pe-shift`: PE(p + k) is PE(p) rotated pair by pair by angles that depend on k only.

use serde::Serialize;

use super::DemoSpec;
use crate::numerics::positional::{frequency, shift_error};
use crate::state::{Param, Values};

pub static DIMS: &[(&str, &str)] = &[("4", "4"), ("8", "8"), ("16", "16"), ("32", "32")];
pub const BASE: f64 = 10000.0;

pub static PARAMS: &[Param] = &[
    Param::int("p", "Position p", 0, 200, 10),
    Param::int("k", "Offset k", -50, 50, 5),
    Param::choice("d", "Dimensions d", DIMS, 1),
];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeShift {
    pub p: i64,
    pub k: i64,
    /// Per pair i: ω_i, the angle ω_i p, and the rotation angle ω_i k.
    pub omega: Vec<f64>,
    pub angle_p: Vec<f64>,
    pub rotation: Vec<f64>,
    /// max |PE(p + k) − R(k) PE(p)|
    pub max_error: f64,
}

pub fn compute(p: i64, k: i64, d: usize) -> PeShift {
    let omega: Vec<f64> = (0..d / 2).map(|i| frequency(i, d, BASE)).collect();
    PeShift {
        p,
        k,
        angle_p: omega.iter().map(|w| w * p as f64).collect(),
        rotation: omega.iter().map(|w| w * k as f64).collect(),
        max_error: shift_error(p as f64, k as f64, d, BASE),
        omega,
    }
}

pub fn from_values(v: &Values) -> PeShift {
    compute(v.int("p"), v.int("k"), v.text("d").parse().unwrap_or(8))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "pe-shift",
    title: "Shifting a position is a rotation",
    caption: "One circle per frequency pair, its first coordinate across and its second up: the blue dot is pair i at position p, (sin ωᵢp, cos ωᵢp), and the orange dot the same pair at p + k. Every pair turns by ωᵢk, whatever p is.",
    params: PARAMS,
    data: |v| super::to_json(&from_values(v)),
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::pe_shift::view,
};
