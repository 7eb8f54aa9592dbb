//! Demo `pe-shift`: PE(p + k) is PE(p) rotated pair by pair by angles that depend on k only.

use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::positional::{frequency, shift_error};

pub static DIMS: &[(&str, &str)] = &[("4", "4"), ("8", "8"), ("16", "16"), ("32", "32")];
pub const BASE: f64 = 10000.0;

crate::params! {
    pub struct Params {
        p: i64 = Param::int("p", "Position p", 0, 200, 10),
        k: i64 = Param::int("k", "Offset k", -50, 50, 5),
        d: usize = Param::choice("d", "Dimensions d", DIMS, 1),
    }
}

pub struct PeShiftDemo;

impl Demo for PeShiftDemo {
    const ID: &'static str = "pe-shift";
    const TITLE: &'static str = "Shifting a position is a rotation";
    const CAPTION: &'static str =
        "One circle per frequency pair, its first coordinate across and its second up: the blue dot is pair i \
        at position p, (sin ωᵢp, cos ωᵢp), and the orange dot the same pair at p + k. Every pair turns by ωᵢk, \
        whatever p is.";
    type Params = Params;
    type Output = PeShift;

    fn compute(p: &Params) -> PeShift {
        compute(p.p, p.k, p.d)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<PeShiftDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeShift {
    pub p: i64,
    pub k: i64,
    /// Per pair i: ω_i, the angle ω_i p, and the rotation angle ω_i k.
    pub omega: Vec<f64>,
    pub angle_p: Vec<f64>,
    pub rotation: Vec<f64>,
    /// max |PE(p + k) − R(k) PE(p)|
    pub max_error: f64,
}

pub fn compute(p: i64, k: i64, d: usize) -> PeShift {
    let omega: Vec<f64> = (0..d / 2).map(|i| frequency(i, d, BASE)).collect();
    PeShift {
        p,
        k,
        angle_p: omega.iter().map(|w| w * p as f64).collect(),
        rotation: omega.iter().map(|w| w * k as f64).collect(),
        max_error: shift_error(p as f64, k as f64, d, BASE),
        omega,
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `pe-shift`: one circle per frequency pair, the position p and p + k on it.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;

    use super::{PeShift, PeShiftDemo};
    use crate::kit::plot::fit_canvas_with;
    use crate::kit::plot::heatmap::context;
    use crate::kit::theme::Palette;
    use crate::kit::DemoCtx;

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<PeShiftDemo>(ctx);
        let canvas = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| canvas.get().map(|c| out.with(|o| draw(&c, pal, o))));
        let label = "One circle per frequency pair showing the rotation from position p to p + k";
        let readout = move || {
            out.with(|o| {
                format!(
                    "Largest difference between PE(p + k) and PE(p) rotated pair by pair: {}, zero up to rounding, \
                     for p = {} and k = {}.",
                    crate::numerics::format::num(o.max_error),
                    o.p,
                    o.k
                )
            })
        };
        let numbers = move || {
            out.with(|o| {
                crate::kit::number_table(
                    "Per frequency pair".into(),
                    vec!["pair i".into(), "ωᵢ".into(), "angle ωᵢp (rad)".into(), "rotation ωᵢk (rad)".into()],
                    (0..o.omega.len())
                        .map(|i| {
                            vec![
                                i.to_string(),
                                format!("{:.6}", Signed(o.omega[i])),
                                format!("{:.4}", Signed(o.angle_p[i])),
                                format!("{:.4}", Signed(o.rotation[i])),
                            ]
                        })
                        .collect(),
                )
            })
        };
        view! {
            <canvas node_ref=canvas class="plot" role="img" aria-label=label></canvas>
            <p class="readout">{readout}</p>
            {move || ctx.show_numbers.get().then(numbers)}
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
        let rgb = crate::kit::plot::interned::rgb; // palette colours: interned by DemoCtx::paint
        ctx.set_fill_style_str(&rgb(pal.bg));
        ctx.fill_rect(0.0, 0.0, f.w as f64, f.h as f64);
        let cell = f.w as f64 / cols as f64;
        let s = f.scale;
        let r = cell * 0.3;
        ctx.set_font(&crate::kit::plot::interned::font(format!("{}px sans-serif", (11.0 * s).round())));
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
            let _ = ctx.fill_text(&format!("pair {i}: ωk = {:.3}", Signed(o.rotation[i])), cx, cy + r + 16.0 * s);
        }
        ctx.set_text_align("left");
        ctx.set_fill_style_str(&rgb(pal.blue));
        let _ = ctx.fill_text("● position p", 6.0 * s, 14.0 * s);
        ctx.set_fill_style_str(&rgb(pal.orange));
        let _ = ctx.fill_text("● position p + k", 90.0 * s, 14.0 * s);
        Ok(())
    }
}
