//! Demo `sinusoidal`: the sinusoidal position table, a few of its columns, and the similarity
//! of positions (chapter "positional").

use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::positional::{frequency, sinusoidal};

crate::params! {
    pub struct Params {
        d: usize = Param::log_int("d", "Dimensions d", 8, 512, 64),
        base: f64 = Param::log_float("base", "Base", 100.0, 100000.0, 10000.0),
        len: usize = Param::int("len", "Max length", 16, 128, 64),
    }
}

pub struct SinusoidalDemo;

impl Demo for SinusoidalDemo {
    const ID: &'static str = "sinusoidal";
    const TITLE: &'static str = "The sinusoidal position table";
    const CAPTION: &'static str =
        "Each pair of dimensions is a sine and a cosine of the position at its own frequency, from fast (left) \
        to very slow (right). The similarity of two positions depends only on how far apart they are.";
    type Params = Params;
    type Output = Sinusoidal;

    fn compute(p: &Params) -> Sinusoidal {
        compute(p.d.max(2), p.base, p.len.max(1))
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<SinusoidalDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sinusoidal {
    pub d: usize,
    pub base: f64,
    /// (len, d): PE(pos, 2i) = sin(pos ω_i), PE(pos, 2i+1) = cos(pos ω_i)
    pub table: Vec<Vec<f64>>,
    /// The plotted columns (even, so sines) and their wavelengths 2π / ω_i.
    pub columns: Vec<usize>,
    pub wavelengths: Vec<f64>,
    /// PE(p) · PE(q) for all pairs: (len, len)
    pub similarity: Vec<Vec<f64>>,
}

pub fn compute(d: usize, base: f64, len: usize) -> Sinusoidal {
    let d = d.max(2) & !1; // even: dimensions come in (sin, cos) pairs
    let pe = sinusoidal(len, d, base); // (len, d)

    // PE(p)·PE(q) = Σᵢ cos(ωᵢ (p − q)) (sin a sin b + cos a cos b = cos(a − b)), and cos is even,
    // so it is Σᵢ cos(ωᵢ |p − q|) = PE(|p − q|)·PE(0): the sum of the cosine columns of row
    // |p − q|. One sum per offset instead of the (len, d) x (d, len) product;
    // tests/book/positional_block.rs checks the result against the dot products, and the browser
    // test recomputes them.
    let by_offset: Vec<f64> = (0..len).map(|o| (1..d).step_by(2).map(|j| pe[[o, j]]).sum()).collect();
    let sim = ndarray::Array2::from_shape_fn((len, len), |(p, q)| by_offset[p.abs_diff(q)]);
    let columns: Vec<usize> = [0, 2, d / 4, d / 2].iter().map(|&c| c & !1).collect();
    Sinusoidal {
        d,
        base,
        wavelengths: columns.iter().map(|&c| 2.0 * std::f64::consts::PI / frequency(c / 2, d, base)).collect(),
        columns,
        table: pe.rows().into_iter().map(|r| r.to_vec()).collect(),
        similarity: sim.rows().into_iter().map(|r| r.to_vec()).collect(),
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `sinusoidal`: the table, four of its columns, and the similarity of positions.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;

    use super::{Sinusoidal, SinusoidalDemo};
    use crate::kit::plot::heatmap::{draw_heatmap, HeatmapSpec};
    use crate::kit::plot::{area, err, fit_canvas, legend_band, style_mesh, Mark};
    use crate::kit::theme::Palette;
    use crate::kit::DemoCtx;

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<SinusoidalDemo>(ctx);
        let (table, lines, sim) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
        ctx.paint(move |pal| {
            let (t, l, s) = (table.get()?, lines.get()?, sim.get()?);
            let pal = *pal;
            Some(out.with(|o| {
                let (len, d) = (o.table.len(), o.d);
                let f = fit_canvas(&t, 0.55, 240.0, 420.0);
                let root = area(&t, &pal)?;
                // position 0 at the top, like every table of positions in the book (wpe's, RoPE's)
                let value = |r: usize, c: usize| o.table[r][c];
                draw_heatmap(
                    &t,
                    &root,
                    &f,
                    &pal,
                    &HeatmapSpec {
                        rows: len,
                        cols: d,
                        value: &value,
                        vmin: -1.0,
                        vmax: 1.0,
                        x_range: (0.0, d as f64),
                        y_range: (0.0, len as f64),
                        rows_down: true,
                        x_integer: true,
                        x_desc: "dimension",
                        y_desc: "position",
                        bar_label: "PE",
                    },
                )?;
                draw_lines(&l, &pal, o)?;
                let f = fit_canvas(&s, 0.8, 240.0, 460.0);
                let root = area(&s, &pal)?;
                let lo = o.similarity.iter().flatten().copied().fold(f64::INFINITY, f64::min);
                let value = |r: usize, c: usize| o.similarity[r][c];
                draw_heatmap(
                    &s,
                    &root,
                    &f,
                    &pal,
                    &HeatmapSpec {
                        rows: len,
                        cols: len,
                        value: &value,
                        vmin: lo,
                        vmax: d as f64 / 2.0,
                        x_range: (0.0, len as f64),
                        y_range: (0.0, len as f64),
                        rows_down: true,
                        x_integer: true,
                        x_desc: "position q",
                        y_desc: "position p",
                        bar_label: "PE(p)·PE(q)",
                    },
                )
                .map(|_| ())
            }))
        });
        let labels = [
            "Heatmap of the sinusoidal encoding: positions by dimensions",
            "Line plot of four dimensions of the encoding against position",
            "Heatmap of the dot product between the encodings of every two positions",
        ];
        let numbers = move || {
            out.with(|o| {
                crate::kit::number_table(
                    "The first 16 positions of the four plotted dimensions".into(),
                    std::iter::once("position".to_string())
                        .chain(o.columns.iter().map(|c| format!("dim {c}")))
                        .collect(),
                    (0..o.table.len().min(16))
                        .map(|p| {
                            let row = o.columns.iter().map(|&c| format!("{:.4}", Signed(o.table[p][c])));
                            std::iter::once(p.to_string()).chain(row).collect()
                        })
                        .collect(),
                )
            })
        };
        view! {
            <canvas node_ref=table class="plot" role="img" aria-label=labels[0]></canvas>
            <canvas node_ref=lines class="plot" role="img" aria-label=labels[1]></canvas>
            <canvas node_ref=sim class="plot" role="img" aria-label=labels[2]></canvas>
            {move || ctx.show_numbers.get().then(numbers)}
        }
        .into_any()
    }

    fn draw_lines(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &Sinusoidal) -> Result<(), String> {
        let f = fit_canvas(canvas, 0.4, 220.0, 320.0);
        let root = area(canvas, pal)?;
        let colours = [pal.orange, pal.blue, pal.green, pal.muted];
        let labels: Vec<String> = o
            .columns
            .iter()
            .zip(&o.wavelengths)
            .map(|(c, w)| format!("dim {c} (wavelength {w:.1})", w = Signed(w)))
            .collect();
        let items: Vec<(Mark, RGBColor, &str)> =
            labels.iter().enumerate().map(|(i, l)| (Mark::Line, colours[i], l.as_str())).collect();
        let plot = legend_band(&root, &f, pal, &items)?;
        let len = o.table.len();
        let mut chart = ChartBuilder::on(&plot)
            .margin(f.px(10.0))
            .x_label_area_size(f.px(36.0))
            .y_label_area_size(f.px(40.0))
            .build_cartesian_2d(0f64..(len - 1) as f64, -1.1f64..1.1f64)
            .map_err(err)?;
        style_mesh(&mut chart, &f, pal, "position", "PE").y_labels(5).draw().map_err(err)?;
        for (i, &c) in o.columns.iter().enumerate() {
            chart
                .draw_series(LineSeries::new(
                    (0..len).map(|p| (p as f64, o.table[p][c])),
                    colours[i].stroke_width(f.px(2.0)),
                ))
                .map_err(err)?;
        }
        root.present().map_err(err)
    }
}
