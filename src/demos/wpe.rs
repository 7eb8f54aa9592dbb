//! Demo `wpe`: a bundled GPT-2 model's learned position embeddings and how similar positions
//! are to each other (chapter "positional"). The table is read from the model file in the
//! browser; `data` returns the inputs and the view adds the computed numbers.

use super::DemoSpec;
use crate::state::{Param, Values};

pub static MODELS: &[(&str, &str)] =
    &[("stories", "Pet stories (128 positions, width 128)"), ("induction", "Induction (64 positions, width 64)")];

pub static PARAMS: &[Param] =
    &[Param::choice("model", "Model", MODELS, 0), Param::int("offset", "Offset between positions", 1, 100, 30)];

/// The offsets whose mean similarity the readout quotes (the chosen one is clamped to P − 1).
pub fn offset(v: &Values, positions: usize) -> usize {
    (v.int("offset").max(1) as usize).min(positions.saturating_sub(1).max(1))
}

fn data(v: &Values) -> Result<serde_json::Value, String> {
    Ok(serde_json::json!({
        "model": v.text("model"),
        "offset": v.int("offset"),
        "note": "The table is read from the model file in the browser; the page's Download data adds it.",
    }))
}

pub static SPEC: DemoSpec = DemoSpec {
    id: "wpe",
    title: "A learned position table",
    caption: "The wpe table of a small GPT-2 trained for this book: one learned vector per position (the first map), and the cosine similarity of every pair of positions (the second).",
    params: PARAMS,
    data,
    #[cfg(target_arch = "wasm32")]
    view: view::view,
};

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `wpe`: fetches a bundled model's safetensors file, reads its `wpe.weight`, and draws
    //! the table and the cosine similarity between positions.

    use std::sync::Arc;

    use leptos::html::Canvas;
    use leptos::prelude::*;
    use ndarray::Array2;

    use super::offset;
    use crate::formats::safetensors::SafeTensors;
    use crate::kit::plot::heatmap::{draw_heatmap, HeatmapSpec};
    use crate::kit::plot::{area, fit_canvas};
    use crate::kit::DemoCtx;
    use crate::numerics::positional::{cosine_matrix, mean_by_offset};

    #[derive(Debug, PartialEq)]
    struct Table {
        wpe: Array2<f64>,
        sim: Array2<f64>,
        by_offset: Vec<f64>,
    }

    async fn fetch_wpe(name: &str) -> Result<Table, String> {
        let url = format!("/models/{name}/model.safetensors");
        let bytes = crate::kit::browser::fetch_bytes(&url).await?;
        let st = SafeTensors::parse(&bytes).map_err(|e| e.to_string())?;
        let info = st
            .tensors
            .get("wpe.weight")
            .or_else(|| st.tensors.get("transformer.wpe.weight"))
            .ok_or("the model has no wpe.weight")?;
        let [p, d] = info.shape[..] else { return Err(format!("wpe.weight has shape {:?}", info.shape)) };
        let wpe = Array2::from_shape_vec((p, d), st.to_f32(info).into_iter().map(f64::from).collect())
            .map_err(|e| e.to_string())?;
        let sim = cosine_matrix(wpe.view());
        let by_offset = mean_by_offset(&sim);
        Ok(Table { wpe, sim, by_offset })
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let table = RwSignal::new(None::<Arc<Table>>);
        let model = Memo::new(move |_| ctx.values.with(|v| v.text("model").to_string()));
        Effect::new(move |_| {
            let name = model.get();
            table.set(None);
            leptos::task::spawn_local(async move {
                match fetch_wpe(&name).await {
                    Ok(t) => {
                        ctx.computed.set(Some(serde_json::json!({ "wpe": t.wpe.rows().into_iter().map(|r| r.to_vec()).collect::<Vec<_>>(), "mean_cosine_by_offset": t.by_offset })));
                        table.set(Some(Arc::new(t)));
                    }
                    Err(e) => ctx.error.set(Some(format!("Could not read the model's position table: {e}"))),
                }
            });
        });

        let left = NodeRef::<Canvas>::new();
        let right = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| {
            let (l, r) = (left.get()?, right.get()?);
            let pal = *pal;
            let k = ctx.values.with(|v| v.int("offset"));
            Some(table.with(|t| {
                let Some(t) = t.as_ref() else { return Ok(()) };
                let (p, d) = t.wpe.dim();
                let amp = t.wpe.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-12);
                let f = fit_canvas(&l, 0.9, 240.0, 420.0);
                let root = area(&l, &pal)?;
                let value = |row: usize, col: usize| t.wpe[[row, col]];
                draw_heatmap(
                    &l,
                    &root,
                    &f,
                    &pal,
                    &HeatmapSpec {
                        rows: p,
                        cols: d,
                        value: &value,
                        vmin: -amp,
                        vmax: amp,
                        x_range: (0.0, d as f64),
                        y_range: (0.0, p as f64),
                        rows_down: true,
                        x_integer: true,
                        x_desc: "dimension",
                        y_desc: "position",
                        bar_label: "value",
                    },
                )?;
                let f = fit_canvas(&r, 0.9, 240.0, 420.0);
                let root = area(&r, &pal)?;
                let value = |row: usize, col: usize| t.sim[[row, col]];
                let rect = draw_heatmap(
                    &r,
                    &root,
                    &f,
                    &pal,
                    &HeatmapSpec {
                        rows: p,
                        cols: p,
                        value: &value,
                        vmin: -1.0,
                        vmax: 1.0,
                        x_range: (0.0, p as f64),
                        y_range: (0.0, p as f64),
                        rows_down: true,
                        x_integer: true,
                        x_desc: "position q",
                        y_desc: "position p",
                        bar_label: "cosine",
                    },
                )?;
                // Mark the diagonal q = p + offset, whose mean the readout gives.
                let k = (k.max(1) as usize).min(p - 1) as f64;
                let (cw, ch) = (rect.w / p as f64, rect.h / p as f64);
                let g = crate::kit::plot::heatmap::context(&r)?;
                g.set_stroke_style_str(&crate::kit::plot::interned::rgb(pal.orange));
                g.set_line_width(2.0 * f.scale);
                g.begin_path();
                g.move_to(rect.x + k * cw, rect.y);
                g.line_to(rect.x + p as f64 * cw, rect.y + (p as f64 - k) * ch);
                g.stroke();
                Ok(())
            }))
        });
        let readout = move || {
            table.with(|t| {
                let t = t.as_ref()?;
                let p = t.wpe.nrows();
                let k = ctx.values.with(|v| offset(v, p));
                Some(format!(
                    "{p} positions × {} dimensions. Mean cosine similarity of positions 1 apart: {:.2}; {k} apart: {:.2}.",
                    t.wpe.ncols(),
                    t.by_offset[1],
                    t.by_offset[k]
                ))
            })
        };
        view! {
            <div class="plot-row">
                <canvas node_ref=left class="plot" role="img" aria-label="Heatmap of the learned position table: position against dimension"></canvas>
                <canvas node_ref=right class="plot" role="img" aria-label="Heatmap of the cosine similarity between every two positions"></canvas>
            </div>
            <p class="readout">{move || readout().unwrap_or_else(|| "Reading the model's position table…".into())}</p>
        }
        .into_any()
    }
}
