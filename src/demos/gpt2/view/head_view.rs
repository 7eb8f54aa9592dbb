//! bertviz's head view on a canvas: lines from the query token to the tokens it attends to, one
//! colour per head of the selected layer, with a key per head (hover to focus, click to select).

use leptos::html::Canvas;
use leptos::prelude::*;

use super::super::clip_label;
use super::chips::{focus_sibling, roving_key};
use super::heatmap::{is_long, LABELLED_MAX};
use super::store::{store, Answer};
use crate::kit::plot::fit_canvas_with;

#[component]
pub fn HeadView() -> impl IntoView {
    let s = store();
    let (sel, result) = (s.sel, s.result);
    let focus = RwSignal::new(None::<usize>);
    let canvas = NodeRef::<Canvas>::new();
    s.ctx.paint(move |pal| {
        let c = canvas.get()?;
        let (l, _, tok) = sel.get()?;
        let f = focus.get();
        Some(result.with(|r| match r.as_ref().filter(|r| r.t() <= LABELLED_MAX) {
            Some(r) => draw_head_view(&c, pal, r, l, tok, f),
            None => Ok(()),
        }))
    });
    let on_click = move |ev: web_sys::MouseEvent| {
        let t = result.with_untracked(|r| r.as_ref().map_or(0, |r| r.t()));
        let j = ((ev.offset_y() as f64 - HEAD_VIEW_TOP) / HEAD_VIEW_ROW).floor();
        if j >= 0.0 && (j as usize) < t {
            s.set(|p| p.token = j as i64);
        }
    };
    let title = move || sel.get().map(|(l, _, _)| format!("Head view: layer {l}")).unwrap_or_default();
    view! {
        <div class="gpt2-panel" class:hidden=is_long()>
            <h4>{title}</h4>
            <div class="head-keys" role="toolbar" aria-label="Heads of this layer: hover to focus, click to select">
                <HeadKeys focus=focus/>
            </div>
            <canvas node_ref=canvas class="plot head-view" role="img" on:click=on_click
                aria-label="Lines from the query token on the left to the tokens it attends to on the right, one \
                    colour per head"></canvas>
        </div>
    }
}

/// One key per head of the layer: a roving-tabindex row like the chips (←/→ select a head).
#[component]
fn HeadKeys(focus: RwSignal<Option<usize>>) -> impl IntoView {
    let s = store();
    let n_head = Memo::new(move |_| s.result.with(|r| r.as_ref().map_or(0, |r| r.a.n_head)));
    move || {
        let n = n_head.get();
        let chosen = move || s.sel.get().map(|s| s.1);
        let set = move |h: usize| s.set(|p| p.head = h as i64);
        (0..n)
            .map(|h| {
                let [r, g, b] = head_colour(h);
                view! {
                    <button type="button" class="head-key" class:focused=move || focus.get() == Some(h)
                        class:selected=move || chosen() == Some(h)
                        aria-pressed=move || (chosen() == Some(h)).to_string()
                        tabindex=move || if chosen().unwrap_or(0) == h { "0" } else { "-1" }
                        on:mouseenter=move |_| focus.set(Some(h)) on:mouseleave=move |_| focus.set(None)
                        on:focus=move |_| focus.set(Some(h)) on:blur=move |_| focus.set(None)
                        on:keydown=move |ev| if let Some(to) = roving_key(&ev, h, n) {
                            set(to);
                            focus_sibling(&ev, h, to);
                        }
                        on:click=move |_| set(h)>
                        <span class="swatch" style=format!("background: rgb({r}, {g}, {b})")></span>{format!("H{h}")}
                    </button>
                }
            })
            .collect_view()
    }
}

/// Twelve distinguishable colours, one per head (GPT-2 small has 12 heads per layer).
fn head_colour(h: usize) -> [u8; 3] {
    const C: [[u8; 3]; 12] = [
        [31, 119, 180],
        [255, 127, 14],
        [44, 160, 44],
        [214, 39, 40],
        [148, 103, 189],
        [140, 86, 75],
        [227, 119, 194],
        [127, 127, 127],
        [188, 189, 34],
        [23, 190, 207],
        [0, 0, 128],
        [128, 0, 0],
    ];
    C[h % C.len()]
}

const HEAD_VIEW_TOP: f64 = 8.0;
const HEAD_VIEW_ROW: f64 = 18.0;

/// bertviz's head view: queries on the left, keys on the right, a line from the selected query
/// to each key with opacity = weight, for every head of the layer (the focused head on top).
fn draw_head_view(
    c: &web_sys::HtmlCanvasElement,
    pal: &crate::kit::theme::Palette,
    r: &Answer,
    l: usize,
    sel: usize,
    focus: Option<usize>,
) -> Result<(), String> {
    let t = r.t();
    let f = fit_canvas_with(c, |_| HEAD_VIEW_TOP * 2.0 + HEAD_VIEW_ROW * t as f64);
    let s = f.scale;
    let w = f.w as f64 / s;
    let ctx = crate::kit::plot::heatmap::context(c)?;
    ctx.set_fill_style_str(&crate::kit::plot::interned::rgb(pal.bg));
    ctx.fill_rect(0.0, 0.0, f.w as f64, f.h as f64);
    let (left, right) = (w * 0.36, w * 0.64);
    let y = |i: usize| (HEAD_VIEW_TOP + (i as f64 + 0.5) * HEAD_VIEW_ROW) * s;
    ctx.set_font(&format!("{}px ui-monospace, monospace", (12.0 * s).round()));
    ctx.set_text_baseline("middle");
    // Rows are taller than the text, so labels cannot meet vertically; across, each column of
    // labels gets the space beside the lines (a monospace font: one measured character).
    let char_w = ctx.measure_text("M").map(|m| m.width() / s).unwrap_or(7.2).max(1.0);
    let max_chars = ((left - 8.0) / char_w).floor().max(1.0) as usize;
    for (i, tok) in r.a.tokens.iter().enumerate() {
        let text = clip_label(&tok.text.replace(' ', "·").replace('\n', "↵"), max_chars);
        let strong = i == sel;
        let colour =
            if strong { crate::kit::plot::interned::rgb(pal.orange) } else { crate::kit::plot::interned::rgb(pal.fg) };
        ctx.set_fill_style_str(&colour);
        ctx.set_text_align("right");
        let _ = ctx.fill_text(&text, (left - 6.0) * s, y(i));
        ctx.set_text_align("left");
        ctx.set_fill_style_str(&crate::kit::plot::interned::rgb(pal.fg));
        let _ = ctx.fill_text(&text, (right + 6.0) * s, y(i));
    }
    ctx.set_line_width(2.0 * s);
    let heads: Vec<usize> = (0..r.a.n_head).filter(|&h| Some(h) != focus).chain(focus).collect();
    for h in heads {
        let [cr, cg, cb] = head_colour(h);
        let dim = if focus.is_some_and(|f| f != h) { 0.12 } else { 1.0 };
        for j in 0..=sel {
            let wgt = r.weight(l, h, sel, j).unwrap_or(0.0) as f64;
            if wgt < 0.01 {
                continue;
            }
            ctx.set_stroke_style_str(&format!("rgba({cr}, {cg}, {cb}, {:.3})", (wgt * dim).min(1.0)));
            ctx.begin_path();
            ctx.move_to(left * s, y(sel));
            ctx.line_to(right * s, y(j));
            ctx.stroke();
        }
    }
    Ok(())
}
