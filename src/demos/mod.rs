//! The demo registry: every live demo is registered here once, with its id (the key of its
//! state in the URL and of `{{demo: id}}` in the chapters), title, caption, parameters and a
//! DOM-free function computing the numbers it shows. On wasm each spec also carries its view.
//! `tests/registry.rs` walks this list.

pub mod alignment;
pub mod attention_cost;
pub mod bank;
pub mod bottleneck;
pub mod causal;
pub mod collapse;
pub mod flash_steps;
pub mod gauss_dot;
pub mod gpt2;
pub mod kernels;
pub mod kv_cache;
pub mod linformer;
pub mod lookup;
pub mod multi_head;
pub mod nadaraya_watson;
pub mod padding;
pub mod pe_shift;
pub mod rnn_problems;
pub mod rope;
pub mod scaling;
pub mod scorers;
pub mod self_attention;
pub mod sinusoidal;
pub mod sliding_window;
pub mod two_heads;
pub mod wpe;

use crate::state::{Param, Values};

pub struct DemoSpec {
    /// URL key prefix and directive name: lower-case letters, digits and dashes.
    pub id: &'static str,
    pub title: &'static str,
    /// One or two sentences shown under the demo (hidden in an embed with `caption=0`).
    pub caption: &'static str,
    pub params: &'static [Param],
    /// The demo's computed outputs for given inputs, as "Download data" writes them.
    pub data: fn(&Values) -> Result<serde_json::Value, String>,
    /// Draws the demo (wasm only).
    #[cfg(target_arch = "wasm32")]
    pub view: fn(crate::kit::DemoCtx) -> leptos::prelude::AnyView,
}

pub static DEMOS: &[&DemoSpec] = &[
    &rnn_problems::SPEC,
    &alignment::SPEC,
    &bottleneck::SPEC,
    &lookup::SPEC,
    &kernels::SPEC,
    &nadaraya_watson::SPEC,
    &gauss_dot::SPEC,
    &scaling::SPEC,
    &scorers::SPEC,
    &padding::SPEC,
    &causal::SPEC,
    &self_attention::SPEC,
    &bank::SPEC,
    &multi_head::SPEC,
    &two_heads::SPEC,
    &sinusoidal::SPEC,
    &pe_shift::SPEC,
    &rope::SPEC,
    &wpe::SPEC,
    &collapse::SPEC,
    &gpt2::SPEC,
    &attention_cost::SPEC,
    &sliding_window::SPEC,
    &flash_steps::SPEC,
    &linformer::SPEC,
    &kv_cache::SPEC,
];

pub fn find(id: &str) -> Option<&'static DemoSpec> {
    DEMOS.iter().copied().find(|d| d.id == id)
}

/// Serialises a demo's output for "Download data".
pub fn to_json<T: serde::Serialize>(out: &T) -> Result<serde_json::Value, String> {
    serde_json::to_value(out).map_err(|e| e.to_string())
}
