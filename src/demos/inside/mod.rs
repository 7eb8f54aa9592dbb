//! Demo `inside` (chapter "Looking inside a model"): three tools of interpretability on a real
//! model in the compute worker. The logit lens reads the residual stream after every block as if
//! the model stopped there; activation patching writes the clean prompt's activations into the
//! corrupted prompt's run, one place at a time, and measures how much of the answer comes back;
//! the head detectors score every head on a repeated random sequence. The numbers come from the
//! worker's session (`session::inside`); this file holds the parameters, the queries and the
//! grids the view draws, DOM-free.

use serde::Serialize;

use super::{spec, Demo, DemoSpec, RunsOn};
use crate::formats::echo::echo;
use crate::numerics::format::Signed;
use crate::session::inside::{HeadScores, HeadsQuery, Lens, LensQuery, PatchQuery, Patching, Run, Sweep};
use crate::session::protocol::Candidate;
use crate::session::protocol::Request;

crate::options! {
    /// The model looked into: a bundled one, or a hub model this browser keeps from the chapter
    /// "A real model, live" (keys as that demo's, so a link names the same model).
    pub enum Model {
        Stories = ("stories", "Pet stories (GPT-2 family, 4 layers, bundled)"),
        Induction = ("induction", "Induction (GPT-2 family, 2 layers, bundled)"),
        StoriesLlama = ("stories-llama", "Pet stories, Llama family (bundled)"),
        Gpt2 = ("gpt2", "GPT-2 small (once downloaded in \"A real model, live\")"),
        Smollm2 = ("smollm2", "SmolLM2-135M (once downloaded in \"A real model, live\")"),
        Trained = ("trained", "Your trained model (opened from the training lab)"),
    }
}

crate::options! {
    pub enum Tool {
        Lens = ("lens", "Logit lens: what each layer would predict"),
        Patching = ("patching", "Activation patching: which activations carry the answer"),
        Heads = ("heads", "Head detectors: previous-token, induction and duplicate heads"),
    }
}

crate::options! {
    /// How many random letters the head detectors repeat.
    pub enum Letters {
        Ten = ("10", "10 letters, then the same 10"),
        Five = ("5", "5 letters, then the same 5"),
        Twenty = ("20", "20 letters, then the same 20"),
        Thirty = ("30", "30 letters, then the same 30"),
        /// for a small model's short window (the training lab's)
        Three = ("3", "3 letters, then the same 3"),
    }
}

impl Letters {
    pub fn n(self) -> usize {
        match self {
            Letters::Three => 3,
            Letters::Five => 5,
            Letters::Ten => 10,
            Letters::Twenty => 20,
            Letters::Thirty => 30,
        }
    }
}

crate::options! {
    /// What a patching sweep patches (`session::inside::Sweep`).
    pub enum Sweeps {
        Residual = ("residual", "The residual stream: every layer and position"),
        Heads = ("heads", "Each head's output"),
        Both = ("both", "Both"),
    }
}

/// The prompts the demo opens on: the real-model chapter's story with a different animal.
pub const CLEAN: &str = super::gpt2::DEFAULT_PROMPT;
pub const CORRUPT: &str = super::gpt2::DEFAULT_COMPARE;

crate::params! {
    pub struct Params {
        model: Model = Param::choice("model", "Model", Model::OPTIONS, 0),
        /// where GPT-2 small or SmolLM2 was downloaded from in "A real model, live" (empty: the hub)
        base: String = Param::text("base", "Checkpoint folder URL it was downloaded from (empty: the hub)", 500, ""),
        tool: Tool = Param::choice("tool", "Tool", Tool::OPTIONS, 0),
        prompt: String = Param::text("prompt", "Prompt (logit lens)", 400, CLEAN),
        /// a token's text whose probability the lens follows ("": the model's own last choice)
        track: String = Param::text("track", "Token to follow (empty: the model's choice)", 40, ""),
        clean: String = Param::text("clean", "Clean prompt (patching)", 400, CLEAN),
        corrupt: String = Param::text("corrupt", "Corrupted prompt, same number of tokens", 400, CORRUPT),
        answer: String = Param::text("answer", "Answer token (empty: the clean run's choice)", 40, ""),
        wrong: String = Param::text("wrong", "Wrong answer token (empty: the corrupted run's)", 40, ""),
        sweep: Sweeps = Param::choice("sweep", "Patch", Sweeps::OPTIONS, 0),
        /// the patching cell whose run's next tokens are shown: row.column ("": none)
        cell: String = Param::text("cell", "Chosen cell (row.column)", 20, ""),
        n: Letters = Param::choice("n", "Random sequence (head detectors)", Letters::OPTIONS, 0),
        seed: u32 = Param::seed("seed", "Seed of the random letters", 1),
        backend: RunsOn = Param::choice("backend", "Runs on", RunsOn::OPTIONS, 0),
    }
}

impl Sweeps {
    pub fn sweep(self) -> Sweep {
        match self {
            Sweeps::Residual => Sweep::Residual,
            Sweeps::Heads => Sweep::Heads,
            Sweeps::Both => Sweep::Both,
        }
    }
}

pub struct InsideDemo;

impl Demo for InsideDemo {
    const ID: &'static str = "inside";
    const TITLE: &'static str = "Looking inside a model";
    const CAPTION: &'static str = "A real model in a Web Worker on your machine, looked into three ways: the logit \
        lens reads every layer's state as a prediction, activation patching moves one activation of a clean run into \
        a corrupted one and measures what comes back, and the head detectors score every head on a repeated random \
        sequence. Click a cell to see its details.";
    type Params = Params;
    type Output = Request;
    const MAIN: &'static [&'static str] = &["model", "tool"];
    /// Every cell shows its number already.
    const NUMBERS: bool = false;

    /// The other tools' settings, and the download folder of a model that is not downloaded.
    fn idle(p: &Params) -> &'static [&'static str] {
        match (p.tool, matches!(p.model, Model::Gpt2 | Model::Smollm2)) {
            (Tool::Lens, true) => &["clean", "corrupt", "answer", "wrong", "sweep", "n", "seed"],
            (Tool::Lens, false) => &["base", "clean", "corrupt", "answer", "wrong", "sweep", "n", "seed"],
            (Tool::Patching, true) => &["prompt", "track", "n", "seed"],
            (Tool::Patching, false) => &["base", "prompt", "track", "n", "seed"],
            (Tool::Heads, true) => &["prompt", "track", "clean", "corrupt", "answer", "wrong", "sweep"],
            (Tool::Heads, false) => &["base", "prompt", "track", "clean", "corrupt", "answer", "wrong", "sweep"],
        }
    }

    /// The request the page sends for the chosen tool; the worker answers it.
    fn compute(p: &Params) -> Request {
        request(p, 0)
    }

    fn data(p: &Params) -> Result<serde_json::Value, String> {
        let mut out = serde_json::json!({ "model": p.model.key(), "request": super::to_json(&request(p, 0))? });
        out["note"] = "The answers are computed in the browser; the page's Download data adds them.".into();
        Ok(out)
    }

    /// A bundled model's real answer: the worker's session on the model's files, on the CPU.
    #[cfg(not(target_arch = "wasm32"))]
    fn load(p: &Params, read: &mut super::Reader) -> Option<Result<serde_json::Value, String>> {
        if !matches!(p.model, Model::Stories | Model::Induction | Model::StoriesLlama) {
            return None;
        }
        let mut run = || {
            let s = super::bundled_session(p.model.key(), read)?;
            let answer = match request(p, 0) {
                Request::Lens(q) => Answer::Lens(super::now(s.lens(&q))?.map_err(|e| e.to_string())?),
                Request::Heads(q) => Answer::Heads(super::now(s.head_detectors(&q))?.map_err(|e| e.to_string())?),
                Request::Patch(q) => {
                    let mut sweep = super::now(s.start_patching(&q))?.map_err(|e| e.to_string())?;
                    while !sweep.finished() {
                        super::now(s.patch_step(&mut sweep))?.map_err(|e| e.to_string())?;
                    }
                    Answer::Patching(sweep.answer())
                }
                _ => return Err("no such tool".into()),
            };
            super::to_json(&summary(&answer, p))
        };
        Some(run())
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<InsideDemo>();

/// The worker request for the chosen tool.
pub fn request(p: &Params, id: u64) -> Request {
    match p.tool {
        Tool::Lens => Request::Lens(LensQuery { id, prompt: p.prompt.clone(), track: p.track.clone() }),
        Tool::Patching => Request::Patch(PatchQuery {
            id,
            clean: p.clean.clone(),
            corrupt: p.corrupt.clone(),
            answer: p.answer.clone(),
            wrong: p.wrong.clone(),
            sweep: p.sweep.sweep(),
        }),
        Tool::Heads => Request::Heads(HeadsQuery { id, n: p.n.n(), seed: p.seed }),
    }
}

/// A tool's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "tool", rename_all = "snake_case")]
pub enum Answer {
    Lens(Lens),
    Patching(Patching),
    Heads(HeadScores),
}

/// One cell of a grid: its text, its shade (0..1; −1..1 when the grid is signed) and what a
/// tooltip and a screen reader say.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub text: String,
    pub shade: f64,
    pub title: String,
}

/// A labelled grid of cells, rows down and columns across.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grid {
    /// What the grid's `row.column` cells are called in the link (`cell`): "lens", "residual", …
    pub key: &'static str,
    pub title: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    pub cells: Vec<Vec<Cell>>,
    /// Shades run from −1 to 1 (a diverging scale), else 0 to 1.
    pub signed: bool,
    /// What the shade means, for the legend.
    pub legend: String,
}

/// The residual stream's boundaries as the grids label them.
pub fn boundary_labels(layers: usize) -> Vec<String> {
    std::iter::once("embeddings".to_string()).chain((0..layers).map(|l| format!("after block {l}"))).collect()
}

fn token_label(text: &str) -> String {
    echo(text)
}

fn pct(p: f64) -> String {
    format!("{:.0}%", Signed(100.0 * p))
}

/// The lens's grid: per boundary and position, the most likely next token and its probability.
pub fn lens_grid(l: &Lens) -> Grid {
    let layers = l.top.len().saturating_sub(1);
    let cells = l
        .top
        .iter()
        .enumerate()
        .map(|(b, row)| {
            row.iter()
                .enumerate()
                .map(|(t, top)| {
                    let first = top.first();
                    let list: Vec<String> =
                        top.iter().map(|c| format!("{} {}", token_label(&c.text), pct(c.prob))).collect();
                    Cell {
                        text: first.map(|c| token_label(&c.text)).unwrap_or_default(),
                        shade: first.map_or(0.0, |c| c.prob),
                        title: format!("{}, position {t}: {}", boundary_labels(layers)[b], list.join(", ")),
                    }
                })
                .collect()
        })
        .collect();
    Grid {
        key: "lens",
        title: "The most likely next token, read after each block".into(),
        rows: boundary_labels(layers),
        cols: l.tokens.iter().map(|t| token_label(&t.text)).collect(),
        cells,
        signed: false,
        legend: "probability of the token shown".into(),
    }
}

/// The followed token's probability at every boundary and position.
pub fn track_grid(l: &Lens) -> Grid {
    let layers = l.top.len().saturating_sub(1);
    let labels = boundary_labels(layers);
    let cells = l
        .track_probs
        .iter()
        .enumerate()
        .map(|(b, row)| {
            row.iter()
                .enumerate()
                .map(|(t, &p)| Cell {
                    text: pct(p),
                    shade: p,
                    title: format!(
                        "{}, position {t}: {} has probability {}",
                        labels[b],
                        token_label(&l.track.text),
                        pct(p)
                    ),
                })
                .collect()
        })
        .collect();
    Grid {
        key: "track",
        title: format!("The probability of {} as the next token, read after each block", token_label(&l.track.text)),
        rows: labels,
        cols: l.tokens.iter().map(|t| token_label(&t.text)).collect(),
        cells,
        signed: false,
        legend: format!("probability of {}", token_label(&l.track.text)),
    }
}

fn restored_cell(p: &Patching, metric: f32, what: String) -> Cell {
    let r = p.restored(metric) as f64;
    let shade = if r.is_finite() { r.clamp(-1.0, 1.0) } else { 0.0 };
    let text = if r.is_finite() { format!("{:.2}", Signed(r)) } else { "–".into() };
    let title = format!(
        "{what}: the logit difference is {:.2}, {text} of the way from the corrupted run's to the clean run's",
        Signed(metric as f64)
    );
    Cell { text, shade, title }
}

/// Patching's grids: the residual stream (boundary × position) and the heads (layer × head), each
/// cell the share of the logit difference the patch restores.
pub fn patch_grids(p: &Patching) -> Vec<Grid> {
    let legend = "share of the logit difference restored (0: corrupted, 1: clean)".to_string();
    let mut out = Vec::new();
    if !p.residual.is_empty() {
        let labels = boundary_labels(p.residual.len().saturating_sub(1));
        let cells = p
            .residual
            .iter()
            .enumerate()
            .map(|(b, row)| {
                row.iter()
                    .enumerate()
                    .map(|(t, run)| restored_cell(p, run.metric, format!("{}, position {t} patched", labels[b])))
                    .collect()
            })
            .collect();
        out.push(Grid {
            key: "residual",
            title: "Patching the residual stream: one layer and position at a time".into(),
            rows: labels,
            cols: p.corrupt.iter().map(|t| token_label(&t.text)).collect(),
            cells,
            signed: true,
            legend: legend.clone(),
        });
    }
    if !p.heads.is_empty() {
        let heads = p.heads.first().map_or(0, Vec::len);
        let cells = p
            .heads
            .iter()
            .enumerate()
            .map(|(l, row)| {
                row.iter()
                    .enumerate()
                    .map(|(h, run)| restored_cell(p, run.metric, format!("head {l}.{h} patched")))
                    .collect()
            })
            .collect();
        out.push(Grid {
            key: "heads",
            title: "Patching each head's output at every position".into(),
            rows: (0..p.heads.len()).map(|l| format!("layer {l}")).collect(),
            cols: (0..heads).map(|h| format!("head {h}")).collect(),
            cells,
            signed: true,
            legend,
        });
    }
    out
}

/// The head detectors' three grids (layer × head).
pub fn head_grids(s: &HeadScores) -> Vec<Grid> {
    [
        ("previous", "Previous-token score: weight on the token just before", &s.previous),
        ("induction", "Induction score: weight on the token after the earlier copy", &s.induction),
        ("duplicate", "Duplicate-token score: weight on the earlier copy itself", &s.duplicate),
    ]
    .into_iter()
    .map(|(key, title, scores)| {
        let heads = scores.first().map_or(0, Vec::len);
        let cells = scores
            .iter()
            .enumerate()
            .map(|(l, row)| {
                row.iter()
                    .enumerate()
                    .map(|(h, &v)| Cell {
                        text: format!("{:.2}", Signed(v as f64)),
                        shade: v as f64,
                        title: format!("head {l}.{h}: {key} score {:.2}", Signed(v as f64)),
                    })
                    .collect()
            })
            .collect();
        Grid {
            key,
            title: title.into(),
            rows: (0..scores.len()).map(|l| format!("layer {l}")).collect(),
            cols: (0..heads).map(|h| format!("head {h}")).collect(),
            cells,
            signed: false,
            legend: "mean attention weight (0 to 1)".into(),
        }
    })
    .collect()
}

/// The grids an answer draws.
pub fn grids(a: &Answer) -> Vec<Grid> {
    match a {
        Answer::Lens(l) => vec![lens_grid(l), track_grid(l)],
        Answer::Patching(p) => patch_grids(p),
        Answer::Heads(s) => head_grids(s),
    }
}

/// The plot under the grids: a few curves against the layers, which show the grids' story at a
/// glance (the followed token's probability at the last position; the share restored at the last
/// and at the first differing position; each layer's strongest head of each kind).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plot {
    pub x_desc: &'static str,
    pub y_desc: &'static str,
    pub y_range: (f64, f64),
    pub curves: Vec<(String, Vec<(f64, f64)>)>,
}

pub fn plot(a: &Answer) -> Plot {
    let along = |v: Vec<f64>| v.into_iter().enumerate().map(|(i, y)| (i as f64, y)).collect::<Vec<_>>();
    match a {
        Answer::Lens(l) => {
            let last = |row: &Vec<f64>| row.last().copied().unwrap_or(0.0);
            let own = |b: &Vec<Vec<Candidate>>| b.last().and_then(|c| c.first()).map_or(0.0, |c| c.prob);
            let followed = format!("{} (followed)", token_label(&l.track.text));
            Plot {
                x_desc: "blocks applied (0: the embeddings)",
                y_desc: "probability at the last token",
                y_range: (0.0, 1.0),
                curves: vec![
                    (followed, along(l.track_probs.iter().map(last).collect())),
                    ("the most likely token there".into(), along(l.top.iter().map(own).collect())),
                ],
            }
        }
        Answer::Patching(p) => {
            let share = |m: f32| p.restored(m).clamp(-1.0, 1.0) as f64;
            let mut curves = Vec::new();
            if !p.residual.is_empty() {
                let at = |t: usize| {
                    along(p.residual.iter().map(|row| row.get(t).map_or(0.0, |r| share(r.metric))).collect())
                };
                let first = p.corrupt.get(p.first).map_or(String::new(), |t| token_label(&t.text));
                curves.push(("the last token".to_string(), at(p.corrupt.len().saturating_sub(1))));
                curves.push((format!("{first}, where the prompts differ"), at(p.first)));
            }
            if !p.heads.is_empty() {
                let best = |row: &Vec<Run>| row.iter().map(|r| share(r.metric)).fold(-1.0, f64::max);
                curves.push(("each layer's strongest head".to_string(), along(p.heads.iter().map(best).collect())));
            }
            let x_desc = "blocks applied (0: the embeddings) or layer";
            Plot { x_desc, y_desc: "share restored", y_range: (-1.0, 1.0), curves }
        }
        Answer::Heads(s) => {
            let top = |row: &Vec<f32>| row.iter().fold(0.0f32, |m, &v| m.max(v)) as f64;
            let best = |g: &Vec<Vec<f32>>| along(g.iter().map(top).collect());
            Plot {
                x_desc: "layer",
                y_desc: "the layer's highest score",
                y_range: (0.0, 1.0),
                curves: vec![
                    ("previous token".into(), best(&s.previous)),
                    ("induction".into(), best(&s.induction)),
                    ("duplicate token".into(), best(&s.duplicate)),
                ],
            }
        }
    }
}

/// The chosen cell, `key.row.column` ("residual.3.5"), if it names one of `grids`.
pub fn chosen(cell: &str, grids: &[Grid]) -> Option<(usize, usize, usize)> {
    let mut parts = cell.split('.');
    let (key, r, c) = (parts.next()?, parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
    let g = grids.iter().position(|g| g.key == key)?;
    (r < grids[g].rows.len() && c < grids[g].cols.len()).then_some((g, r, c))
}

/// The head view of the real-model chapter on head `layer.head` of `model`, reading `prompt`
/// from its last token.
pub fn head_view_link(model: Model, prompt: &str, layer: usize, head: usize, tokens: usize) -> String {
    use crate::state::Params as _;
    let mut p = super::gpt2::Params::defaults();
    p.model = super::gpt2::Model::named(model.key()).unwrap_or(super::gpt2::Model::Stories);
    p.prompt = prompt.to_string();
    p.compare = String::new();
    (p.layer, p.head, p.token) = (layer as i64, head as i64, tokens.saturating_sub(1) as i64);
    format!("/gpt2-live/?{}#gpt2", super::link_query::<super::gpt2::Gpt2Demo>(&p))
}

/// The page's address with the training lab's checkpoint (`config.json`) chosen: its head
/// detectors on the longest repeat that fits the model's window, and its lens and patching on
/// the lab's probe `probe` (else a probe of its vocabulary) and that probe with the letter an
/// induction head would copy changed.
pub fn trained_link(config_json: &str, probe: Option<String>) -> Result<String, String> {
    use crate::state::Params as _;
    let cfg = crate::gpt2::Config::from_json(config_json).map_err(|e| e.to_string())?;
    let vocab = cfg.char_vocab.clone().unwrap_or_default();
    let prompt = super::gpt2::trained::prompt_for(config_json, probe)?;
    let mut p = Params::defaults();
    p.model = Model::Trained;
    p.tool = Tool::Heads;
    let start = usize::from(vocab.contains('^'));
    let fits = |l: &Letters| start + 2 * l.n() <= cfg.n_positions;
    p.n = Letters::ALL.iter().copied().filter(fits).max_by_key(|l| l.n()).unwrap_or(Letters::Three);
    (p.prompt, p.clean, p.corrupt) = (prompt.clone(), prompt.clone(), corrupted(&prompt, &vocab));
    (p.track, p.answer, p.wrong) = (String::new(), String::new(), String::new());
    Ok(format!("/{CHAPTER}/?{}#{}", super::link_query::<InsideDemo>(&p), InsideDemo::ID))
}

/// `prompt` with one letter changed for another of `vocab` it does not use: the letter after
/// the last character's earlier occurrence (what an induction head copies next), else its
/// second character.
pub fn corrupted(prompt: &str, vocab: &str) -> String {
    let mut chars: Vec<char> = prompt.chars().collect();
    let Some(&last) = chars.last() else { return String::new() };
    let at = chars[..chars.len() - 1].iter().position(|&c| c == last).map_or(1, |i| i + 1);
    let other = vocab.chars().filter(char::is_ascii_alphabetic).find(|c| !chars.contains(c));
    if let (Some(slot), Some(other)) = (chars.get_mut(at), other) {
        *slot = other;
    }
    chars.into_iter().collect()
}

/// This demo's address on the real-model chapter's model and prompts (`None` for a model it
/// does not read: one from a URL or from files): the logit lens on the prompt, and patching
/// from the prompt into the second one.
pub fn link_from_gpt2(g: &super::gpt2::Params) -> Option<String> {
    use crate::state::Params as _;
    let mut p = Params::defaults();
    p.model = Model::named(g.model.key())?;
    p.base = if matches!(p.model, Model::Gpt2 | Model::Smollm2) { g.base.clone() } else { String::new() };
    p.backend = match g.backend {
        super::gpt2::RunsOn::Cpu => RunsOn::Cpu,
        super::gpt2::RunsOn::Webgpu | super::gpt2::RunsOn::WebgpuF16 => RunsOn::Webgpu,
        super::gpt2::RunsOn::Auto => RunsOn::Auto,
    };
    (p.prompt, p.clean) = (g.prompt.clone(), g.prompt.clone());
    if !g.compare.trim().is_empty() {
        p.corrupt = g.compare.clone();
    }
    Some(format!("/{CHAPTER}/?{}#{}", super::link_query::<InsideDemo>(&p), InsideDemo::ID))
}

impl Model {
    /// The model a link or another demo names by its key, if this demo reads it.
    pub fn named(key: &str) -> Option<Model> {
        Model::ALL.iter().copied().find(|m| m.key() == key)
    }
}

/// The chapter that embeds this demo.
pub const CHAPTER: &str = "inside";

/// What "Download data" and the tests read: the answer and its grids.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub answer: Answer,
    pub grids: Vec<Grid>,
}

pub fn summary(a: &Answer, _p: &Params) -> Summary {
    Summary { answer: a.clone(), grids: grids(a) }
}

#[cfg(target_arch = "wasm32")]
mod grid;
#[cfg(target_arch = "wasm32")]
mod view;
