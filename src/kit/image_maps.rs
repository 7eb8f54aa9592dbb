//! Maps over a picture: each a square canvas with the picture (in grey) under a grid of weights in
//! the book's colour map (0 to the largest), the patches' grid faint over it, the picked cell
//! outlined, its title as a caption; a click or an arrow key names a cell. A map with no picture
//! (position embeddings' similarities) is drawn alone, from its lowest value to its largest; NaN
//! cells are left blank.

use std::sync::Arc;

use leptos::html::Canvas;
use leptos::prelude::*;
use ndarray::Array3;

use crate::kit::plot::colormap::viridis;
use crate::kit::plot::heatmap::{blit_pixels, context, CellRect};
use crate::kit::DemoCtx;

/// One map: `side` × `side` values, row by row.
#[derive(Debug, Clone, PartialEq)]
pub struct Overlay {
    pub title: String,
    pub side: usize,
    pub values: Vec<f32>,
    /// Drawn over the picture (else alone).
    pub picture: bool,
    /// The cell outlined (row by row).
    pub outline: Option<usize>,
}

/// The maps in a grid of figures (as wide as the page allows, see `.image-maps`); `pick` hears
/// the map's index and the cell clicked (row by row).
#[component]
pub fn ImageMaps(
    ctx: DemoCtx,
    #[prop(into)] seen: Signal<Option<Arc<Array3<u8>>>>,
    #[prop(into)] maps: Signal<Vec<Overlay>>,
    pick: Callback<(usize, usize)>,
) -> impl IntoView {
    // Figures are made when the count changes; each redraws itself when its map does.
    let count = Memo::new(move |_| maps.with(Vec::len));
    let each = move || {
        (0..count.get()).map(|i| view! { <MapFigure ctx=ctx seen=seen maps=maps index=i pick=pick/> }).collect_view()
    };
    let key = move || {
        maps.with(|m| {
            let scale = if m.iter().any(|o| o.picture) {
                "Weight: 0 (dark) to the map's largest (bright)"
            } else {
                "Similarity: the map's lowest (dark) to its highest (bright)"
            };
            let square =
                if m.iter().any(|o| o.outline.is_some()) { "; the white square is the clicked patch" } else { "" };
            format!("{scale}{square}. Click a map, or use the arrow keys on one with a white square, to pick a patch.")
        })
    };
    view! {
        <div class="image-maps">{each}</div>
        <p class="colour-key muted"><span class="key-bar" aria-hidden="true"></span>{key}</p>
    }
}

#[component]
fn MapFigure(
    ctx: DemoCtx,
    seen: Signal<Option<Arc<Array3<u8>>>>,
    maps: Signal<Vec<Overlay>>,
    index: usize,
    pick: Callback<(usize, usize)>,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let title = move || maps.with(|m| m.get(index).map(|o| o.title.clone()).unwrap_or_default());
    ctx.paint(move |pal| {
        let c = canvas.get()?;
        let drawn = maps.with(|m| m.get(index).cloned()).map(|o| seen.with(|s| draw(&c, pal, s.as_deref(), &o)));
        Some(drawn.unwrap_or(Ok(())))
    });
    let click = move |e: web_sys::MouseEvent| {
        let (Some(c), Some(side)) = (canvas.get(), maps.with(|m| m.get(index).map(|o| o.side))) else { return };
        let w = f64::from(c.client_width().max(1));
        let cell = |v: i32| ((f64::from(v) / w * side as f64) as usize).min(side.saturating_sub(1));
        pick.run((index, cell(e.offset_y()) * side + cell(e.offset_x())));
    };
    // Arrow keys move the clicked cell.
    let key = move |e: web_sys::KeyboardEvent| {
        let Some((side, at)) = maps.with(|m| m.get(index).map(|o| (o.side, o.outline))) else { return };
        let at = at.unwrap_or(0);
        let (r, c) = (at / side.max(1), at % side.max(1));
        let to = match e.key().as_str() {
            "ArrowLeft" => (r, c.saturating_sub(1)),
            "ArrowRight" => (r, (c + 1).min(side - 1)),
            "ArrowUp" => (r.saturating_sub(1), c),
            "ArrowDown" => ((r + 1).min(side - 1), c),
            _ => return,
        };
        e.prevent_default();
        pick.run((index, to.0 * side + to.1));
    };
    view! {
        <figure class="image-map">
            <canvas node_ref=canvas class="plot" role="img" aria-label=title
                tabindex=move || maps.with(|m| m.get(index).is_some_and(|o| o.outline.is_some())).then_some("0")
                on:click=click on:keydown=key></canvas>
            <figcaption>{title}</figcaption>
        </figure>
    }
}

fn draw(
    c: &web_sys::HtmlCanvasElement,
    pal: &crate::kit::theme::Palette,
    seen: Option<&Array3<u8>>,
    o: &Overlay,
) -> Result<(), String> {
    let f = crate::kit::plot::fit_canvas(c, 1.0, 100.0, 640.0);
    let ctx = context(c)?;
    ctx.set_fill_style_str(&crate::kit::plot::interned::rgb(pal.bg));
    ctx.fill_rect(0.0, 0.0, f64::from(f.w), f64::from(f.h));
    let side = o.side.max(1);
    // Weights run from 0 to the largest; a map alone (similarities) from its lowest to its largest.
    let finite = || o.values.iter().copied().filter(|v| v.is_finite());
    let lo = if o.picture { 0.0 } else { finite().fold(f32::INFINITY, f32::min) };
    let span = (finite().fold(lo, f32::max) - lo).max(1e-12);
    let heat = |v: f32| viridis(f64::from((v - lo) / span).clamp(0.0, 1.0));
    // One image pixel per picture pixel (or per cell, alone), scaled up crisply.
    let (px, n) = match seen.filter(|_| o.picture) {
        Some(img) => {
            let n = img.dim().0;
            let mut px = Vec::with_capacity(n * n * 4);
            for y in 0..n {
                for x in 0..n {
                    let v = o.values.get((y * side / n) * side + x * side / n).copied().unwrap_or(0.0);
                    let grey = (0.3 * f32::from(img[[y, x, 0]])
                        + 0.59 * f32::from(img[[y, x, 1]])
                        + 0.11 * f32::from(img[[y, x, 2]]))
                        / 255.0;
                    let h = heat(v);
                    px.extend((0..3).map(|k| (0.35 * 255.0 * grey + 0.65 * f32::from(h[k])) as u8));
                    px.push(255);
                }
            }
            (px, n)
        }
        None => {
            let bg = [pal.bg.0, pal.bg.1, pal.bg.2, 255];
            let px = o
                .values
                .iter()
                .flat_map(|&v| {
                    if v.is_finite() {
                        {
                            let h = heat(v);
                            [h[0], h[1], h[2], 255]
                        }
                    } else {
                        bg
                    }
                })
                .collect();
            (px, side)
        }
    };
    let rect = CellRect { x: 0.0, y: 0.0, w: f64::from(f.w), h: f64::from(f.h) };
    if px.len() == n * n * 4 && n > 0 {
        blit_pixels(c, rect, n, n, &px)?;
    }
    // The patches' grid, faintly, over a picture.
    if o.picture && side > 1 {
        let cell = f64::from(f.w) / side as f64;
        ctx.set_line_width(1.0);
        ctx.set_stroke_style_str("rgba(255, 255, 255, 0.18)");
        ctx.begin_path();
        for i in 1..side {
            let at = (i as f64 * cell).round() + 0.5;
            ctx.move_to(at, 0.0);
            ctx.line_to(at, f64::from(f.h));
            ctx.move_to(0.0, at);
            ctx.line_to(f64::from(f.w), at);
        }
        ctx.stroke();
    }
    if let Some(at) = o.outline.filter(|&a| a < side * side) {
        let cell = f64::from(f.w) / side as f64;
        let (x, y) = ((at % side) as f64 * cell, (at / side) as f64 * cell);
        ctx.set_line_width(2.0 * f.scale);
        ctx.set_stroke_style_str("#000000");
        ctx.stroke_rect(x + f.scale, y + f.scale, cell - 2.0 * f.scale, cell - 2.0 * f.scale);
        ctx.set_line_width(1.0 * f.scale);
        ctx.set_stroke_style_str("#ffffff");
        ctx.stroke_rect(x + f.scale, y + f.scale, cell - 2.0 * f.scale, cell - 2.0 * f.scale);
    }
    Ok(())
}
