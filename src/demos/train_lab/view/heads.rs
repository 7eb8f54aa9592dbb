//! Every head's attention on the probe as a grid of thumbnails (layers down, heads across),
//! each titled with its scores; and one head large, with the probe's characters on its axes.

use super::plots::head_colour;
use crate::kit::plot::colormap::viridis;
use crate::kit::plot::heatmap::{blit_pixels, context, CellRect};
use crate::kit::plot::interned::{font, rgb};
use crate::kit::plot::{fit_canvas_with, Frame};
use crate::kit::theme::Palette;
use crate::numerics::format::Signed;
use crate::train::HeadSnapshot;

/// Where the thumbnails are, in CSS pixels, to map a click to a head.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grid {
    pub x0: f64,
    pub y0: f64,
    pub w: f64,
    pub h: f64,
    pub n_layer: usize,
    pub n_head: usize,
}

impl Grid {
    pub fn head_at(&self, x: f64, y: f64) -> Option<usize> {
        if self.w <= 0.0 || x < self.x0 || y < self.y0 {
            return None;
        }
        let (h, l) = (((x - self.x0) / self.w) as usize, ((y - self.y0) / self.h) as usize);
        (l < self.n_layer && h < self.n_head).then_some(l * self.n_head + h)
    }
}

const TITLE: f64 = 30.0;
const LABEL: f64 = 24.0;

/// One head's (T, T) weights as an RGBA image (viridis, 0 to 1).
fn image(att: &[f32]) -> Vec<u8> {
    att.iter()
        .flat_map(|&v| {
            let [r, g, b] = viridis(v.clamp(0.0, 1.0) as f64);
            [r, g, b, 255]
        })
        .collect()
}

pub fn draw_grid(
    c: &web_sys::HtmlCanvasElement,
    pal: &Palette,
    snap: &HeadSnapshot,
    (nl, nh): (usize, usize),
    selected: usize,
) -> Result<Grid, String> {
    let t = (snap.attention.len() / (nl * nh).max(1)).isqrt();
    let cell = |w: f64| ((w - LABEL) / nh as f64).clamp(40.0, 170.0);
    let f: Frame = fit_canvas_with(c, |w| cell(w) * nl as f64 + 4.0);
    let s = f.scale;
    let w = cell(f.w as f64 / s);
    let grid = Grid { x0: LABEL, y0: 0.0, w, h: w, n_layer: nl, n_head: nh };
    let ctx = context(c)?;
    ctx.set_fill_style_str(&rgb(pal.bg));
    ctx.fill_rect(0.0, 0.0, f.w as f64, f.h as f64);
    ctx.set_font(&font(format!("{}px sans-serif", (11.0 * s).round())));
    for l in 0..nl {
        ctx.set_fill_style_str(&rgb(pal.fg));
        let _ = ctx.fill_text(&format!("L{l}"), 2.0 * s, (l as f64 * w + w / 2.0) * s);
        for h in 0..nh {
            let k = l * nh + h;
            let (x, y) = (LABEL + h as f64 * w, l as f64 * w);
            ctx.set_fill_style_str(&rgb(if k == selected { head_colour(pal, k) } else { pal.fg }));
            let (p, i) = (snap.previous.get(k).copied().unwrap_or(0.0), snap.induction.get(k).copied().unwrap_or(0.0));
            let _ = ctx.fill_text(
                &format!("H{h} prev {p:.2} ind {i:.2}", p = Signed(p), i = Signed(i)),
                (x + 3.0) * s,
                (y + 12.0) * s,
            );
            let side = (w - 6.0).min(w - TITLE + 12.0).max(8.0);
            let rect = CellRect { x: (x + 3.0) * s, y: (y + 18.0) * s, w: side * s, h: (w - 22.0).max(8.0) * s };
            if t > 0 && snap.attention.len() >= (k + 1) * t * t {
                blit_pixels(c, rect, t, t, &image(&snap.attention[k * t * t..(k + 1) * t * t]))?;
            }
            if k == selected {
                ctx.set_stroke_style_str(&rgb(head_colour(pal, k)));
                ctx.set_line_width(2.0 * s);
                ctx.stroke_rect(rect.x - s, rect.y - s, rect.w + 2.0 * s, rect.h + 2.0 * s);
            }
        }
    }
    Ok(grid)
}

/// One head large: rows are queries, columns keys, each labelled with the probe's character.
pub fn draw_head(
    c: &web_sys::HtmlCanvasElement,
    pal: &Palette,
    snap: &HeadSnapshot,
    probe: &str,
    heads: usize,
    k: usize,
) -> Result<(), String> {
    let chars: Vec<char> = probe.chars().collect();
    let t = chars.len();
    let side = |w: f64| (w - LABEL).clamp(120.0, 460.0);
    let f = fit_canvas_with(c, |w| side(w) + LABEL);
    let s = f.scale;
    let n = side(f.w as f64 / s);
    let ctx = context(c)?;
    ctx.set_fill_style_str(&rgb(pal.bg));
    ctx.fill_rect(0.0, 0.0, f.w as f64, f.h as f64);
    if t == 0 || heads == 0 || snap.attention.len() < heads * t * t || k >= heads {
        return Ok(());
    }
    let rect = CellRect { x: LABEL * s, y: LABEL * s, w: n * s, h: n * s };
    blit_pixels(c, rect, t, t, &image(&snap.attention[k * t * t..(k + 1) * t * t]))?;
    let px = n / t as f64;
    ctx.set_fill_style_str(&rgb(pal.fg));
    ctx.set_text_align("center");
    let size = px.clamp(7.0, 13.0);
    ctx.set_font(&font(format!("{}px monospace", (size * s).round())));
    for (i, ch) in chars.iter().enumerate() {
        let mid = LABEL + (i as f64 + 0.5) * px;
        let _ = ctx.fill_text(&ch.to_string(), mid * s, (LABEL - 6.0) * s);
        let _ = ctx.fill_text(&ch.to_string(), (LABEL / 2.0) * s, (mid + size / 3.0) * s);
    }
    ctx.set_text_align("left");
    Ok(())
}
