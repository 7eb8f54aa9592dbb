//! Demo `lookup`: a colour database queried by a typed word (chapter "soft-lookup").

use super::{spec, Demo, DemoSpec};
use crate::numerics::soft_lookup::{lookup, Lookup};

crate::params! {
    pub struct Params {
        /// the typed query, matched against every key's letter pairs
        query: String = Param::text("q", "Query word", 40, "blu"),
        /// β: the softmax's inverse temperature
        beta: f64 = Param::float("beta", "Sharpness β", 0.0, 100.0, 0.5, 10.0),
    }
}

pub struct LookupDemo;

impl Demo for LookupDemo {
    const ID: &'static str = "lookup";
    const TITLE: &'static str = "A soft lookup in a colour dictionary";
    const CAPTION: &'static str = "Each key's score is the cosine similarity of its letter pairs with the query; the \
        weights are a softmax of β × score; the answer is the weighted average of the colours.";
    type Params = Params;
    type Output = Lookup;

    fn compute(p: &Params) -> Lookup {
        lookup(&p.query, p.beta)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<LookupDemo>();

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of the `lookup` demo: key chips, weight bars coloured by each key's value, the blended
    //! answer as a swatch, and (on request) the scores and weights as a table.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;

    use super::{LookupDemo, Params};
    use crate::kit::plot::{area, err, fit_canvas, style_mesh};
    use crate::kit::theme::Palette;
    use crate::kit::DemoCtx;
    use crate::kit::{f4, number_table};
    use crate::numerics::soft_lookup::{Lookup, COLOURS};

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<LookupDemo>(ctx);
        let canvas = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| canvas.get().map(|c| out.with(|o| draw(&c, pal, o))));
        let answer = move || {
            out.with(|o| {
                let [r, g, b] = o.output.map(|x| x.round() as u8);
                let (i, w) =
                    o.weights.iter().copied().enumerate().fold((0, 0.0), |a, (i, w)| if w > a.1 { (i, w) } else { a });
                (format!("rgb({r}, {g}, {b})"), format!("Largest weight: {} ({:.2})", o.keys[i], Signed(w)))
            })
        };
        view! {
            <div class="lookup-demo">
                <div class="key-chips" role="group" aria-label="Keys: click one to use it as the query">
                    {COLOURS.iter().map(|(k, [r, g, b])| view! {
                        <button type="button" class="key-chip"
                            on:click=move |_| ctx.set_params(|p: &mut Params| p.query = k.to_string())>
                            <span class="chip-swatch" style=format!("background: rgb({r}, {g}, {b})")></span>{*k}
                        </button>
                    }).collect_view()}
                </div>
                <canvas node_ref=canvas class="plot" role="img"
                    aria-label="Bar chart: the attention weight on each key, coloured by the key's value"></canvas>
                <div class="answer">
                    <span class="swatch big" style=move || format!("background: {}", answer().0)></span>
                    <div>
                        <div>
                            <strong>"Returned value: "</strong>
                            <span class="answer-rgb">{move || answer().0}</span>
                        </div>
                        <div class="muted">{move || answer().1}</div>
                    </div>
                </div>
                {move || ctx.show_numbers.get().then(|| out.with(table))}
            </div>
        }
        .into_any()
    }

    fn table(o: &Lookup) -> impl IntoView {
        let rows = (0..o.keys.len())
            .map(|i| {
                let [r, g, b] = COLOURS[i].1;
                vec![o.keys[i].to_string(), format!("({r}, {g}, {b})"), f4(Some(o.scores[i])), f4(Some(o.weights[i]))]
            })
            .collect();
        number_table(
            "Score s(q, kᵢ) and weight αᵢ for each key".into(),
            vec!["key kᵢ".into(), "value vᵢ (RGB)".into(), "score sᵢ".into(), "weight αᵢ".into()],
            rows,
        )
    }

    fn draw(canvas: &web_sys::HtmlCanvasElement, pal: &Palette, o: &Lookup) -> Result<(), String> {
        let f = fit_canvas(canvas, 0.55, 300.0, 420.0);
        let root = area(canvas, pal)?;
        let n = o.keys.len();
        // Key i is drawn on row y = n − 1 − i, so the first key is at the top.
        let row = |i: usize| (n - 1 - i) as f64;
        let mut chart = ChartBuilder::on(&root)
            .margin(f.px(10.0))
            .x_label_area_size(f.px(40.0))
            .y_label_area_size(f.px(64.0))
            .build_cartesian_2d(0f64..1.08f64, -0.6f64..(n as f64 - 0.4))
            .map_err(err)?;
        let keys = o.keys.clone();
        style_mesh(&mut chart, &f, pal, "attention weight αᵢ", "")
            .y_labels(n)
            .y_label_formatter(&|y| {
                let r = y.round();
                if (y - r).abs() < 1e-6 && r >= 0.0 && (r as usize) < n {
                    keys[n - 1 - r as usize].to_string()
                } else {
                    String::new()
                }
            })
            .x_labels(6)
            .draw()
            .map_err(err)?;
        chart
            .draw_series((0..n).map(|i| {
                let [r, g, b] = COLOURS[i].1;
                Rectangle::new([(0.0, row(i) - 0.36), (o.weights[i], row(i) + 0.36)], RGBColor(r, g, b).filled())
            }))
            .map_err(err)?;
        // An outline, so that white and near-background bars stay visible.
        chart
            .draw_series((0..n).map(|i| {
                Rectangle::new([(0.0, row(i) - 0.36), (o.weights[i], row(i) + 0.36)], pal.muted.stroke_width(1))
            }))
            .map_err(err)?;
        chart
            .draw_series((0..n).map(|i| {
                Text::new(
                    format!("{:.2}", Signed(o.weights[i])),
                    (o.weights[i] + 0.01, row(i) + 0.25),
                    f.font(11.0, pal.fg),
                )
            }))
            .map_err(err)?;
        root.present().map_err(err)
    }
}
