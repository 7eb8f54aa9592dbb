//! View of `rope`: the score for every (m, n), with the chosen pair marked.

use leptos::html::Canvas;
use leptos::prelude::*;

use crate::demos::rope::{from_values, N};
use crate::ui::demo_frame::DemoCtx;
use crate::ui::plot::heatmap::{context, draw_heatmap, HeatmapSpec};
use crate::ui::plot::{area, fit_canvas};

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(from_values));
    let canvas = NodeRef::<Canvas>::new();
    ctx.paint(move |pal| {
        let c = canvas.get()?;
        let pal = *pal;
        Some(out.with(|o| {
            let f = fit_canvas(&c, 0.8, 260.0, 480.0);
            let root = area(&c, &pal)?;
            let lo = o.scores.iter().flatten().copied().fold(f64::INFINITY, f64::min);
            let hi = o.scores.iter().flatten().copied().fold(f64::NEG_INFINITY, f64::max);
            // m = 0 at the top: the query position reads downwards, like a matrix
            let value = |r: usize, col: usize| o.scores[r][col];
            let rect = draw_heatmap(
                &c,
                &root,
                &f,
                &pal,
                &HeatmapSpec {
                    rows: N,
                    cols: N,
                    value: &value,
                    vmin: lo,
                    vmax: hi,
                    x_range: (0.0, N as f64),
                    y_range: (0.0, N as f64),
                    rows_down: true,
                    x_integer: true,
                    x_desc: "key position n",
                    y_desc: "query position m",
                    bar_label: "score",
                },
            )?;
            // mark the chosen (m, n)
            let g = context(&c)?;
            let (cw, ch) = (rect.w / N as f64, rect.h / N as f64);
            g.set_stroke_style_str(&crate::ui::plot::interned::rgb(pal.orange));
            g.set_line_width(2.5 * f.scale);
            g.stroke_rect(rect.x + o.n as f64 * cw, rect.y + o.m as f64 * ch, cw, ch);
            Ok(())
        }))
    });
    view! {
        <canvas node_ref=canvas class="plot" role="img" aria-label="Heatmap of the attention score for every query and key position"></canvas>
        <p class="readout">{move || out.with(|o| format!(
            "score(m = {}, n = {}) = {}, offset m − n = {}. Largest change along any diagonal: {}{}",
            o.m, o.n, crate::numerics::format::num(o.score), o.m as i64 - o.n as i64, crate::numerics::format::num(o.diagonal_gap),
            if o.diagonal_gap < 1e-9 { " (only the offset matters)." } else { " (the absolute positions matter too)." }
        ))}</p>
    }
    .into_any()
}
