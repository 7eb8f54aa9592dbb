//! Heatmaps: axes drawn by plotters, cells blitted as one image (a 101 × 200 matrix would be
//! 20,200 canvas rectangles; one `drawImage` is far under a millisecond), and a colour bar.

use crate::numerics::format::Signed;
use plotters::prelude::*;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use super::colormap::{level_index, viridis, viridis_table};
use super::{err, style_mesh, Area, Frame};
use crate::kit::theme::Palette;

/// Where the cells landed, in canvas pixels: for mapping clicks back to rows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CellRect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

pub struct HeatmapSpec<'a> {
    pub rows: usize,
    pub cols: usize,
    /// Value at (row, col) of the data; NaN is drawn as the background.
    pub value: &'a dyn Fn(usize, usize) -> f64,
    /// The colour scale runs from vmin to vmax.
    pub vmin: f64,
    pub vmax: f64,
    /// Axis ranges, (lo, hi): x left to right; y is the range that data rows 0..rows cover, row r
    /// starting at lo + r (hi − lo) / rows (downwards from the top when `rows_down`, else
    /// upwards from the bottom).
    pub x_range: (f64, f64),
    pub y_range: (f64, f64),
    /// Data row 0 at the top, as in a matrix (the y axis then runs downwards); otherwise at the
    /// bottom, as in a plot. One flag sets both the image's row order and the axis, so the tick
    /// labels cannot disagree with the rows.
    pub rows_down: bool,
    /// Label the x axis with whole numbers (an index axis).
    pub x_integer: bool,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub bar_label: &'a str,
}

/// Draws the heatmap with axes and a colour bar on `root`; returns the cells' rectangle.
pub fn draw_heatmap(
    canvas: &HtmlCanvasElement,
    root: &Area,
    f: &Frame,
    pal: &Palette,
    spec: &HeatmapSpec,
) -> Result<CellRect, String> {
    let bar_w = f.px(78.0);
    let (main, bar) = root.split_horizontally(f.w.saturating_sub(bar_w));
    let (y_top, y_bottom) = y_edges(spec.y_range, spec.rows_down);
    let mut chart = ChartBuilder::on(&main)
        .margin(f.px(8.0))
        .x_label_area_size(f.px(40.0))
        .y_label_area_size(f.px(50.0))
        // plotters puts a range's start at the bottom: a reversed range runs the axis downwards
        .build_cartesian_2d(spec.x_range.0..spec.x_range.1, y_bottom..y_top)
        .map_err(err)?;
    // About one x label per 60 CSS pixels: at phone width, plotters' default of ten ran
    // "100150200250" together on a 512-column axis.
    let x_labels = ((f.w.saturating_sub(bar_w)) as f64 / f.scale / 60.0).clamp(2.0, 10.0) as usize;
    style_mesh(&mut chart, f, pal, spec.x_desc, spec.y_desc)
        .disable_mesh()
        .x_labels(x_labels)
        .x_label_formatter(&|x| match spec.x_integer {
            true if (x - x.round()).abs() < 1e-9 => format!("{x:.0}", x = Signed(x)),
            true => String::new(),
            false => crate::numerics::format::tick(*x),
        })
        // An index axis on y too (positions): whole numbers without ".0".
        .y_label_formatter(&|y| match spec.x_integer && (y - y.round()).abs() < 1e-9 {
            true => format!("{y:.0}", y = Signed(y)),
            false => crate::numerics::format::tick(*y),
        })
        .draw()
        .map_err(err)?;
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let rect = CellRect {
        x: xr.start as f64,
        y: yr.start as f64,
        w: (xr.end - xr.start) as f64,
        h: (yr.end - yr.start) as f64,
    };
    blit(canvas, rect, spec, pal)?;
    // The axis as drawn, for tests that check a marker against the ticks: the cells' rectangle
    // in canvas pixels and the y values at its top and bottom edges.
    let _ = canvas.set_attribute("data-cells", &format!("{} {} {} {}", rect.x, rect.y, rect.w, rect.h));
    let _ = canvas.set_attribute("data-y", &format!("{y_top} {y_bottom}"));

    // Colour bar: 64 bands from 0 to vmax, with its own axis.
    let mut cb = ChartBuilder::on(&bar)
        .margin_top(f.px(8.0))
        .margin_bottom(f.px(48.0))
        .margin_right(f.px(8.0))
        .y_label_area_size(f.px(44.0))
        .build_cartesian_2d(0f64..1f64, spec.vmin..spec.vmax.max(spec.vmin + 1e-12))
        .map_err(err)?;
    cb.configure_mesh()
        .disable_x_axis()
        .disable_mesh()
        .y_desc(spec.bar_label.to_string())
        .axis_desc_style(f.font(12.0, pal.fg))
        .label_style(f.font(11.0, pal.muted))
        .axis_style(pal.muted)
        .y_labels(5)
        .y_label_formatter(&|v| crate::numerics::format::tick(*v))
        .draw()
        .map_err(err)?;
    // The bar itself: a 1 × 64 image, largest value at the top.
    let (bx, by) = cb.plotting_area().get_pixel_range();
    let bands = 64;
    let mut px = Vec::with_capacity(bands * 4);
    for i in 0..bands {
        let c = viridis(1.0 - (i as f64 + 0.5) / bands as f64);
        px.extend_from_slice(&[c[0], c[1], c[2], 255]);
    }
    let bar_rect = CellRect {
        x: bx.start as f64,
        y: by.start as f64,
        w: (bx.end - bx.start) as f64,
        h: (by.end - by.start) as f64,
    };
    blit_pixels(canvas, bar_rect, 1, bands, &px)?;
    Ok(rect)
}

/// The y axis's values at the top and bottom edges of the cells.
pub fn y_edges((lo, hi): (f64, f64), rows_down: bool) -> (f64, f64) {
    if rows_down {
        (lo, hi)
    } else {
        (hi, lo)
    }
}

/// The data row drawn as the `image_row`-th row from the top.
pub fn data_row(image_row: usize, rows: usize, rows_down: bool) -> usize {
    if rows_down {
        image_row
    } else {
        rows - 1 - image_row
    }
}

/// Paints the matrix into an offscreen canvas at one pixel per cell, then scales it into the
/// plotting rectangle with smoothing off, so each cell stays a crisp block.
fn blit(canvas: &HtmlCanvasElement, rect: CellRect, spec: &HeatmapSpec, pal: &Palette) -> Result<(), String> {
    let (rows, cols) = (spec.rows, spec.cols);
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    let (lut, bg) = (viridis_table(), [pal.bg.0, pal.bg.1, pal.bg.2, 255]);
    // value -> level on 0..=255
    let scale = 255.0 / (spec.vmax - spec.vmin).max(1e-12);
    // One [u8; 4] per cell, assigned whole (not copied into a slice of runtime length).
    let mut px = vec![[0u8; 4]; rows * cols];
    for (image_row, row) in px.chunks_exact_mut(cols).enumerate() {
        let r = data_row(image_row, rows, spec.rows_down);
        for (c, p) in row.iter_mut().enumerate() {
            let v = (spec.value)(r, c);
            *p = if v.is_nan() { bg } else { lut[level_index((v - spec.vmin) * scale)] };
        }
    }
    blit_pixels(canvas, rect, cols, rows, px.as_flattened())
}

/// Scales a `cols` × `rows` RGBA image into `rect` of `canvas`, one crisp block per pixel.
pub fn blit_pixels(
    canvas: &HtmlCanvasElement,
    rect: CellRect,
    cols: usize,
    rows: usize,
    px: &[u8],
) -> Result<(), String> {
    // Offscreen canvases kept by size: resizing one reallocates its pixels, and a page often
    // alternates sizes within a frame (a matrix, then its 1 × 64 colour bar, then another matrix).
    type Offscreen = Vec<((usize, usize), HtmlCanvasElement)>;
    thread_local!(static OFF: std::cell::RefCell<Offscreen> = const { std::cell::RefCell::new(Vec::new()) });
    let off = OFF.with(|cell| {
        let mut cache = cell.borrow_mut();
        if let Some((_, c)) = cache.iter().find(|(size, _)| *size == (cols, rows)) {
            return Some(c.clone());
        }
        let c: HtmlCanvasElement = leptos::prelude::document().create_element("canvas").ok()?.unchecked_into();
        c.set_width(cols as u32);
        c.set_height(rows as u32);
        if cache.len() >= 8 {
            cache.remove(0); // the oldest size: sliders that change a matrix's size make new ones
        }
        cache.push(((cols, rows), c.clone()));
        Some(c)
    });
    let off = off.ok_or("no offscreen canvas")?;
    let octx = context(&off)?;
    let img = web_sys::ImageData::new_with_u8_clamped_array_and_sh(Clamped(px), cols as u32, rows as u32)
        .map_err(|_| "cannot build the heatmap image")?;
    octx.put_image_data(&img, 0.0, 0.0).map_err(|_| "cannot draw the heatmap image")?;
    let ctx = context(canvas)?;
    ctx.set_image_smoothing_enabled(false);
    ctx.draw_image_with_html_canvas_element_and_dw_and_dh(&off, rect.x, rect.y, rect.w, rect.h)
        .map_err(|_| "cannot draw the heatmap")?;
    Ok(())
}

pub fn context(canvas: &HtmlCanvasElement) -> Result<CanvasRenderingContext2d, String> {
    canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into().ok())
        .ok_or_else(|| "this browser gave no 2D canvas context".to_string())
}
