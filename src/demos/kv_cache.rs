//! Demo `kv-cache` (chapter "efficient"): how much memory a model's KV cache takes, from its
//! shape, and how grouped-query and multi-query attention shrink it.

use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::session::protocol::{CacheInfo, Query};
use crate::numerics::kv_cache::{KvShape, MODELS};

crate::options! {
    /// The bundled models whose cache the page measures (the URL value is the model's folder).
    pub enum RealModel {
        StoriesLlama = ("stories-llama", "Pet stories, Llama family (4 query heads share 2 KV heads)"),
        Stories = ("stories", "Pet stories, GPT-2 (4 heads, each its own keys and values)"),
        Smollm2 = ("smollm2", "SmolLM2-135M, 9 query heads share 3 KV heads (once loaded in “A real model, live”)"),
    }
}

/// The text the measured model reads (the kind both bundled models were trained on).
pub const TEXT: &str = "Tom has a little dog named Max. Max likes to run in the park. One day Max saw a cat in a tree.";

pub static PRECISION: &[(&str, &str)] = &[("4", "32-bit float"), ("2", "16-bit float"), ("1", "8-bit integer")];

crate::params! {
    pub struct Params {
        layers: usize = Param::int("layers", "Layers", 1, 128, 32),
        heads: usize = Param::int("heads", "Query heads", 1, 128, 32),
        kv_heads: usize = Param::int("kv-heads", "Key-value heads (= query heads: MHA; 1: MQA)", 1, 128, 8),
        head_size: usize = Param::int("head-size", "Head size", 16, 256, 128),
        context: usize = Param::int("context", "Positions cached", 1, 131072, 8192),
        batch: usize = Param::int("batch", "Sequences in the batch", 1, 256, 1),
        /// bytes per stored value
        precision: usize = Param::choice("precision", "Values stored as", PRECISION, 1),
        /// the bundled model whose real cache the page measures
        model: RealModel = Param::choice("model", "Real model measured in this page", RealModel::OPTIONS, 0),
    }
}

pub struct KvCacheDemo;

impl Demo for KvCacheDemo {
    const ID: &'static str = "kv-cache";
    const TITLE: &'static str = "How big is the KV cache?";
    const CAPTION: &'static str = "The memory that keys and values of every past position take during generation, \
        from the model's shape. Fewer key-value heads (grouped-query or multi-query attention) shrink it in \
        proportion.";
    type Params = Params;
    const MAIN: &'static [&'static str] = &["context", "kv-heads", "batch", "precision"];
    /// The chosen shape and its size, the three variants, and the real models' caches.
    type Output = serde_json::Value;
    /// No "Show numbers": its numbers are always shown in the readout and the table of real models.
    const NUMBERS: bool = false;

    fn compute(p: &Params) -> serde_json::Value {
        let s = match shape(p) {
            Ok(s) => s,
            Err(why) => return serde_json::json!({ "refused": why }),
        };
        let vars: Vec<_> = variants(&s)
            .iter()
            .map(|(name, x)| serde_json::json!({ "variant": name, "kv_heads": x.kv_heads, "bytes": x.bytes() }))
            .collect();
        let models: Vec<_> = MODELS
            .iter()
            .map(|m| serde_json::json!({ "model": m.name, "shape": m.shape(), "bytes": m.shape().bytes() }))
            .collect();
        serde_json::json!({
            "shape": s,
            "bytes_per_token": s.bytes_per_token(),
            "bytes": s.bytes(),
            "variants": vars,
            "models": models,
        })
    }

    /// The calculator's numbers and the real model's cache, measured by the worker's session on
    /// the model files (in the page, by the same session in the worker).
    #[cfg(not(target_arch = "wasm32"))]
    fn load(p: &Params, read: &mut super::Reader) -> Option<Result<serde_json::Value, String>> {
        if p.model == RealModel::Smollm2 {
            return None; // read from the browser's cache only
        }
        let mut run = || {
            let session = super::bundled_session(p.model.key(), read)?;
            let (a, _) = super::now(session.analyze(&query()))?.map_err(|e| e.to_string())?;
            let mut out = Self::compute(p);
            out["measured"] = super::to_json(&measured(p.model, a.n_head, &a.cache))?;
            Ok(out)
        };
        Some(run())
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<KvCacheDemo>();

/// What the page asks the measured model: the text, nothing sampled.
pub fn query() -> Query {
    Query { prompt: TEXT.into(), top: 1, top_p: 1.0, ..Default::default() }
}

/// A real model's cache after [`TEXT`]: as the engine stored it, by the formula, and with one
/// key-value head per query head.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    pub model: &'static str,
    pub heads: usize,
    pub cache: CacheInfo,
    /// The formula's bytes for the model's shape and the positions cached.
    pub formula: u64,
    /// The same model with a key-value head per query head (multi-head attention).
    pub one_per_head: u64,
    /// one_per_head ÷ measured: heads ÷ KV heads when the formula holds.
    pub saving: f64,
}

pub fn measured(model: RealModel, heads: usize, c: &CacheInfo) -> Measured {
    let shape = KvShape {
        layers: c.layers,
        heads,
        kv_heads: c.kv_heads,
        head_size: c.head_size,
        positions: c.positions,
        batch: 1,
        bytes_per_value: c.bytes_per_value,
    };
    let one_per_head = KvShape { kv_heads: heads, ..shape }.bytes();
    Measured {
        model: model.key(),
        heads,
        cache: *c,
        formula: shape.bytes(),
        one_per_head,
        saving: if c.bytes > 0 { one_per_head as f64 / c.bytes as f64 } else { 0.0 },
    }
}

/// The shape the controls describe, or why no model has it: the query heads are split into
/// groups of equal size, one group per key-value head, so the key-value heads must divide the
/// query heads (and so be at most as many).
pub fn shape(p: &Params) -> Result<KvShape, String> {
    let (heads, kv_heads) = (p.heads.max(1), p.kv_heads.max(1));
    if kv_heads > heads {
        return Err(format!(
            "{kv_heads} key-value heads for {heads} query heads: a model has at most one key-value head per query \
             head"
        ));
    }
    if !heads.is_multiple_of(kv_heads) {
        let divisors: Vec<String> = (1..=heads).filter(|k| heads.is_multiple_of(*k)).map(|k| k.to_string()).collect();
        return Err(format!(
            "{heads} query heads cannot be shared out evenly among {kv_heads} key-value heads: each key-value head \
             serves a group of the same size, so the key-value heads must divide the query heads ({heads} has the \
             divisors {})",
            divisors.join(", ")
        ));
    }
    Ok(KvShape {
        layers: p.layers.max(1),
        heads,
        kv_heads,
        head_size: p.head_size.max(1),
        positions: p.context.max(1),
        batch: p.batch.max(1),
        bytes_per_value: p.precision,
    })
}

/// The same model with every query head keeping its own keys (MHA), with the chosen groups
/// (GQA) and with one shared key-value head (MQA).
pub fn variants(s: &KvShape) -> [(&'static str, KvShape); 3] {
    [("MHA", KvShape { kv_heads: s.heads, ..*s }), ("chosen", *s), ("MQA", KvShape { kv_heads: 1, ..*s })]
}

/// The readout of a real model's cache: measured, by the formula, and with a KV head per query head.
pub fn measured_text(m: &Measured, label: &str) -> String {
    let c = &m.cache;
    let agrees = if m.formula == c.bytes { "exactly the formula" } else { "NOT the formula" };
    let group = if m.heads == c.kv_heads {
        "Each query head has its own key-value head, as in GPT-2.".to_string()
    } else {
        format!(
            "With a key-value head for each of its {} query heads it would hold {} bytes: {}× more.",
            m.heads,
            crate::numerics::format::grouped(m.one_per_head),
            crate::numerics::format::num(m.saving)
        )
    };
    format!(
        "Measured in this page: {label} read {} tokens, and its cache holds {} bytes of keys and values, \
         2 × {} layers × {} KV heads × {} × {} positions × {} bytes: {agrees} ({} by the formula). {group}",
        c.positions,
        crate::numerics::format::grouped(c.bytes),
        c.layers,
        c.kv_heads,
        c.head_size,
        c.positions,
        c.bytes_per_value,
        crate::numerics::format::grouped(m.formula),
    )
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `kv-cache`: the cache size for the controls' shape, bars for MHA, the chosen
    //! grouping and MQA, and a table of real models computed by the same formula.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;

    use super::{measured, measured_text, query, shape, variants, Params};
    use crate::session::protocol::{Analysis, Request};
    use crate::kit::plot::bars::{draw_bars, Bars};
    use crate::kit::probe::probe;
    use crate::kit::worker::Event;
    use crate::kit::DemoCtx;
    use crate::numerics::kv_cache::MODELS;

    /// The real model's cache, measured by the worker's session after it read the text.
    fn real(ctx: DemoCtx, params: Memo<Params>) -> impl IntoView {
        let model = Memo::new(move |_| params.with(|p| p.model));
        let ask = move || {
            let model = model.get();
            crate::demos::ask_model(model.key(), model.label(), vec![Request::Analyze(query())])
        };
        let probe = probe(ctx, ask, |ev| match ev {
            Event::Analysis(a, _) => Some((a.id, a)),
            _ => None,
        });
        let out = Memo::new(move |_| {
            let first = |a: &Option<Vec<Analysis>>| a.as_ref().and_then(|v| v.first().cloned());
            probe.answers.with(first).map(|a| measured(model.get(), a.n_head, &a.cache))
        });
        // "Download data" adds the measurement.
        Effect::new(move |_| ctx.computed.set(out.get().and_then(|m| serde_json::to_value(&m).ok())));
        let text = move || {
            let m = model.get();
            if let Some(wait) = probe.waiting(ctx, m.key()) {
                return wait;
            }
            out.with(|out| {
                let out = out.as_ref()?;
                let label = match m {
                    super::RealModel::StoriesLlama => "the Llama-family model",
                    super::RealModel::Stories => "the GPT-2 model",
                    super::RealModel::Smollm2 => "SmolLM2-135M",
                };
                Some(measured_text(out, label))
            })
            .unwrap_or_default()
        };
        view! { <p class="readout kv-measured" role="status">{text}</p> }
    }

    /// Bytes in binary units (the way memory is sold): 2 GiB, 512 KiB.
    pub fn size(bytes: u64) -> String {
        let b = bytes as f64;
        match b {
            b if b >= (1u64 << 30) as f64 => format!("{:.2} GiB", Signed(b / (1u64 << 30) as f64)),
            b if b >= (1u64 << 20) as f64 => format!("{:.1} MiB", Signed(b / (1u64 << 20) as f64)),
            b if b >= 1024.0 => format!("{:.1} KiB", Signed(b / 1024.0)),
            b => format!("{b:.0} B", b = Signed(b)),
        }
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let params = ctx.params::<Params>();
        // The key-value heads' slider ends at the query heads.
        let id = <super::KvCacheDemo as crate::demos::Demo>::ID;
        let limits = move || params.with(|p| vec![("kv-heads", p.heads.max(1) as i64)]);
        ctx.limit_ints(id, limits, DemoCtx::settings_limit);
        let s = Memo::new(move |_| params.with(shape));
        let canvas = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| {
            let c = canvas.get()?;
            let pal = *pal;
            // An impossible model draws nothing: the readout says why.
            let Ok(s) = s.get() else { return Some(Ok(())) };
            let vars = variants(&s);
            // Short labels: three fit under the bars on a phone.
            let cats: Vec<String> = vars.iter().map(|(n, x)| format!("{n} ({})", x.kv_heads)).collect();
            let gib: Vec<f64> = vars.iter().map(|(_, x)| x.bytes() as f64 / (1u64 << 30) as f64).collect();
            Some(draw_bars(
                &c,
                &pal,
                &Bars {
                    categories: &cats,
                    series: &[("KV cache", pal.blue, &gib)],
                    x_desc: "variant (key-value heads)",
                    y_desc: "GiB",
                    y_max: None,
                },
            ))
        });
        let refused = move || s.with(|s| s.is_err());
        let readout = move || {
            let x = match s.get() {
                Ok(x) => x,
                Err(why) => return format!("No model has this shape: {why}."),
            };
            format!(
                "2 × {} layers × {} KV heads × {} × {} positions × {} sequence{} × {} bytes = {} ({} per token). \
                 Each key-value head serves {} query head{}.",
                x.layers,
                x.kv_heads,
                x.head_size,
                x.positions,
                x.batch,
                if x.batch == 1 { "" } else { "s" },
                x.bytes_per_value,
                size(x.bytes()),
                size(x.bytes_per_token()),
                x.heads / x.kv_heads,
                if x.heads / x.kv_heads == 1 { "" } else { "s" },
            )
        };
        let table = crate::kit::number_table(
            "Real models: one full-context sequence, 16-bit values".into(),
            ["model", "layers", "KV heads × head size", "positions", "per token", "cache"].map(String::from).to_vec(),
            MODELS
                .iter()
                .map(|m| {
                    let x = m.shape();
                    vec![
                        m.name.into(),
                        x.layers.to_string(),
                        format!("{} × {}", x.kv_heads, x.head_size),
                        x.positions.to_string(),
                        size(x.bytes_per_token()),
                        size(x.bytes()),
                    ]
                })
                .collect(),
        );
        let label = "KV cache size with one key-value head per query head, with the chosen number, and with one";
        view! {
            <p class="readout kv-readout" class:notice=refused role=move || if refused() { "alert" } else { "status" }>
                {readout}
            </p>
            <canvas node_ref=canvas class="plot" role="img" aria-label=label hidden=refused></canvas>
            {table}
            {real(ctx, params)}
        }
        .into_any()
    }
}
