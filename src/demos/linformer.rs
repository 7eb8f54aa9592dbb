//! Demo `linformer` (chapter "efficient"): how low-rank real attention matrices are. A bundled
//! GPT-2 model in a Web Worker gives one head's Q, K and V for a text (`Request::HeadQkv`);
//! `analyze` (DOM-free, tested natively on the same model) computes the attention matrix, its
//! singular values, the error of the best rank-k approximation and of Linformer's projection.

use ndarray::Array2;
use serde::Serialize;

use super::DemoSpec;
use crate::gpt2::session::HeadQkv;
use crate::numerics::attention::{attention, causal_mask, MaskFill};
use crate::numerics::low_rank::{linformer_errors, output_errors, svd, truncation_errors, Svd};
use crate::state::{Param, Values};

pub static MODELS: &[(&str, &str)] =
    &[("stories", "Pet stories (4 layers × 4 heads)"), ("induction", "Induction (2 layers × 4 heads)")];

/// The text each model reads: the kind it was trained on, long enough for a 40-60 row matrix.
pub fn text_for(model: &str) -> &'static str {
    match model {
        "induction" => "Q F K B X R T M W Q F K B X R T M W Q F K B X R T M W Q F K B X R T M",
        _ => "Tom has a little dog named Max. Max likes to run in the park. One day Max saw a cat in a tree. He barked at it, and the cat looked down at him. Tom laughed and threw a ball, and Max ran after it.",
    }
}

pub static PARAMS: &[Param] = &[
    Param::choice("model", "Model", MODELS, 0),
    Param::int("layer", "Layer", 0, 3, 0),
    Param::int("head", "Head", 0, 3, 0),
    Param::boolean("causal", "Causal mask", false),
    Param::int("k", "Rank k", 1, 64, 8),
];

/// What the demo shows for one head.
#[derive(Serialize)]
pub struct LowRank {
    pub tokens: Vec<String>,
    pub causal: bool,
    /// The (n, n) attention weights softmax(QKᵀ/√d), masked or not.
    pub weights: Vec<Vec<f64>>,
    /// Singular values, largest first.
    pub sigma: Vec<f64>,
    /// For k = 0 ..= n: ‖P − P_k‖_F/‖P‖_F and ‖(P − P_k)V‖_F/‖PV‖_F (P_k: the best rank-k approximation of P).
    pub matrix_error: Vec<f64>,
    pub output_error: Vec<f64>,
    /// For k = 1 ..= n, without the mask only: Linformer with E = F = segment means.
    pub linformer_error: Option<Vec<f64>>,
    #[serde(skip)]
    svd: Svd,
}

impl LowRank {
    /// The best rank-k approximation U_k Σ_k V_kᵀ, for the heatmap beside the original.
    pub fn approx(&self, k: usize) -> Vec<Vec<f64>> {
        let n = self.sigma.len();
        let k = k.min(n);
        let mut a = Array2::<f64>::zeros((n, n));
        for i in 0..k {
            for r in 0..n {
                let x = self.svd.sigma[i] * self.svd.u[[r, i]];
                for c in 0..n {
                    a[[r, c]] += x * self.svd.v[[c, i]];
                }
            }
        }
        a.rows().into_iter().map(|r| r.to_vec()).collect()
    }

    /// The smallest k whose best approximation keeps the output within `tol` (relative).
    pub fn rank_for(&self, tol: f64) -> usize {
        self.output_error.iter().position(|&e| e <= tol).unwrap_or(self.sigma.len())
    }
}

pub fn analyze(h: &HeadQkv, causal: bool) -> Result<LowRank, String> {
    let n = h.tokens.len();
    let mat = |x: &[f32]| {
        Array2::from_shape_vec((n, h.d), x.iter().map(|&v| f64::from(v)).collect())
            .map_err(|e| format!("the worker sent a malformed matrix: {e}"))
    };
    let (q, k, v) = (mat(&h.q)?, mat(&h.k)?, mat(&h.v)?);
    if n == 0 {
        return Err("the text has no tokens".into());
    }
    // With the causal mask, keys after the query get −∞ before the softmax, so weight exactly 0.
    let mask = causal_mask(n);
    let p = attention(q.view(), k.view(), v.view(), causal.then(|| mask.view()), MaskFill::NegInf, true).weights;
    let s = svd(p.view());
    Ok(LowRank {
        tokens: h.tokens.iter().map(|t| t.text.clone()).collect(),
        causal,
        weights: p.rows().into_iter().map(|r| r.to_vec()).collect(),
        sigma: s.sigma.to_vec(),
        matrix_error: truncation_errors(s.sigma.as_slice().unwrap_or(&[])),
        output_error: output_errors(p.view(), &s, v.view()),
        linformer_error: (!causal).then(|| linformer_errors(q.view(), k.view(), v.view())),
        svd: s,
    })
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    let model = v.text("model");
    Ok(
        serde_json::json!({ "model": model, "text": text_for(model), "layer": v.int("layer"), "head": v.int("head"), "causal": v.flag("causal"), "k": v.int("k"), "note": "The matrices are computed by the model in the browser; the page's Download data adds them." }),
    )
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "linformer",
    title: "How low-rank is real attention?",
    caption: "One head of a bundled GPT-2 model reads a text. Its attention matrix, the matrix rebuilt from the k largest singular values, and the output error of two rank-k shortcuts: P replaced by its best rank-k approximation (SVD), and Linformer's projection of keys and values onto k averaged positions.",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::linformer::view,
};
