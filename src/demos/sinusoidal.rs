//! Demo `sinusoidal`: the sinusoidal position table, a few of its columns, and the similarity
//! of positions (chapter "positional").

use serde::Serialize;

use super::DemoSpec;
use crate::numerics::positional::{frequency, sinusoidal};
use crate::state::{Param, Values};

pub static PARAMS: &[Param] = &[
    Param::log_int("d", "Dimensions d", 8, 512, 64),
    Param::log_float("base", "Base", 100.0, 100000.0, 10000.0),
    Param::int("len", "Max length", 16, 128, 64),
];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sinusoidal {
    pub d: usize,
    pub base: f64,
    /// (len, d): PE(pos, 2i) = sin(pos ω_i), PE(pos, 2i+1) = cos(pos ω_i)
    pub table: Vec<Vec<f64>>,
    /// The plotted columns (even, so sines) and their wavelengths 2π / ω_i.
    pub columns: Vec<usize>,
    pub wavelengths: Vec<f64>,
    /// PE(p) · PE(q) for all pairs: (len, len)
    pub similarity: Vec<Vec<f64>>,
}

pub fn compute(d: usize, base: f64, len: usize) -> Sinusoidal {
    let d = d.max(2) & !1; // even: dimensions come in (sin, cos) pairs
    let pe = sinusoidal(len, d, base); // (len, d)
                                       // PE(p)·PE(q) = Σᵢ cos(ωᵢ (p − q)) (sin a sin b + cos a cos b = cos(a − b)), and cos is even,
                                       // so it is Σᵢ cos(ωᵢ |p − q|) = PE(|p − q|)·PE(0): the sum of the cosine columns of row
                                       // |p − q|. One sum per offset instead of the (len, d) x (d, len) product; tests/positional_block.rs
                                       // checks the result against the dot products, and the browser test recomputes them.
    let by_offset: Vec<f64> = (0..len).map(|o| (1..d).step_by(2).map(|j| pe[[o, j]]).sum()).collect();
    let sim = ndarray::Array2::from_shape_fn((len, len), |(p, q)| by_offset[p.abs_diff(q)]);
    let columns: Vec<usize> = [0, 2, d / 4, d / 2].iter().map(|&c| c & !1).collect();
    Sinusoidal {
        d,
        base,
        wavelengths: columns.iter().map(|&c| 2.0 * std::f64::consts::PI / frequency(c / 2, d, base)).collect(),
        columns,
        table: pe.rows().into_iter().map(|r| r.to_vec()).collect(),
        similarity: sim.rows().into_iter().map(|r| r.to_vec()).collect(),
    }
}

pub fn from_values(v: &Values) -> Sinusoidal {
    compute(v.int("d").max(2) as usize, v.float("base"), v.int("len").max(1) as usize)
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "sinusoidal",
    title: "The sinusoidal position table",
    caption: "Each pair of dimensions is a sine and a cosine of the position at its own frequency, from fast (left) to very slow (right). The similarity of two positions depends only on how far apart they are.",
    params: PARAMS,
    data: |v| super::to_json(&from_values(v)),
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::sinusoidal::view,
};
