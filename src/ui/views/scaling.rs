//! View of `scaling`: histograms of qᵀk with and without 1/√d, and the softmax over n keys.

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;

use crate::demos::scaling::{from_values, Histogram};
use crate::ui::demo_frame::DemoCtx;
use crate::ui::plot::bars::{draw_bars, Bars};
use crate::ui::plot::{area, err, fit_canvas, style_mesh};
use crate::ui::theme::Palette;

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(from_values));
    let (raw, scaled, soft) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
    ctx.paint(move |pal| {
        let (a, b, c) = (raw.get()?, scaled.get()?, soft.get()?);
        let pal = *pal;
        Some(out.with(|o| {
            draw_hist(&a, &pal, &o.hist_raw, &format!("qᵀk (d = {}): variance {:.1}", o.d, o.var_raw), pal.orange)?;
            draw_hist(&b, &pal, &o.hist_scaled, &format!("qᵀk / √d: variance {:.2}", o.var_scaled), pal.blue)?;
            let cats: Vec<String> = (0..o.w_raw.len()).map(|i| i.to_string()).collect();
            draw_bars(
                &c,
                &pal,
                &Bars {
                    categories: &cats,
                    series: &[("softmax(qᵀk)", pal.orange, &o.w_raw), ("softmax(qᵀk / √d)", pal.blue, &o.w_scaled)],
                    x_desc: "keys, largest weight first",
                    y_desc: "weight",
                    y_max: Some(1.0),
                },
            )
        }))
    });
    view! {
        <div class="two-col">
            <canvas node_ref=raw class="plot" role="img" aria-label="Histogram of unscaled dot products"></canvas>
            <canvas node_ref=scaled class="plot" role="img" aria-label="Histogram of scaled dot products"></canvas>
        </div>
        <canvas node_ref=soft class="plot" role="img" aria-label="Bar chart of softmax weights over the keys, unscaled and scaled"></canvas>
        <p class="readout">{move || out.with(|o| format!(
            "Largest weight: {:.3} unscaled, {:.3} scaled by 1/√d.", o.w_raw[0], o.w_scaled[0]
        ))}</p>
        {move || ctx.show_numbers.get().then(|| out.with(|o| super::number_table(
            "Sorted softmax weights".into(),
            vec!["rank".into(), "softmax(qᵀk)".into(), "softmax(qᵀk/√d)".into()],
            (0..o.w_raw.len()).map(|i| vec![i.to_string(), format!("{:.4}", o.w_raw[i]), format!("{:.4}", o.w_scaled[i])]).collect(),
        )))}
    }
    .into_any()
}

fn draw_hist(
    canvas: &web_sys::HtmlCanvasElement,
    pal: &Palette,
    h: &Histogram,
    title: &str,
    colour: RGBColor,
) -> Result<(), String> {
    let f = fit_canvas(canvas, 0.62, 200.0, 300.0);
    let root = area(canvas, pal)?;
    let top = h.counts.iter().copied().max().unwrap_or(1).max(1) as f64 * 1.15;
    let hi = h.lo + h.width * h.counts.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .margin(f.px(10.0))
        .caption(title, f.font(13.0, pal.fg))
        .x_label_area_size(f.px(36.0))
        .y_label_area_size(f.px(52.0)) // room for "count" beside four-digit ticks
        .build_cartesian_2d(h.lo..hi, 0f64..top)
        .map_err(err)?;
    style_mesh(&mut chart, &f, pal, "score", "count").x_labels(5).y_labels(4).draw().map_err(err)?;
    chart
        .draw_series(h.counts.iter().enumerate().map(|(i, &c)| {
            let x0 = h.lo + i as f64 * h.width;
            Rectangle::new([(x0, 0.0), (x0 + h.width * 0.95, c as f64)], colour.filled())
        }))
        .map_err(err)?;
    root.present().map_err(err)
}
