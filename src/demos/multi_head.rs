//! Demo `multi-head`: h heads over a fixed d_model = 16 (chapter "multi-head").

use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::attention::{attention_flops_per_head, multi_head};
use crate::numerics::rng::normal_matrix;

pub const D_MODEL: usize = 16;
pub static HEADS: &[(&str, &str)] = &[("1", "1"), ("2", "2"), ("4", "4"), ("8", "8")];

crate::params! {
    pub struct Params {
        /// the number of heads (a divisor of d_model)
        h: usize = Param::choice("h", "Heads h", HEADS, 1),
        n: usize = Param::int("n", "Tokens n", 2, 12, 6),
        seed: u32 = Param::seed("seed", "Random draw", 1),
        causal: bool = Param::boolean("causal", "Causal mask", false),
    }
}

pub struct MultiHeadDemo;

impl Demo for MultiHeadDemo {
    const ID: &'static str = "multi-head";
    const TITLE: &'static str = "Splitting d_model into heads";
    const CAPTION: &'static str = "Each head attends with its own d_model/h columns of Q, K and V; the heads' outputs \
        are concatenated and mixed by W_O. More heads, each smaller: the total cost stays 2·n²·d_model.";
    type Params = Params;
    type Output = MultiHeadOut;

    fn compute(p: &Params) -> MultiHeadOut {
        compute(p.h, p.n.max(1), p.seed, p.causal)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<MultiHeadDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultiHeadOut {
    pub h: usize,
    pub d_head: usize,
    pub n: usize,
    /// one (n, n) weight matrix per head
    pub heads: Vec<Vec<Vec<f64>>>,
    /// the heads' outputs side by side, (n, d_model), then × W_O
    pub concat: Vec<Vec<f64>>,
    /// W_O: (d_model, d_model), mixing the heads' outputs
    pub w_o: Vec<Vec<f64>>,
    pub output: Vec<Vec<f64>>,
    /// multiply-adds of Q Kᵀ and weights · V, per head and in total
    pub flops_per_head: usize,
    pub flops_total: usize,
}

pub fn compute(h: usize, n: usize, seed: u32, causal: bool) -> MultiHeadOut {
    let h = if D_MODEL.is_multiple_of(h.max(1)) { h.max(1) } else { 1 };
    let s = 1.0 / (D_MODEL as f64).sqrt();
    let x = normal_matrix(n, D_MODEL, seed as u64, 1.0); // (n, d_model)
    let w = |k: u64| normal_matrix(D_MODEL, D_MODEL, seed as u64 ^ (k << 20), s);
    let w_o = w(4);
    let mh = multi_head(x.view(), &w(1), &w(2), &w(3), &w_o, h, causal);
    let rows = |m: &ndarray::Array2<f64>| m.rows().into_iter().map(|r| r.to_vec()).collect::<Vec<_>>();
    let per = attention_flops_per_head(n, D_MODEL / h);
    MultiHeadOut {
        h,
        d_head: D_MODEL / h,
        n,
        heads: mh.head_weights.iter().map(rows).collect(),
        concat: rows(&mh.concat),
        w_o: rows(&w_o),
        output: rows(&mh.output),
        flops_per_head: per,
        flops_total: per * h,
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `multi-head`: one heatmap per head, the concatenation, the output, the cost.

    use leptos::prelude::*;

    use super::{MultiHeadDemo, MultiHeadOut};
    use crate::kit::matrix_canvas::{mat_table, Mat, MatrixGrid};
    use crate::kit::DemoCtx;

    fn head(o: &MultiHeadOut, j: usize) -> Mat {
        let toks: Vec<String> = (0..o.n).map(|i| format!("t{i}")).collect();
        Mat::new(format!("head {j} (d_head = {})", o.d_head), o.heads.get(j).cloned().unwrap_or_default(), true)
            .labels(&toks, &toks)
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<MultiHeadDemo>(ctx);
        let heads = Signal::derive(move || out.with(|o| (0..o.h).map(|j| head(o, j)).collect::<Vec<_>>()));
        let concat = Signal::derive(move || {
            out.with(|o| {
                Mat::new(
                    format!("Concat(head 0 … head {}): ({}, 16)", o.h.saturating_sub(1), o.n),
                    o.concat.clone(),
                    false,
                )
            })
        });
        let w_o = Signal::derive(move || out.with(|o| Mat::new("W_O: (16, 16)", o.w_o.clone(), false)));
        let output = Signal::derive(move || {
            out.with(|o| Mat::new(format!("output = Concat · W_O: ({}, 16)", o.n), o.output.clone(), false))
        });
        view! {
            <MatrixGrid ctx=ctx mats=heads min_w=170.0/>
            <p class="readout">{move || out.with(|o| format!(
                "Cost of Q Kᵀ and weights · V: {} heads × 2·n²·d_head = {} × 2·{}²·{} = {} multiply-adds \
                (2·n²·d_model = {}).",
                o.h, o.h, o.n, o.d_head, o.flops_total, 2 * o.n * o.n * 16
            ))}</p>
            <MatrixGrid ctx=ctx mats=Signal::derive(move || vec![concat.get(), w_o.get(), output.get()]) min_w=215.0/>
            {move || ctx.show_numbers.get().then(|| {
                out.with(|o| (0..o.h).map(|j| mat_table(&head(o, j))).collect_view())
            })}
        }
        .into_any()
    }
}
