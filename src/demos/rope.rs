//! Demo `rope`: with rotary embeddings the score depends on m − n only; with added sinusoids
//! it does not (chapter "positional").

use serde::Serialize;

use super::DemoSpec;
use crate::numerics::positional::{dot, rope, sinusoidal};
use crate::numerics::rng::normal_matrix;
use crate::state::{Param, Values};

pub const D: usize = 8;
pub const N: usize = 32;
pub const BASE: f64 = 10000.0;
pub static METHODS: &[(&str, &str)] = &[("rope", "RoPE (rotate q and k)"), ("added", "added sinusoidal")];

pub static PARAMS: &[Param] = &[
    Param::int("m", "Query position m", 0, 31, 5),
    Param::int("n", "Key position n", 0, 31, 2),
    Param::choice("method", "Method", METHODS, 0),
    Param::seed("seed", "Query and key", 1),
];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rope {
    pub method: String,
    /// score[m][n] for m, n in 0..32
    pub scores: Vec<Vec<f64>>,
    pub m: usize,
    pub n: usize,
    pub score: f64,
    /// max over the grid of |score(m, n) − score(m − n + c, c)| along each diagonal: 0 when
    /// the score depends on the offset only.
    pub diagonal_gap: f64,
}

pub fn score_grid(method: &str, seed: u32) -> Vec<Vec<f64>> {
    let q = normal_matrix(1, D, seed as u64, 1.0).row(0).to_vec();
    let k = normal_matrix(1, D, seed as u64 ^ 0x77, 1.0).row(0).to_vec();
    let pe = sinusoidal(N, D, BASE);
    (0..N)
        .map(|m| {
            (0..N)
                .map(|n| match method {
                    "added" => {
                        let qm: Vec<f64> = q.iter().zip(pe.row(m)).map(|(a, b)| a + b).collect();
                        let kn: Vec<f64> = k.iter().zip(pe.row(n)).map(|(a, b)| a + b).collect();
                        dot(&qm, &kn)
                    }
                    _ => dot(&rope(&q, m as f64, BASE), &rope(&k, n as f64, BASE)),
                })
                .collect()
        })
        .collect()
}

pub fn compute(method: &str, m: usize, n: usize, seed: u32) -> Rope {
    let scores = score_grid(method, seed);
    let mut gap = 0.0f64;
    for a in 0..N {
        for b in 0..N {
            // compare with the first entry on the same diagonal
            let c = a.min(b);
            gap = gap.max((scores[a][b] - scores[a - c][b - c]).abs());
        }
    }
    let (m, n) = (m.min(N - 1), n.min(N - 1));
    Rope { method: method.to_string(), score: scores[m][n], scores, m, n, diagonal_gap: gap }
}

pub fn from_values(v: &Values) -> Rope {
    compute(v.text("method"), v.int("m").max(0) as usize, v.int("n").max(0) as usize, v.seed("seed"))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "rope",
    title: "Rotary embeddings: only the offset matters",
    caption: "The score qᵀk for every query position m (rows) and key position n (columns). With RoPE every diagonal, where m − n is fixed, has one colour.",
    params: PARAMS,
    data: |v| super::to_json(&from_values(v)),
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::rope::view,
};
