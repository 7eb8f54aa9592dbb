//! Demo `wpe`: a bundled GPT-2 model's learned position embeddings and how similar positions
//! are to each other (chapter "positional"). The table is read from the model file: the view
//! fetches it, the tests read it from `static/models/`, and both compute with [`table`].

use ndarray::Array2;
use serde::Serialize;

use super::{spec, Demo, DemoSpec, Reader};
use crate::formats::safetensors::SafeTensors;
use crate::numerics::positional::{cosine_matrix, mean_by_offset};

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
    /// Without the model file: which model and offset (the real numbers come from [`Demo::load`]).
    type Output = Inputs;

    fn compute(p: &Params) -> Inputs {
        Inputs {
            model: p.model.key(),
            offset: p.offset,
            note: "The table is read from the model file in the browser; the page's Download data adds it.",
        }
    }

    fn load(p: &Params, read: &mut Reader) -> Option<Result<serde_json::Value, String>> {
        let out = read(&model_path(p.model)).and_then(|bytes| table(&bytes)).map(|t| t.to_json(p.offset));
        Some(out)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

/// Where a bundled model's weights are, under the site's root.
pub fn model_path(model: Model) -> String {
    format!("models/{}/model.safetensors", model.key())
}

/// A model's position table and the similarities the demo draws.
#[derive(Debug, PartialEq)]
pub struct Table {
    /// (P, d): one learned vector per position
    pub wpe: Array2<f64>,
    /// (P, P): the cosine similarity of every two positions
    pub sim: Array2<f64>,
    /// (P,): the mean similarity of positions k apart, for k = 0..P
    pub by_offset: Vec<f64>,
}

impl Table {
    /// What "Download data" writes: the table, the mean similarity by offset, and the readout's numbers.
    pub fn to_json(&self, chosen: usize) -> serde_json::Value {
        let wpe: Vec<Vec<f64>> = self.wpe.rows().into_iter().map(|r| r.to_vec()).collect();
        let k = offset(chosen, self.wpe.nrows());
        serde_json::json!({
            "wpe": wpe,
            "mean_cosine_by_offset": self.by_offset,
            "offset": k,
            "mean_cosine_at_offset": self.by_offset.get(k),
        })
    }
}

/// Reads `wpe.weight` from a model's safetensors bytes and computes the similarities.
pub fn table(bytes: &[u8]) -> Result<Table, String> {
    let st = SafeTensors::parse(bytes).map_err(|e| e.to_string())?;
    let info = st
        .tensors
        .get("wpe.weight")
        .or_else(|| st.tensors.get("transformer.wpe.weight"))
        .ok_or("the model has no wpe.weight")?;
    let [p, d] = info.shape[..] else { return Err(format!("wpe.weight has shape {:?}", info.shape)) };
    if p < 2 {
        return Err(format!("wpe.weight has {p} positions; the demo needs at least 2"));
    }
    let wpe = Array2::from_shape_vec((p, d), st.to_f32(info).into_iter().map(f64::from).collect())
        .map_err(|e| e.to_string())?;
    let sim = cosine_matrix(wpe.view()); // (P, d) -> (P, P)
    let by_offset = mean_by_offset(&sim);
    Ok(Table { wpe, sim, by_offset })
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

    use crate::numerics::format::Signed;
    use std::sync::Arc;

    use leptos::html::Canvas;
    use leptos::prelude::*;

    use super::{model_path, offset, table, Params, Table};
    use crate::kit::plot::heatmap::{draw_heatmap, HeatmapSpec};
    use crate::kit::plot::{area, fit_canvas};
    use crate::kit::DemoCtx;

    pub fn view(ctx: DemoCtx) -> AnyView {
        let params = ctx.params::<Params>();
        let loaded = RwSignal::new(None::<Arc<Table>>);
        let model = Memo::new(move |_| params.with(|p| p.model));
        Effect::new(move |_| {
            let name = model.get();
            loaded.set(None);
            leptos::task::spawn_local(async move {
                let bytes = crate::kit::browser::fetch_bytes(&format!("/{}", model_path(name))).await;
                match bytes.and_then(|b| table(&b)) {
                    Ok(t) => {
                        ctx.computed.set(Some(t.to_json(params.with_untracked(|p| p.offset))));
                        loaded.set(Some(Arc::new(t)));
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
            Some(loaded.with(|t| {
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
        // The right plot's diagonals: the mean similarity of positions k apart, for every k.
        let numbers = move || {
            loaded.with(|t| {
                t.as_ref().map(|t| {
                    crate::kit::number_table(
                        "Mean cosine similarity of positions k apart".into(),
                        vec!["offset k".into(), "mean cosine".into()],
                        t.by_offset
                            .iter()
                            .enumerate()
                            .map(|(k, &c)| vec![k.to_string(), format!("{:.4}", Signed(c))])
                            .collect(),
                    )
                })
            })
        };
        let readout = move || {
            loaded.with(|t| {
                let t = t.as_ref()?;
                let p = t.wpe.nrows();
                let k = offset(params.with(|q| q.offset), p);
                Some(format!(
                    "{p} positions × {} dimensions. Mean cosine similarity of positions 1 apart: {:.2}; {k} apart: \
                     {:.2}.",
                    t.wpe.ncols(),
                    Signed(t.by_offset[1]),
                    Signed(t.by_offset[k])
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
            // A status: it says "Loading…" until the table is in (the browser tests wait for that).
            <p class="readout" role="status">
                {move || readout().unwrap_or_else(|| "Loading the model's position table…".into())}
            </p>
            {move || ctx.show_numbers.get().then(numbers)}
        }
        .into_any()
    }
}
