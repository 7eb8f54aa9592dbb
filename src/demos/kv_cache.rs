//! Demo `kv-cache` (chapter "efficient"): how much memory a model's KV cache takes, from its
//! shape, and how grouped-query and multi-query attention shrink it.

use super::DemoSpec;
use crate::numerics::kv_cache::{KvShape, MODELS};
use crate::state::{Param, Values};

pub static PRECISION: &[(&str, &str)] = &[("4", "32-bit float"), ("2", "16-bit float"), ("1", "8-bit integer")];

pub static PARAMS: &[Param] = &[
    Param::int("layers", "Layers", 1, 128, 32),
    Param::int("heads", "Query heads", 1, 128, 32),
    Param::int("kv-heads", "Key-value heads (= query heads: MHA; 1: MQA)", 1, 128, 8),
    Param::int("head-size", "Head size", 16, 256, 128),
    Param::int("context", "Positions cached", 1, 131072, 8192),
    Param::int("batch", "Sequences in the batch", 1, 256, 1),
    Param::choice("precision", "Values stored as", PRECISION, 1),
];

/// The shape the controls describe (KV heads at most the query heads).
pub fn shape(v: &Values) -> KvShape {
    let heads = v.int("heads").max(1) as usize;
    KvShape {
        layers: v.int("layers").max(1) as usize,
        heads,
        kv_heads: (v.int("kv-heads").max(1) as usize).min(heads),
        head_size: v.int("head-size").max(1) as usize,
        positions: v.int("context").max(1) as usize,
        batch: v.int("batch").max(1) as usize,
        bytes_per_value: v.text("precision").parse().unwrap_or(2),
    }
}

/// The same model with every query head keeping its own keys (MHA), with the chosen groups
/// (GQA) and with one shared key-value head (MQA).
pub fn variants(s: &KvShape) -> [(&'static str, KvShape); 3] {
    [("MHA", KvShape { kv_heads: s.heads, ..*s }), ("chosen", *s), ("MQA", KvShape { kv_heads: 1, ..*s })]
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    let s = shape(v);
    let vars: Vec<_> = variants(&s)
        .iter()
        .map(|(name, x)| serde_json::json!({ "variant": name, "kv_heads": x.kv_heads, "bytes": x.bytes() }))
        .collect();
    let models: Vec<_> = MODELS
        .iter()
        .map(|m| serde_json::json!({ "model": m.name, "shape": m.shape(), "bytes": m.shape().bytes() }))
        .collect();
    Ok(
        serde_json::json!({ "shape": s, "bytes_per_token": s.bytes_per_token(), "bytes": s.bytes(), "variants": vars, "models": models }),
    )
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "kv-cache",
    title: "How big is the KV cache?",
    caption: "The memory that keys and values of every past position take during generation, from the model's shape. Fewer key-value heads (grouped-query or multi-query attention) shrink it in proportion.",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: crate::ui::views::kv_cache::view,
};
