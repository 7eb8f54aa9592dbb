//! Demo `sliding-window` (chapter "efficient"): one layer's window mask, and how far a query
//! reaches through stacked layers.

use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::window::{first_layer, reachable, receptive_field, window_mask};

pub const WORDS: [&str; 32] = [
    "the", "keeper", "climbed", "the", "tower", "at", "dusk", "and", "lit", "the", "lamp", "so", "that", "ships",
    "far", "out", "on", "the", "dark", "sea", "could", "see", "the", "rocks", "and", "turn", "away", "before", "the",
    "storm", "came", "in",
];

crate::params! {
    pub struct Params {
        n: usize = Param::int("n", "Tokens", 4, 32, 16),
        window: usize = Param::int("window", "Window w", 1, 16, 4),
        layers: usize = Param::int("layers", "Layers stacked", 1, 8, 2),
        /// 0-based, like every position in the book
        query: usize = Param::int("query", "Query position", 0, 31, 15),
    }
}

pub struct SlidingWindowDemo;

impl Demo for SlidingWindowDemo {
    const ID: &'static str = "sliding-window";
    const TITLE: &'static str = "A sliding window, layer on layer";
    const CAPTION: &'static str =
        "The first matrix is one layer's mask: each query sees itself and the w − 1 tokens before it. The \
        second shows what has reached each position after the stacked layers. Below them, the chosen query's \
        tokens, numbered by the layer at which each first reaches it.";
    type Params = Params;
    type Output = SlidingWindow;

    fn compute(p: &Params) -> SlidingWindow {
        compute(p.n.max(1), p.window.max(1), p.layers.max(1), p.query)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<SlidingWindowDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlidingWindow {
    pub tokens: Vec<&'static str>,
    pub window: usize,
    pub layers: usize,
    /// 0-based, within the tokens.
    pub query: usize,
    /// One layer: 1 where query i may attend to key j.
    pub mask: Vec<Vec<f64>>,
    /// After `layers` layers: 1 where information from j has reached i.
    pub reach: Vec<Vec<f64>>,
    /// For the chosen query, the first layer at which each position reaches it (None: never).
    pub first_layer: Vec<Option<usize>>,
    /// L·(w − 1) + 1 and how many of the tokens that is here.
    pub receptive_field: usize,
    pub reached: usize,
}

pub fn compute(n: usize, w: usize, layers: usize, query: usize) -> SlidingWindow {
    let n = n.clamp(1, WORDS.len());
    let query = query.min(n - 1); // 0-based, like every position in the book
    let ones = |m: ndarray::Array2<bool>| {
        m.rows().into_iter().map(|r| r.iter().map(|&b| f64::from(u8::from(b))).collect()).collect()
    };
    let reach = reachable(n, w, layers);
    let reached = reach.row(query).iter().filter(|&&b| b).count();
    SlidingWindow {
        tokens: WORDS[..n].to_vec(),
        window: w,
        layers,
        query,
        mask: ones(window_mask(n, w)),
        reach: ones(reach),
        first_layer: (0..n).map(|j| first_layer(query, j, w).filter(|&l| l <= layers)).collect(),
        receptive_field: receptive_field(w, layers),
        reached,
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `sliding-window`: the one-layer mask and the reach after stacked layers as
    //! matrices, and the chosen query's tokens labelled by the layer that first brings them.

    use leptos::prelude::*;

    use super::{SlidingWindow, SlidingWindowDemo};
    use crate::kit::matrix_canvas::{mat_table, Mat, MatrixGrid};
    use crate::kit::DemoCtx;

    fn mats(s: &SlidingWindow) -> (Mat, Mat) {
        let layers = if s.layers == 1 { "1 layer".to_string() } else { format!("{} layers", s.layers) };
        (
            Mat::new(format!("one layer's mask (w = {})", s.window), s.mask.clone(), true).labels(&s.tokens, &s.tokens),
            Mat::new(format!("reached after {layers}"), s.reach.clone(), true).labels(&s.tokens, &s.tokens),
        )
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<SlidingWindowDemo>(ctx);
        let grid = Signal::derive(move || {
            out.with(|o| {
                let (a, b) = mats(o);
                vec![a, b]
            })
        });
        let readout = move || {
            out.with(|o| {
                let field = o.receptive_field;
                format!(
                    "Query {} (\"{}\") hears from {} token{} after {} layer{}: L·(w − 1) + 1 = {}·{} + 1 = {}{}.",
                    o.query,
                    o.tokens[o.query],
                    o.reached,
                    if o.reached == 1 { "" } else { "s" },
                    o.layers,
                    if o.layers == 1 { "" } else { "s" },
                    o.layers,
                    o.window.saturating_sub(1),
                    field,
                    if field > o.query + 1 {
                        format!(", cut to the {} tokens it has before it", o.query + 1)
                    } else {
                        String::new()
                    },
                )
            })
        };
        let strip = move || {
            out.with(|o| {
                o.tokens
                    .iter()
                    .zip(&o.first_layer)
                    .enumerate()
                    .map(|(j, (t, l))| {
                        let class = match (j == o.query, l) {
                            (true, _) => "tok query",
                            (false, Some(_)) => "tok reached",
                            (false, None) => "tok",
                        };
                        let title = match l {
                            Some(l) if j == o.query => format!("the query itself (layer {l})"),
                            Some(l) => format!("reaches the query at layer {l}"),
                            None if j > o.query => "after the query: never seen (causal)".to_string(),
                            None => "out of reach at this depth".to_string(),
                        };
                        let layer = l.map(|l| l.to_string()).unwrap_or_default();
                        let label = format!("{t}: {title}");
                        view! {
                            <span class=class title=title aria-label=label>{t.to_string()}<small>{layer}</small></span>
                        }
                    })
                    .collect_view()
            })
        };
        let key = "Rows are queries, columns are keys. Yellow (1): in the mask, the query may attend to the key; in \
            the second matrix, information from the key has reached the query. Dark (0): it may not, or has not.";
        let strip_label = "The query's tokens, each numbered by the layer at which it first reaches the query";
        let numbers = move || {
            out.with(|o| {
                let (a, b) = mats(o);
                view! { {mat_table(&a)} {mat_table(&b)} }
            })
        };
        view! {
            <MatrixGrid ctx=ctx mats=grid/>
            <p class="muted">{key}</p>
            <p class="readout" role="status">{readout}</p>
            <div class="token-strip" aria-label=strip_label>{strip}</div>
            {move || ctx.show_numbers.get().then(numbers)}
        }
        .into_any()
    }
}
