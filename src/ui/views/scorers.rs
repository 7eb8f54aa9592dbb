//! View of `scorers`: the weights of four scoring functions side by side.

use leptos::html::Canvas;
use leptos::prelude::*;

use crate::demos::scorers::from_values;
use crate::ui::demo_frame::DemoCtx;
use crate::ui::plot::bars::{draw_bars, Bars};

pub fn view(ctx: DemoCtx) -> AnyView {
    let out = Memo::new(move |_| ctx.values.with(from_values));
    let canvas = NodeRef::<Canvas>::new();
    ctx.paint(move |pal| {
        let c = canvas.get()?;
        let pal = *pal;
        Some(out.with(|o| {
            let cats: Vec<String> = (0..o.keys.len()).map(|i| format!("k{i}")).collect();
            let colours = [pal.orange, pal.blue, pal.green, pal.muted];
            let series: Vec<(&str, plotters::style::RGBColor, &[f64])> = (0..4)
                .map(|s| (["dot", "scaled dot", "general", "additive"][s], colours[s], o.weights[s].as_slice()))
                .collect();
            draw_bars(
                &c,
                &pal,
                &Bars { categories: &cats, series: &series, x_desc: "key", y_desc: "weight", y_max: Some(1.0) },
            )
        }))
    });
    view! {
        <canvas node_ref=canvas class="plot" role="img" aria-label="Grouped bar chart: each key's weight under the four scoring functions"></canvas>
        {move || ctx.show_numbers.get().then(|| out.with(|o| super::number_table(
            "Scores (before the softmax)".into(),
            std::iter::once("key".to_string()).chain(o.names.iter().map(|n| n.to_string())).collect(),
            (0..o.keys.len()).map(|i| std::iter::once(format!("k{i}")).chain((0..4).map(|s| format!("{:.4}", o.scores[s][i]))).collect()).collect(),
        )))}
    }
    .into_any()
}
