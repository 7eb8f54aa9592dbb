//! View of `kv-cache`: the cache size for the controls' shape, bars for MHA, the chosen
//! grouping and MQA, and a table of real models computed by the same formula.

use leptos::html::Canvas;
use leptos::prelude::*;

use crate::demos::kv_cache::{shape, variants};
use crate::numerics::kv_cache::MODELS;
use crate::ui::demo_frame::DemoCtx;
use crate::ui::plot::bars::{draw_bars, Bars};

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
    let s = Memo::new(move |_| ctx.values.with(shape));
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
            "2 × {} layers × {} KV heads × {} × {} positions × {} sequence{} × {} bytes = {} ({} per token). Each key-value head serves {} query head{}.",
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
    let table = super::number_table(
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
    view! {
        <p class="readout kv-readout" role="status">{readout}</p>
        <canvas node_ref=canvas class="plot" role="img" aria-label="KV cache size with one key-value head per query head, with the chosen number, and with one"></canvas>
        {table}
    }
    .into_any()
}
