//! Demo `wpe`: a bundled GPT-2 model's learned position embeddings and how similar positions
//! are to each other (chapter "positional"). The table is read from the model file in the
//! browser; `data` returns the inputs and the view adds the computed numbers.

use serde::Serialize;

use super::{spec, Demo, DemoSpec};

crate::options! {
    /// The bundled models (the URL value is the model's folder under `/models/`).
    pub enum Model {
        Stories = ("stories", "Pet stories (128 positions, width 128)"),
        Induction = ("induction", "Induction (64 positions, width 64)"),
    }
}

crate::params! {
    pub struct Params {
        model: Model = Param::choice("model", "Model", Model::OPTIONS, 0),
        /// the distance between positions whose mean similarity the readout quotes
        offset: usize = Param::int("offset", "Offset between positions", 1, 100, 30),
    }
}

pub struct WpeDemo;

impl Demo for WpeDemo {
    const ID: &'static str = "wpe";
    const TITLE: &'static str = "A learned position table";
    const CAPTION: &'static str = "The wpe table of a small GPT-2 trained for this book: one learned vector per \
        position (the first map), and the cosine similarity of every pair of positions (the second).";
    type Params = Params;
    /// The table is read from the model file in the view: without it, which model and offset.
    type Output = Inputs;

    fn compute(p: &Params) -> Inputs {
        Inputs {
            model: p.model.key(),
            offset: p.offset,
            note: "The table is read from the model file in the browser; the page's Download data adds it.",
        }
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<WpeDemo>();

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inputs {
    pub model: &'static str,
    pub offset: usize,
    pub note: &'static str,
}

/// The offset whose mean similarity the readout quotes: the chosen one, clamped to P − 1.
pub fn offset(chosen: usize, positions: usize) -> usize {
    chosen.max(1).min(positions.saturating_sub(1).max(1))
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `wpe`: fetches a bundled model's safetensors file, reads its `wpe.weight`, and draws
    //! the table and the cosine similarity between positions.

    use std::sync::Arc;

    use leptos::html::Canvas;
    use leptos::prelude::*;
    use ndarray::Array2;

    use super::{offset, Params};
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
        let params = ctx.params::<Params>();
        let table = RwSignal::new(None::<Arc<Table>>);
        let model = Memo::new(move |_| params.with(|p| p.model));
        Effect::new(move |_| {
            let name = model.get();
            table.set(None);
            leptos::task::spawn_local(async move {
                match fetch_wpe(name.key()).await {
                    Ok(t) => {
                        let wpe: Vec<Vec<f64>> = t.wpe.rows().into_iter().map(|r| r.to_vec()).collect();
                        let out = serde_json::json!({ "wpe": wpe, "mean_cosine_by_offset": t.by_offset });
                        ctx.computed.set(Some(out));
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
            let k = params.with(|p| p.offset);
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
                let k = k.max(1).min(p - 1) as f64;
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
                let k = offset(params.with(|q| q.offset), p);
                Some(format!(
                    "{p} positions × {} dimensions. Mean cosine similarity of positions 1 apart: {:.2}; {k} apart: \
                     {:.2}.",
                    t.wpe.ncols(),
                    t.by_offset[1],
                    t.by_offset[k]
                ))
            })
        };
        view! {
            <div class="plot-row">
                <canvas node_ref=left class="plot" role="img"
                    aria-label="Heatmap of the learned position table: position against dimension"></canvas>
                <canvas node_ref=right class="plot" role="img"
                    aria-label="Heatmap of the cosine similarity between every two positions"></canvas>
            </div>
            <p class="readout">{move || readout().unwrap_or_else(|| "Reading the model's position table…".into())}</p>
        }
        .into_any()
    }
}
