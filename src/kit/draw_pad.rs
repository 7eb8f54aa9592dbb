//! A pad to draw a picture on with a mouse, a pen or a finger (the reader's own input to the
//! vision demo).

use leptos::html::Canvas;
use leptos::prelude::*;

use super::picture::{context, from_canvas, Rgba};

/// A square pad of `size` pixels (shown at twice that) to draw on with a mouse, a pen or a
/// finger: dark ink on light paper, as the bundled model was trained on. `drawn` hears the
/// pixels when a stroke ends.
#[component]
pub fn DrawPad(size: u32, drawn: Callback<Rgba>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let down = StoredValue::new(None::<(f64, f64)>);
    let clear = move || {
        if let Some(ctx) = canvas.get().as_ref().and_then(context) {
            ctx.set_fill_style_str("#f6f3ec");
            ctx.fill_rect(0.0, 0.0, f64::from(size), f64::from(size));
        }
    };
    Effect::new(move |_| {
        if canvas.get().is_some() {
            clear()
        }
    });
    let at = move |e: &web_sys::PointerEvent| {
        let c = canvas.get()?;
        let w = f64::from(c.client_width().max(1));
        let k = f64::from(size) / w;
        Some((f64::from(e.offset_x()) * k, f64::from(e.offset_y()) * k))
    };
    let stroke = move |e: web_sys::PointerEvent| {
        let (Some(from), Some(to)) = (down.get_value(), at(&e)) else { return };
        if let Some(ctx) = canvas.get().as_ref().and_then(context) {
            ctx.set_stroke_style_str("#22222e");
            ctx.set_line_width(f64::from(size) / 14.0);
            ctx.set_line_cap("round");
            ctx.begin_path();
            ctx.move_to(from.0, from.1);
            ctx.line_to(to.0, to.1);
            ctx.stroke();
        }
        down.set_value(Some(to));
    };
    let start = move |e: web_sys::PointerEvent| {
        e.prevent_default();
        if let Some(c) = canvas.get() {
            let _ = c.set_pointer_capture(e.pointer_id());
        }
        down.set_value(at(&e));
        stroke(e);
    };
    let end = move |_| {
        if down.get_value().is_some() {
            down.set_value(None);
            if let Some(p) = canvas.get().as_ref().and_then(from_canvas) {
                drawn.run(p);
            }
        }
    };
    view! {
        <div class="draw-pad">
            <canvas node_ref=canvas width=size height=size style:width=format!("{}px", 2 * size)
                aria-label="Drawing pad: draw a shape with the mouse, a pen or a finger"
                on:pointerdown=start on:pointermove=stroke on:pointerup=end on:pointercancel=end></canvas>
            <button type="button" on:click=move |_| clear()>"Clear the pad"</button>
        </div>
    }
}
