//! Demo `vision` (chapter "images"): attention on pictures. A Vision Transformer classifies a
//! picture in the compute worker (a drawn shape, the reader's own drawing, or their photo), and
//! the page draws its attention over the picture's patches: from a patch the reader clicks, from
//! the class token per head, attention rollout across the layers, and how alike the learned
//! position embeddings are (the ViT paper's figure 7); with heads knocked out, the prediction
//! beside the one without them.

use serde::Serialize;

use super::{spec, Demo, DemoSpec, RunsOn};
use crate::session::protocol::{ClassifyQuery, Prediction, Vision, VisionInfo};
use crate::vit::maps;

crate::options! {
    /// The vision model. New options come last: a link names one by its key.
    pub enum Model {
        Shapes = ("shapes", "Six drawn shapes (bundled, 0.3 MB)"),
        DeitTiny = ("deit-tiny", "DeiT-tiny, 1,000 ImageNet classes (download about 23 MB)"),
        Url = ("url", "ViT or DeiT checkpoint from a URL"),
    }
}

crate::options! {
    /// The picture: one the page draws, or the reader's (drawn, dropped, pasted, chosen or taken).
    pub enum Picture {
        Star = ("star", "A drawn star"),
        Circle = ("circle", "A drawn circle"),
        Square = ("square", "A drawn square"),
        Triangle = ("triangle", "A drawn triangle"),
        Cross = ("cross", "A drawn cross"),
        Line = ("line", "A drawn line"),
        Yours = ("yours", "Your picture or drawing"),
    }
}

crate::options! {
    /// What the maps over the picture show.
    pub enum Show {
        Patch = ("patch", "Where the clicked patch looks (one layer)"),
        Heads = ("heads", "Where the class token looks, head by head"),
        Rollout = ("rollout", "Attention rollout: every layer at once"),
        Positions = ("positions", "Position embeddings: how alike they are"),
    }
}

/// Where DeiT-tiny is downloaded from (the hub's main branch).
pub const DEIT_TINY: &str = "https://huggingface.co/facebook/deit-tiny-patch16-224/resolve/main/";

impl Model {
    /// The bundled model's folder under the book's static files.
    pub fn folder(self) -> Option<&'static str> {
        match self {
            Model::Shapes => Some("shapes-vit"),
            Model::DeitTiny | Model::Url => None,
        }
    }

    /// The model's name, as the status line gives it.
    pub fn name(self) -> &'static str {
        match self {
            Model::Shapes => "Six drawn shapes",
            Model::DeitTiny => "DeiT-tiny",
            Model::Url => "The checkpoint",
        }
    }

    /// The folder URL its three files are read from (ending in `/`), or why there is none.
    pub fn base(self, base: &str) -> Result<String, String> {
        let given = base.trim();
        let folder = match (self, given) {
            (Model::Shapes, _) => return Ok(format!("/models/{}/", self.folder().unwrap_or_default())),
            (Model::DeitTiny, "") => return Ok(DEIT_TINY.into()),
            (Model::Url, "") => return Err("type the address of a folder with the checkpoint's files".into()),
            (_, folder) => folder,
        };
        super::checkpoint_folder(folder)
    }
}

crate::params! {
    pub struct Params {
        model: Model = Param::choice("model", "Model", Model::OPTIONS, 0),
        /// the checkpoint folder for `Model::DeitTiny` (empty: the hub) or `Model::Url`
        base: String = Param::text("base", "Checkpoint folder URL (DeiT-tiny: empty for the hub)", 500, ""),
        picture: Picture = Param::choice("picture", "Picture", Picture::OPTIONS, 0),
        show: Show = Param::choice("show", "Maps", Show::OPTIONS, 0),
        layer: usize = Param::int("layer", "Layer", 0, 23, 3),
        mean: bool = Param::boolean("mean", "Mean of the heads", true),
        head: usize = Param::int("head", "Head (when not the mean)", 0, 15, 0),
        /// patches row by row from the top left; clicking a map sets it
        patch: usize = Param::int("patch", "Clicked patch", 0, 4095, 27),
        knock: String = Param::text("knock-out", "Knocked-out heads (layer.head, e.g. 3.1)", 200, ""),
        backend: RunsOn = Param::choice("backend", "Runs on", RunsOn::OPTIONS, 0),
    }
}

pub struct VisionDemo;

impl Demo for VisionDemo {
    const ID: &'static str = "vision";
    const TITLE: &'static str = "A Vision Transformer, on your pictures";
    const CAPTION: &'static str = "A trained Vision Transformer classifies a picture on this computer. The picture \
        is cut into square patches, each one a token; the maps show, over the picture, where one token's attention \
        goes (brighter: more weight), each map scaled to its own range.";
    type Params = Params;
    type Output = Result<ClassifyQuery, String>;
    const MAIN: &'static [&'static str] = &["picture", "show", "layer", "mean"];

    /// The query the page sends, less the picture's pixels (the prediction comes from the worker).
    fn compute(p: &Params) -> Result<ClassifyQuery, String> {
        query(p, 0, 0)
    }

    fn data(p: &Params) -> Result<serde_json::Value, String> {
        let mut out = serde_json::json!({ "model": p.model.key(), "picture": p.picture.key() });
        out["note"] = "The prediction is computed in the browser; the page's Download data adds it.".into();
        Ok(out)
    }

    /// The bundled model's real answer on a drawn picture: the worker's vision session on the
    /// model's files (natively; the page asks the worker, which runs the same session). None for
    /// a download, or the reader's own picture.
    #[cfg(not(target_arch = "wasm32"))]
    fn load(p: &Params, read: &mut super::Reader) -> Option<Result<serde_json::Value, String>> {
        let folder = p.model.folder()?;
        let (w, h, rgba) = sample(p.picture)?;
        let mut run = || {
            let dir = format!("models/{folder}");
            let text = |read: &mut super::Reader, f: &str| {
                String::from_utf8(read(&format!("{dir}/{f}"))?).map_err(|e| e.to_string())
            };
            let (config, pre) = (text(read, "config.json")?, text(read, "preprocessor_config.json")?);
            let weights = read(&format!("{dir}/model.safetensors"))?;
            let s = crate::session::vision::VisionSession::load(&config, &weights, &pre).map_err(|e| e.to_string())?;
            let v = s.classify(&query(p, w, h)?, &rgba).map_err(|e| e.to_string())?;
            super::to_json(&summary(&v, &s.info(folder), p))
        };
        Some(run())
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<VisionDemo>();

/// Reads knocked-out heads written `layer.head`, separated by spaces or commas; an entry that is
/// not one is refused with the reason.
pub fn knock_outs(text: &str) -> Result<Vec<(usize, usize)>, String> {
    let mut out = Vec::new();
    for entry in text.split([' ', ',']).filter(|e| !e.is_empty()) {
        let bad = || format!("“{entry}” is not a head: write layer.head, as 3.1 for layer 3's head 1");
        let (layer, head) = entry.split_once('.').ok_or_else(bad)?;
        let (layer, head) = (layer.parse().map_err(|_| bad())?, head.parse().map_err(|_| bad())?);
        if !out.contains(&(layer, head)) {
            out.push((layer, head));
        }
    }
    Ok(out)
}

/// Refuses a knocked-out head the loaded model does not have, naming it and what there is.
pub fn check_knock_outs(heads: &[(usize, usize)], m: &VisionInfo) -> Result<(), String> {
    match heads.iter().find(|&&(l, h)| l >= m.layers || h >= m.heads) {
        Some((l, h)) => Err(format!(
            "“{l}.{h}” is not a head of this model: it has layers 0 to {} and heads 0 to {}",
            m.layers.saturating_sub(1),
            m.heads.saturating_sub(1)
        )),
        None => Ok(()),
    }
}

/// What the page asks the worker for a `width` × `height` picture (its pixels go beside it).
pub fn query(p: &Params, width: usize, height: usize) -> Result<ClassifyQuery, String> {
    Ok(ClassifyQuery { id: 0, width, height, knock_out: knock_outs(&p.knock)? })
}

/// The side of the pictures the page draws.
pub const SAMPLE: usize = 96;

/// A drawn picture, `SAMPLE` pixels square: dark ink on light paper, as the bundled model was
/// trained on; (width, height, RGBA). None for the reader's own.
pub fn sample(picture: Picture) -> Option<(usize, usize, Vec<u8>)> {
    let n = SAMPLE as f64;
    let (cx, cy, r) = (n * 0.5, n * 0.52, n * 0.34);
    // The shape's outline as a polygon (a circle is drawn by distance).
    let polygon: Vec<(f64, f64)> = match picture {
        Picture::Circle | Picture::Yours => Vec::new(),
        Picture::Square => vec![(cx - r, cy - r), (cx + r, cy - r), (cx + r, cy + r), (cx - r, cy + r)],
        Picture::Triangle => vec![(cx, cy - r), (cx + r, cy + 0.8 * r), (cx - r, cy + 0.8 * r)],
        Picture::Star => (0..10)
            .map(|i| {
                let a = std::f64::consts::PI * (i as f64 / 5.0 - 0.5);
                let rr = if i % 2 == 0 { r } else { r * 0.42 };
                (cx + rr * a.cos(), cy + rr * a.sin())
            })
            .collect(),
        Picture::Cross => {
            let (a, b) = (r, r * 0.12);
            [(-b, -a), (b, -a), (b, -b), (a, -b), (a, b), (b, b), (b, a), (-b, a), (-b, b), (-a, b), (-a, -b), (-b, -b)]
                .iter()
                .map(|&(x, y)| (cx + x, cy + y))
                .collect()
        }
        Picture::Line => {
            // a thick stroke from lower left to upper right
            let (d, t) = (r * std::f64::consts::FRAC_1_SQRT_2, n * 0.05);
            vec![(cx - d - t, cy + d - t), (cx + d - t, cy - d - t), (cx + d + t, cy - d + t), (cx - d + t, cy + d + t)]
        }
    };
    if picture == Picture::Yours {
        return None;
    }
    let inside = |x: f64, y: f64| {
        if polygon.is_empty() {
            return (x - cx).hypot(y - cy) <= r;
        }
        // even-odd rule
        let mut odd = false;
        for (i, &(x1, y1)) in polygon.iter().enumerate() {
            let (x2, y2) = polygon[(i + 1) % polygon.len()];
            if (y1 > y) != (y2 > y) && x < x1 + (y - y1) * (x2 - x1) / (y2 - y1) {
                odd = !odd;
            }
        }
        odd
    };
    let mut rgba = Vec::with_capacity(SAMPLE * SAMPLE * 4);
    for y in 0..SAMPLE {
        for x in 0..SAMPLE {
            let ink = inside(x as f64 + 0.5, y as f64 + 0.5);
            rgba.extend(if ink { [34, 34, 46, 255] } else { [246, 243, 236, 255] });
        }
    }
    Some((SAMPLE, SAMPLE, rgba))
}

/// One map the page draws: `side` × `side` values, over the picture seen (`picture`) or alone
/// (the position embeddings), with the clicked patch outlined.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Map {
    pub title: String,
    pub side: usize,
    pub values: Vec<f32>,
    pub picture: bool,
    pub outline: Option<usize>,
    /// The patch of the largest value (row by row), for the tests and "Download data".
    pub strongest: usize,
}

fn map(title: String, side: usize, values: Vec<f32>, picture: bool, outline: Option<usize>) -> Map {
    let strongest = values.iter().enumerate().fold(0, |b, (i, &v)| if v > values[b] { i } else { b });
    Map { title, side, values, picture, outline, strongest }
}

/// The maps the parameters ask for, layer, head and patch kept within the model's.
pub fn maps(v: &Vision, info: &VisionInfo, p: &Params) -> Vec<Map> {
    let (g, extra) = (info.grid, info.extra_tokens);
    let (layer, patch) = (p.layer.min(info.layers.saturating_sub(1)), p.patch.min((g * g).saturating_sub(1)));
    let Some(a) = v.attentions.get(layer) else { return Vec::new() };
    let flat = |m: Option<ndarray::Array2<f32>>| m.map(|m| m.into_raw_vec_and_offset().0).unwrap_or_default();
    let (row, col) = (patch / g.max(1), patch % g.max(1));
    match p.show {
        Show::Patch => {
            let head = (!p.mean).then(|| p.head.min(info.heads.saturating_sub(1)));
            let which = head.map_or("mean of the heads".to_string(), |h| format!("head {h}"));
            let title = format!("From patch {patch} (row {row}, column {col}), layer {layer}, {which}");
            vec![map(title, g, flat(maps::from_token(a, extra + patch, head, extra, g)), true, Some(patch))]
        }
        Show::Heads => {
            let mut out: Vec<Map> = (0..info.heads)
                .map(|h| {
                    let title = format!("Class token, layer {layer}, head {h}");
                    map(title, g, flat(maps::from_token(a, 0, Some(h), extra, g)), true, None)
                })
                .collect();
            let title = format!("Class token, layer {layer}, mean of the heads");
            out.push(map(title, g, flat(maps::from_token(a, 0, None, extra, g)), true, None));
            out
        }
        Show::Rollout => {
            let roll = maps::rollout(&v.attentions);
            let title = format!("Rollout to the class token, layers 0 to {}", v.attentions.len().saturating_sub(1));
            let cls = map(title, g, flat(maps::rollout_map(roll.view(), 0, extra, g)), true, None);
            let title = format!("Rollout to patch {patch} (row {row}, column {col})");
            let from = map(title, g, flat(maps::rollout_map(roll.view(), extra + patch, extra, g)), true, Some(patch));
            vec![cls, from]
        }
        Show::Positions => {
            let n = g * g;
            let one = info.positions.get(patch * n..(patch + 1) * n).map(<[f32]>::to_vec).unwrap_or_default();
            let title = format!("Cosine similarity of patch {patch}'s position embedding to each position's");
            vec![map(title, g, one, false, Some(patch)), figure_7(info)]
        }
    }
}

/// Every position's similarity map as a tile, the tiles in the grid's own layout, one blank
/// row and column between them (NaN): the ViT paper's figure 7.
fn figure_7(info: &VisionInfo) -> Map {
    let (g, n) = (info.grid, info.grid * info.grid);
    let side = (g * (g + 1)).saturating_sub(1);
    let mut values = vec![f32::NAN; side * side];
    for (i, tile) in info.positions.chunks_exact(n.max(1)).enumerate().take(n) {
        let (ty, tx) = (i / g, i % g);
        for (j, &v) in tile.iter().enumerate() {
            values[(ty * (g + 1) + j / g) * side + tx * (g + 1) + j % g] = v;
        }
    }
    let title = "Every position's similarity to every other: one tile per position, in the grid's layout".into();
    Map { title, side, values, picture: false, outline: None, strongest: 0 }
}

/// What "Download data" and the tests read: the prediction, and the maps shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub top: Vec<Prediction>,
    pub unablated: Option<Vec<Prediction>>,
    pub grid: usize,
    pub maps: Vec<Map>,
}

pub fn summary(v: &Vision, info: &VisionInfo, p: &Params) -> Summary {
    Summary { top: v.top.clone(), unablated: v.unablated.clone(), grid: info.grid, maps: maps(v, info, p) }
}

#[cfg(target_arch = "wasm32")]
mod view;
