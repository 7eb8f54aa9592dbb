//! The model view: every layer × head as a thumbnail of its attention pattern; click one to
//! select it, and knock the selected head out (or restore it).

use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::{Clamped, JsCast};

use ndarray::Array2;

use super::super::{format_ablate, label_stride};
use super::store::{store, Answer, Side};
use crate::kit::plot::colormap::viridis;
use crate::kit::plot::fit_canvas_with;
use crate::numerics::attention::max_pool_into;

/// Where the thumbnails were drawn, in CSS px, for mapping a click to a head.
#[derive(Clone, Copy, Default)]
struct Layout {
    x0: f64,
    y0: f64,
    cell: f64,
    n_layer: usize,
    n_head: usize,
}

impl Layout {
    /// The (layer, head) under the point (x, y), if any.
    fn head_at(&self, x: f64, y: f64) -> Option<(usize, usize)> {
        let (x, y) = (x - self.x0, y - self.y0);
        if self.cell <= 0.0 || x < 0.0 || y < 0.0 {
            return None;
        }
        let (h, l) = ((x / self.cell) as usize, (y / self.cell) as usize);
        (l < self.n_layer && h < self.n_head).then_some((l, h))
    }
}

#[component]
pub fn ModelView() -> impl IntoView {
    let s = store();
    let (sel, knocked) = (s.sel, s.knocked);
    let canvas = NodeRef::<Canvas>::new();
    let layout = StoredValue::new(Layout::default());
    s.ctx.paint(move |pal| {
        let c = canvas.get()?;
        let selected = sel.get().map_or((usize::MAX, usize::MAX), |(l, h, _)| (l, h));
        Some(s.result.with(|r| match r {
            Some(r) => knocked.with(|k| draw_model_view(&c, pal, r, selected, k, layout)),
            None => Ok(()),
        }))
    });
    let on_click = move |ev: web_sys::MouseEvent| {
        if let Some((l, h)) = layout.get_value().head_at(ev.offset_x() as f64, ev.offset_y() as f64) {
            s.set(|p| (p.layer, p.head) = (l as i64, h as i64));
        }
    };
    let is_knocked = move || sel.get().is_some_and(|(l, h, _)| knocked.with(|k| k.contains(&(l, h))));
    let toggle = move |_| {
        let Some((l, h, _)) = sel.get_untracked() else { return };
        s.set(|p| {
            let mut pairs = p.knocked_out();
            match pairs.iter().position(|&x| x == (l, h)) {
                Some(i) => {
                    pairs.remove(i);
                }
                None => pairs.push((l, h)),
            }
            p.ablate = format_ablate(&pairs);
        });
    };
    let none_typed = move || s.params.with(|p| p.ablate.trim().is_empty());
    let second = matches!(s.side, Side::B { .. });
    view! {
        <div class="gpt2-panel">
            <h4>"Model view"</h4>
            <canvas node_ref=canvas class="plot model-view" role="img" on:click=on_click
                aria-label="Attention of every layer and head; click one to select it"></canvas>
            // Knock-outs name the first model's heads: the second side shows its model intact.
            <div class="row-actions" class:hidden=second>
                <button type="button" class="knock-out" on:click=toggle disabled=move || sel.get().is_none()>
                    {move || if is_knocked() { "Restore this head" } else { "Knock out this head" }}
                </button>
                <button type="button" class="clear-knock-outs" on:click=move |_| s.set(|p| p.ablate = String::new())
                    disabled=none_typed>"Restore all"</button>
            </div>
        </div>
    }
}

/// Draws the L × H thumbnails of the attention patterns; the selected head is outlined and
/// knocked-out heads are crossed. Records the layout for click mapping.
fn draw_model_view(
    c: &web_sys::HtmlCanvasElement,
    pal: &crate::kit::theme::Palette,
    r: &Answer,
    selected: (usize, usize),
    ablated: &[(usize, usize)],
    layout: StoredValue<Layout>,
) -> Result<(), String> {
    let (nl, nh) = (r.a.n_layer, r.a.n_head);
    const LABEL: f64 = 26.0;
    // Every head fits the width (GPT-2 XL's 25 heads in a phone's 340 px get 12 px cells), and
    // the labels thin out below.
    let cell_for = |w: f64| ((w - LABEL) / nh as f64).clamp(8.0, 96.0);
    let f = fit_canvas_with(c, |w| LABEL + cell_for(w) * nl as f64);
    let s = f.scale;
    let cell = cell_for(f.w as f64 / s);
    layout.set_value(Layout { x0: LABEL, y0: LABEL, cell, n_layer: nl, n_head: nh });
    let ctx = crate::kit::plot::heatmap::context(c)?;
    ctx.set_fill_style_str(&crate::kit::plot::interned::rgb(pal.bg));
    ctx.fill_rect(0.0, 0.0, f.w as f64, f.h as f64);
    ctx.set_font(&crate::kit::plot::interned::font(format!("{}px sans-serif", (11.0 * s).round())));
    ctx.set_fill_style_str(&crate::kit::plot::interned::rgb(pal.fg));
    // Every k-th head and layer labelled when cells are narrower than a label (k from the
    // widest, "H24" for 25 heads), so that no two labels touch. Head labels are centred on
    // their column.
    let widest = ctx.measure_text(&format!("H{}", nh.saturating_sub(1))).map(|m| m.width() / s).unwrap_or(24.0);
    let (h_step, l_step) = (label_stride(widest, 4.0, cell), label_stride(11.0, 3.0, cell));
    ctx.set_text_align("center");
    for h in (0..nh).step_by(h_step) {
        let _ = ctx.fill_text(&format!("H{h}"), (LABEL + (h as f64 + 0.5) * cell) * s, 16.0 * s);
    }
    ctx.set_text_align("left");
    for l in (0..nl).step_by(l_step) {
        let _ = ctx.fill_text(&format!("L{l}"), 2.0 * s, (LABEL + (l as f64 + 0.55) * cell) * s);
    }
    let _ = c.set_attribute("data-label-stride", &format!("{h_step} {l_step}"));
    // Each thumbnail: n × n pixels, each the largest weight in its block of the layer's matrix:
    // the full T × T one when the layer was sent, else the worker's thumbnail of it.
    let px = ((cell - 4.0) * s).floor().max(1.0) as usize;
    for l in 0..nl {
        for h in 0..nh {
            let Some(m) = r.w.head_matrix(l, h) else { continue };
            let n = m.nrows().min(px).max(1);
            let zoom = px as f64 / n as f64;
            let mut pooled = Array2::<f32>::zeros((n, n));
            max_pool_into(m, pooled.view_mut());
            let mut rgba = Vec::with_capacity(n * n * 4);
            for &v in pooled.iter() {
                let [cr, cg, cb] = viridis(v as f64);
                rgba.extend_from_slice(&[cr, cg, cb, 255]);
            }
            let img = web_sys::ImageData::new_with_u8_clamped_array_and_sh(Clamped(&rgba), n as u32, n as u32)
                .map_err(|_| "could not make an image")?;
            let (x, y) = ((LABEL + h as f64 * cell + 2.0) * s, (LABEL + l as f64 * cell + 2.0) * s);
            if zoom == 1.0 {
                let _ = ctx.put_image_data(&img, x, y);
            } else {
                // Scale up small matrices: draw through an offscreen canvas without smoothing.
                let doc = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
                let off: web_sys::HtmlCanvasElement =
                    doc.create_element("canvas").map_err(|_| "no canvas")?.unchecked_into();
                off.set_width(n as u32);
                off.set_height(n as u32);
                let octx = crate::kit::plot::heatmap::context(&off)?;
                let _ = octx.put_image_data(&img, 0.0, 0.0);
                ctx.set_image_smoothing_enabled(false);
                let _ = ctx.draw_image_with_html_canvas_element_and_dw_and_dh(&off, x, y, px as f64, px as f64);
            }
            if ablated.contains(&(l, h)) {
                ctx.set_stroke_style_str("rgb(220, 40, 40)");
                ctx.set_line_width(3.0 * s);
                ctx.begin_path();
                ctx.move_to(x, y);
                ctx.line_to(x + px as f64, y + px as f64);
                ctx.move_to(x + px as f64, y);
                ctx.line_to(x, y + px as f64);
                ctx.stroke();
            }
            if (l, h) == selected {
                ctx.set_stroke_style_str(&crate::kit::plot::interned::rgb(pal.orange));
                ctx.set_line_width(3.0 * s);
                ctx.stroke_rect(x - 1.5 * s, y - 1.5 * s, px as f64 + 3.0 * s, px as f64 + 3.0 * s);
            }
        }
    }
    Ok(())
}
