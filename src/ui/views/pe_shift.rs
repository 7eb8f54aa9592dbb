//! View of `pe-shift`: one circle per frequency pair, the position p and p + k on it.

use leptos::html::Canvas;
use leptos::prelude::*;

use crate::demos::pe_shift::{from_values, PeShift};
use crate::ui::demo_frame::DemoCtx;
use crate::ui::plot::fit_canvas_with;
use crate::ui::plot::heatmap::context;
use crate::ui::theme::Palette;

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(from_values));
    let canvas = NodeRef::<Canvas>::new();
    ctx.paint(move |pal| canvas.get().map(|c| out.with(|o| draw(&c, pal, o))));
    view! {
        <canvas node_ref=canvas class="plot" role="img" aria-label="One circle per frequency pair showing the rotation from position p to p + k"></canvas>
        <p class="readout">{move || out.with(|o| format!(
            "Largest difference between PE(p + k) and PE(p) rotated pair by pair: {}, zero up to rounding, for p = {} and k = {}.",
            crate::numerics::format::num(o.max_error), o.p, o.k
        ))}</p>
        {move || ctx.show_numbers.get().then(|| out.with(|o| super::number_table(
            "Per frequency pair".into(),
            vec!["pair i".into(), "ωᵢ".into(), "angle ωᵢp (rad)".into(), "rotation ωᵢk (rad)".into()],
            (0..o.omega.len()).map(|i| vec![i.to_string(), format!("{:.6}", o.omega[i]), format!("{:.4}", o.angle_p[i]), format!("{:.4}", o.rotation[i])]).collect(),
        )))}
    }
    .into_any()
}

fn draw(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &PeShift) -> Result<(), String> {
    let pairs = o.omega.len();
    // At least 125 CSS px per circle (four to a row on a laptop, two on a phone), so the labels
    // under the circles do not run together; the legend has a band of its own above them.
    const LEGEND: f64 = 22.0;
    let cols_for = |css_w: f64| ((css_w / 125.0) as usize).clamp(1, 4).min(pairs.max(1));
    let f = fit_canvas_with(canvas, |w| {
        let cols = cols_for(w);
        LEGEND + (w / cols as f64) * pairs.div_ceil(cols) as f64 + 8.0
    });
    let cols = cols_for(f.w as f64 / f.scale);
    let ctx = context(canvas)?;
    let rgb = crate::ui::plot::interned::rgb; // palette colours: interned by DemoCtx::paint
    ctx.set_fill_style_str(&rgb(pal.bg));
    ctx.fill_rect(0.0, 0.0, f.w as f64, f.h as f64);
    let cell = f.w as f64 / cols as f64;
    let s = f.scale;
    let r = cell * 0.3;
    ctx.set_font(&crate::ui::plot::interned::font(format!("{}px sans-serif", (11.0 * s).round())));
    ctx.set_text_align("center");
    for i in 0..pairs {
        let (cx, cy) = (cell * ((i % cols) as f64 + 0.5), LEGEND * s + cell * ((i / cols) as f64 + 0.45));
        ctx.set_stroke_style_str(&rgb(pal.grid));
        ctx.set_line_width(1.5 * s);
        ctx.begin_path();
        let _ = ctx.arc(cx, cy, r, 0.0, std::f64::consts::TAU);
        ctx.stroke();
        // The pair (sin a, cos a), as the chapter defines it, first coordinate across and second
        // up (canvas y grows downwards).
        let at = |a: f64| (cx + r * a.sin(), cy - r * a.cos());
        let (a0, a1) = (o.angle_p[i], o.angle_p[i] + o.rotation[i]);
        for (a, colour) in [(a0, pal.blue), (a1, pal.orange)] {
            let (x, y) = at(a);
            ctx.set_stroke_style_str(&rgb(colour));
            ctx.set_line_width(2.0 * s);
            ctx.begin_path();
            ctx.move_to(cx, cy);
            ctx.line_to(x, y);
            ctx.stroke();
            ctx.set_fill_style_str(&rgb(colour));
            ctx.begin_path();
            let _ = ctx.arc(x, y, 4.0 * s, 0.0, std::f64::consts::TAU);
            ctx.fill();
        }
        ctx.set_fill_style_str(&rgb(pal.fg));
        let _ = ctx.fill_text(&format!("pair {i}: ωk = {:.3}", o.rotation[i]), cx, cy + r + 16.0 * s);
    }
    ctx.set_text_align("left");
    ctx.set_fill_style_str(&rgb(pal.blue));
    let _ = ctx.fill_text("● position p", 6.0 * s, 14.0 * s);
    ctx.set_fill_style_str(&rgb(pal.orange));
    let _ = ctx.fill_text("● position p + k", 90.0 * s, 14.0 * s);
    Ok(())
}
