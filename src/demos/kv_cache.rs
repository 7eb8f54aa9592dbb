//! Demo `kv-cache` (chapter "efficient"): how much memory a model's KV cache takes, from its
//! shape, and how grouped-query and multi-query attention shrink it.

use super::{spec, Demo, DemoSpec};
use crate::numerics::kv_cache::{KvShape, MODELS};

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
    /// The chosen shape and its size, the three variants, and the real models' caches.
    type Output = serde_json::Value;

    fn compute(p: &Params) -> serde_json::Value {
        let s = shape(p);
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

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<KvCacheDemo>();

/// The shape the controls describe (KV heads at most the query heads).
pub fn shape(p: &Params) -> KvShape {
    let heads = p.heads.max(1);
    KvShape {
        layers: p.layers.max(1),
        heads,
        kv_heads: p.kv_heads.max(1).min(heads),
        head_size: p.head_size.max(1),
        positions: p.context.max(1),
        batch: p.batch.max(1),
        bytes_per_value: p.precision,
    }
}

/// The same model with every query head keeping its own keys (MHA), with the chosen groups
/// (GQA) and with one shared key-value head (MQA).
pub fn variants(s: &KvShape) -> [(&'static str, KvShape); 3] {
    [("MHA", KvShape { kv_heads: s.heads, ..*s }), ("chosen", *s), ("MQA", KvShape { kv_heads: 1, ..*s })]
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `kv-cache`: the cache size for the controls' shape, bars for MHA, the chosen
    //! grouping and MQA, and a table of real models computed by the same formula.

    use leptos::html::Canvas;
    use leptos::prelude::*;

    use super::{shape, variants, Params};
    use crate::kit::plot::bars::{draw_bars, Bars};
    use crate::kit::DemoCtx;
    use crate::numerics::kv_cache::MODELS;

    /// Bytes in binary units (the way memory is sold): 2 GiB, 512 KiB.
    pub fn size(bytes: u64) -> String {
        let b = bytes as f64;
        match b {
            b if b >= (1u64 << 30) as f64 => format!("{:.2} GiB", b / (1u64 << 30) as f64),
            b if b >= (1u64 << 20) as f64 => format!("{:.1} MiB", b / (1u64 << 20) as f64),
            b if b >= 1024.0 => format!("{:.1} KiB", b / 1024.0),
            b => format!("{b:.0} B"),
        }
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let params = ctx.params::<Params>();
        let s = Memo::new(move |_| params.with(shape));
        let canvas = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| {
            let c = canvas.get()?;
            let pal = *pal;
            let vars = variants(&s.get());
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
        let readout = move || {
            let x = s.get();
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
                x.heads.div_ceil(x.kv_heads),
                if x.heads.div_ceil(x.kv_heads) == 1 { "" } else { "s" },
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
            <p class="readout kv-readout" role="status">{readout}</p>
            <canvas node_ref=canvas class="plot" role="img" aria-label=label></canvas>
            {table}
        }
        .into_any()
    }
}
