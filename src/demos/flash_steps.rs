//! Demo `flash-steps` (chapter "efficient"): tiled attention with the online softmax, one tile
//! of keys at a time, for one query row of a small random example; the result is checked
//! against the naive formula for every row, and the memory traffic of both is counted.

use ndarray::Array2;
use serde::Serialize;

use super::{spec, Demo, DemoSpec};
use crate::numerics::flash::{memory_traffic, naive_attention, online_row, tiled_attention};
use crate::numerics::rng::normal_matrix;

crate::params! {
    pub struct Params {
        n: usize = Param::int("n", "Tokens n", 2, 16, 8),
        d: usize = Param::int("d", "Head size d", 2, 8, 4),
        tile: usize = Param::int("tile", "Keys per tile", 1, 8, 3),
        /// 0-based, like every position in the book (older links said `row`, counted from 1);
        /// the slider ends at n − 1
        row: usize = Param::int_formerly("query", "Query row", 0, 15, 0, "row", 1),
        /// how many tiles the query row has met so far (the slider ends at the last tile)
        step: usize = Param::int("step", "Tiles processed", 0, 16, 1),
        seed: u32 = Param::seed("seed", "Example", 7),
    }
}

pub struct FlashStepsDemo;

impl Demo for FlashStepsDemo {
    const ID: &'static str = "flash-steps";
    const TITLE: &'static str = "FlashAttention, one tile at a time";
    const CAPTION: &'static str =
        "One query row meets the keys a tile at a time. It keeps only the running maximum m, the running sum ℓ \
        and the accumulated output; when m grows, the old sums are rescaled by exp(m_old − m_new). After the last \
        tile acc/ℓ is the naive output, checked here for every row.";
    type Params = Params;
    const MAIN: &'static [&'static str] = &["step", "query", "tile"];
    type Output = FlashSteps;
    /// No "Show numbers": its numbers are always shown in the tables under the plot.
    const NUMBERS: bool = false;

    fn compute(p: &Params) -> FlashSteps {
        compute(p.n, p.d, p.tile, p.row, p.step, p.seed)
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<FlashStepsDemo>();

/// The state of the online softmax after one tile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Keys j0 .. j1 (0-based, end exclusive).
    pub keys: (usize, usize),
    pub tile_max: f64,
    /// None before the first tile (m = −∞).
    pub m_before: Option<f64>,
    pub m_after: f64,
    /// exp(m_before − m_after), 0 on the first tile.
    pub rescale: f64,
    pub l: f64,
    pub acc: Vec<f64>,
    /// acc / ℓ: the output if the keys stopped here.
    pub partial: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlashSteps {
    pub n: usize,
    pub d: usize,
    pub tile: usize,
    /// 0-based.
    pub row: usize,
    /// Tiles processed so far, of `steps.len()`.
    pub shown: usize,
    /// The row's scores qᵀkⱼ/√d and its naive softmax weights.
    pub scores: Vec<f64>,
    pub weights: Vec<f64>,
    pub steps: Vec<Step>,
    /// The row's output, tiled (after every tile) and naive.
    pub tiled: Vec<f64>,
    pub naive: Vec<f64>,
    /// Largest |tiled − naive| over the whole n × d output.
    pub max_diff: f64,
    /// Elements moved to and from main memory for this n × n attention: (naive, tiled with
    /// blocks of `tile` query rows), and the same for n = 4096, d = 64, blocks of 128.
    pub traffic: (u64, u64),
    pub traffic_large: (u64, u64),
}

/// Tolerance the page checks tiled against naive with (f32 arithmetic in another order).
pub const TOL: f64 = 1e-6;

pub fn compute(n: usize, d: usize, tile: usize, row: usize, shown: usize, seed: u32) -> FlashSteps {
    let (n, d, tile) = (n.max(1), d.max(1), tile.max(1));
    // The page's slider ends at n − 1.
    let row = row.min(n - 1);
    // Queries and keys with spread-out scores, so the running maximum moves between tiles.
    let f32s = |m: Array2<f64>| m.mapv(|x| x as f32);
    let seed = u64::from(seed) * 3;
    let q = f32s(normal_matrix(n, d, seed, 1.5));
    let k = f32s(normal_matrix(n, d, seed + 1, 1.5));
    let v = f32s(normal_matrix(n, d, seed + 2, 1.0));
    let mut steps = Vec::new();
    let out_row = online_row(q.row(row), k.view(), v.view(), n, tile, |t| {
        steps.push(Step {
            keys: t.keys,
            tile_max: t.scores.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(f64::from(b))),
            m_before: t.m_before.is_finite().then_some(f64::from(t.m_before)),
            m_after: f64::from(t.m_after),
            rescale: f64::from(t.rescale),
            l: f64::from(t.l),
            acc: t.acc.iter().map(|&x| f64::from(x)).collect(),
            partial: t.acc.iter().map(|&x| f64::from(x / t.l)).collect(),
        })
    });
    let naive = naive_attention(q.view(), k.view(), v.view(), false);
    let tiled = tiled_attention(q.view(), k.view(), v.view(), false, tile);
    let max_diff = (&tiled - &naive).iter().fold(0.0f64, |m, e| m.max(f64::from(e.abs())));
    let scale = 1.0 / (d as f64).sqrt();
    let scores: Vec<f64> = k.rows().into_iter().map(|kj| f64::from(q.row(row).dot(&kj)) * scale).collect();
    let top = scores.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let z: f64 = scores.iter().map(|s| (s - top).exp()).sum();
    FlashSteps {
        n,
        d,
        tile,
        row,
        shown: shown.min(steps.len()),
        weights: scores.iter().map(|s| (s - top).exp() / z).collect(),
        scores,
        steps,
        tiled: out_row.iter().map(|&x| f64::from(x)).collect(),
        naive: naive.row(row).iter().map(|&x| f64::from(x)).collect(),
        max_diff,
        traffic: memory_traffic(n, d, tile),
        traffic_large: memory_traffic(4096, 64, 128),
    }
}

#[cfg(target_arch = "wasm32")]
mod view {
    //! View of `flash-steps`: the row's scores grouped in tiles, the online-softmax state after
    //! each processed tile, buttons to step, the check against the naive output and the counted
    //! memory traffic.

    use crate::numerics::format::Signed;
    use leptos::html::Canvas;
    use leptos::prelude::*;
    use plotters::prelude::*;

    use super::{FlashSteps, FlashStepsDemo, Params, TOL};
    use crate::kit::plot::{area, err, fit_canvas, legend_band, style_mesh, Mark};
    use crate::kit::DemoCtx;

    fn f3(x: f64) -> String {
        format!("{x:.3}", x = Signed(x))
    }

    fn vector(v: &[f64]) -> String {
        format!("({})", v.iter().map(|&x| f3(x)).collect::<Vec<_>>().join(", "))
    }

    /// Millions of elements, or plain below ten thousand.
    fn count(x: u64) -> String {
        if x >= 10_000 {
            format!("{:.1} M", Signed(x as f64 / 1e6))
        } else {
            x.to_string()
        }
    }

    /// The row's keys as columns: tile, score, exp(s − m) for the keys seen so far (m = the
    /// running maximum now), and the naive weights.
    fn keys_table(o: &FlashSteps) -> impl IntoView {
        let last = o.shown.checked_sub(1).and_then(|i| o.steps.get(i));
        let seen = last.map_or(0, |s| s.keys.1);
        let m = last.map(|s| s.m_after);
        let cell = |j: usize| if j < seen { "seen" } else { "unseen" };
        let tile_of = |j: usize| j / o.tile;
        let head = (0..o.n)
            .map(|j| view! { <th scope="col" class=format!("{} t{}", cell(j), tile_of(j) % 2)>{format!("k{j}")}</th> })
            .collect_view();
        let row = |label: &'static str, f: &dyn Fn(usize) -> String| {
            let cells = (0..o.n)
                .map(|j| view! { <td class=format!("{} t{}", cell(j), tile_of(j) % 2)>{f(j)}</td> })
                .collect_view();
            view! { <tr><th scope="row">{label}</th>{cells}</tr> }
        };
        let exp = |j: usize| match m {
            Some(m) if j < seen => f3((o.scores[j] - m).exp()),
            _ => "·".into(),
        };
        let caption = format!("Query row {}: its keys in tiles of {}", o.row, o.tile);
        let label = caption.clone();
        view! {
            <div class="table-wrap" role="region" tabindex="0" aria-label=label>
                <table class="numbers flash-keys">
                    <caption>{caption}</caption>
                    <thead><tr><th scope="col">"key"</th>{head}</tr></thead>
                    <tbody>
                        {row("tile", &|j| (tile_of(j) + 1).to_string())}
                        {row("score s", &|j| f3(o.scores[j]))}
                        {row("exp(s − m)", &exp)}
                        {row("softmax (naive)", &|j| f3(o.weights[j]))}
                    </tbody>
                </table>
            </div>
        }
    }

    /// The row's scores against the key index: keys seen so far filled, the rest hollow; the
    /// running maximum m after each processed tile as a step line; dashed lines between tiles.
    fn draw_scores(
        c: &web_sys::HtmlCanvasElement,
        pal: &crate::kit::theme::Palette,
        o: &FlashSteps,
    ) -> Result<(), String> {
        let f = fit_canvas(c, 0.45, 200.0, 280.0);
        let root = area(c, pal)?;
        let rest = legend_band(
            &root,
            &f,
            pal,
            &[
                (Mark::Dot, pal.blue, "score sⱼ (filled: tile processed)"),
                (Mark::Line, pal.orange, "running maximum m"),
            ],
        )?;
        let lo = o.scores.iter().copied().fold(f64::INFINITY, f64::min).min(0.0);
        let hi = o.scores.iter().copied().fold(f64::NEG_INFINITY, f64::max).max(0.0);
        let pad = 0.1 * (hi - lo).max(1e-6);
        let mut chart = ChartBuilder::on(&rest)
            .margin(f.px(10.0))
            .x_label_area_size(f.px(34.0))
            .y_label_area_size(f.px(46.0))
            .build_cartesian_2d(-0.5..o.n as f64 - 0.5, lo - pad..hi + pad)
            .map_err(err)?;
        style_mesh(&mut chart, &f, pal, "key j", "score")
            .x_labels(o.n.min(16))
            .x_label_formatter(&|v| {
                if (v - v.round()).abs() < 1e-9 {
                    format!("{v:.0}", v = Signed(v))
                } else {
                    String::new()
                }
            })
            .draw()
            .map_err(err)?;
        for b in (o.tile..o.n).step_by(o.tile) {
            let x = b as f64 - 0.5; // between key b − 1 and key b
            chart
                .draw_series(DashedLineSeries::new(
                    [(x, lo - pad), (x, hi + pad)],
                    f.px(4.0),
                    f.px(3.0),
                    pal.muted.stroke_width(f.px(1.0)),
                ))
                .map_err(err)?;
        }
        let seen = o.shown.checked_sub(1).and_then(|i| o.steps.get(i)).map_or(0, |s| s.keys.1);
        for (j, &s) in o.scores.iter().enumerate() {
            let style = if j < seen { pal.blue.filled() } else { pal.blue.stroke_width(f.px(1.5)) };
            chart.draw_series([Circle::new((j as f64, s), f.px(4.5), style)]).map_err(err)?;
        }
        for st in &o.steps[..o.shown] {
            let (a, b) = (st.keys.0 as f64 - 0.5, st.keys.1 as f64 - 0.5);
            chart
                .draw_series(LineSeries::new([(a, st.m_after), (b, st.m_after)], pal.orange.stroke_width(f.px(2.5))))
                .map_err(err)?;
        }
        root.present().map_err(err)
    }

    fn steps_table(o: &FlashSteps) -> impl IntoView {
        let rows = o.steps[..o.shown]
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let m = match s.m_before {
                    Some(b) if b < s.m_after => format!("{} → {}", f3(b), f3(s.m_after)),
                    Some(_) => format!("{} (kept)", f3(s.m_after)),
                    None => format!("−∞ → {}", f3(s.m_after)),
                };
                view! {
                    <tr>
                        <td>{i + 1}</td>
                        <td>{format!("k{}–k{}", s.keys.0, s.keys.1 - 1)}</td>
                        <td>{f3(s.tile_max)}</td>
                        <td>{m}</td>
                        <td>{f3(s.rescale)}</td>
                        <td>{f3(s.l)}</td>
                        <td>{vector(&s.partial)}</td>
                    </tr>
                }
            })
            .collect_view();
        let heads =
            ["tile", "keys", "tile max", "running max m", "rescale exp(m_old − m)", "running sum ℓ", "acc / ℓ so far"]
                .map(|h| view! { <th scope="col">{h}</th> })
                .collect_view();
        view! {
            <div class="table-wrap" role="region" tabindex="0" aria-label="The online softmax after each tile">
                <table class="numbers flash-steps">
                    <caption>"The online softmax after each tile"</caption>
                    <thead><tr>{heads}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        }
    }

    pub fn view(ctx: DemoCtx) -> AnyView {
        let out = crate::demos::output::<FlashStepsDemo>(ctx);
        let params = ctx.params::<Params>();
        let limits = move || {
            params.with(|p| vec![("query", p.n.max(1) as i64 - 1), ("step", p.n.div_ceil(p.tile.max(1)) as i64)])
        };
        ctx.limit_ints(<super::FlashStepsDemo as crate::demos::Demo>::ID, limits, DemoCtx::settings_limit);
        let step_by = move |delta: i64| {
            let total = out.with_untracked(|o| o.steps.len()) as i64;
            ctx.set_params::<Params>(|p| p.step = (p.step as i64 + delta).clamp(0, total) as usize);
        };
        let status = move || {
            out.with(|o| match o.shown {
                0 => format!("No tile yet: m = −∞, ℓ = 0, acc = 0. {} tiles to go.", o.steps.len()),
                k if k < o.steps.len() => format!(
                    "After tile {k} of {}: acc/ℓ is the attention over the first {} keys only.",
                    o.steps.len(),
                    o.steps[k - 1].keys.1
                ),
                k => format!("All {k} tiles done: acc/ℓ = {} is the output.", vector(&o.tiled)),
            })
        };
        let check = move || {
            out.with(|o| {
                let ok = o.max_diff <= TOL;
                let text = format!(
                    "Naive softmax(QKᵀ/√d)V for this row: {}. Over all {} × {} outputs, tiled and naive differ by \
                     at most {} {} 10⁻⁶.",
                    vector(&o.naive),
                    o.n,
                    o.d,
                    crate::numerics::format::num(o.max_diff),
                    if ok { "≤" } else { ">" }
                );
                let (class, mark) = if ok { ("readout check ok", "✓ ") } else { ("readout check bad", "✗ ") };
                view! { <p class=class role="status">{mark}{text}</p> }
            })
        };
        let traffic = move || {
            out.with(|o| {
                let ((a, b), (c, d)) = (o.traffic, o.traffic_large);
                format!(
                    "Memory traffic, counted in elements read or written to main memory: here (n = {}, d = {}, \
                     blocks of {} queries) naive {} against tiled {}; at n = 4096, d = 64, blocks of 128: naive {} \
                     against tiled {}, {:.1}× less, and no n × n matrix stored.",
                    o.n,
                    o.d,
                    o.tile,
                    count(a),
                    count(b),
                    count(c),
                    count(d),
                    Signed(c as f64 / d as f64)
                )
            })
        };
        let canvas = NodeRef::<Canvas>::new();
        ctx.paint(move |pal| {
            let c = canvas.get()?;
            Some(out.with(|o| draw_scores(&c, pal, o)))
        });
        let at_start = move || out.with(|o| o.shown == 0);
        let at_end = move || out.with(|o| o.shown >= o.steps.len());
        let label = "The row's scores by key, the tiles processed so far and the running maximum";
        view! {
            <div class="row-actions">
                <button type="button" on:click=move |_| step_by(-1) disabled=at_start>"← Previous tile"</button>
                <button type="button" on:click=move |_| step_by(1) disabled=at_end>"Next tile →"</button>
                <button type="button" on:click=move |_| step_by(16) disabled=at_end>"Run to the end"</button>
            </div>
            <p class="readout flash-status" role="status">{status}</p>
            <canvas node_ref=canvas class="plot" role="img" aria-label=label></canvas>
            {move || out.with(keys_table)}
            {move || out.with(steps_table)}
            {check}
            <p class="muted flash-traffic">{traffic}</p>
        }
        .into_any()
    }
}
