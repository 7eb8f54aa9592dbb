//! Demo `translation` (chapter "why-attention"): the real thing. A trained translation Transformer
//! (a Marian encoder–decoder) translates the reader's text in the compute worker, and the page
//! draws the three attentions of the original Transformer on it: cross-attention (each written
//! token over the source: the alignment of this chapter), the encoder's self-attention over the
//! source (no mask) and the decoder's masked self-attention over the translation, per layer and
//! head or as the heads' mean, with heads knocked out on request and beam search's steps listed.

use serde::Serialize;

use super::{spec, Demo, DemoSpec, RunsOn};
use crate::session::protocol::{AttentionKind, Token, TranslateQuery, Translation, TranslatorInfo};

crate::options! {
    /// The translation model. New options come last: a link names one by its key.
    pub enum Model {
        Dates = ("dates", "Dates in words → ISO dates (bundled, 2 MB)"),
        OpusEnDe = ("opus-mt-en-de", "English → German, OPUS-MT (download about 300 MB)"),
        Url = ("url", "Marian checkpoint from a URL"),
    }
}


crate::options! {
    /// Which of the three attentions the matrix shows.
    pub enum Kind {
        Cross = ("cross", "Cross-attention: each written token over the source"),
        Encoder = ("encoder", "Encoder self-attention: the source over itself, no mask"),
        Decoder = ("decoder", "Decoder self-attention: the translation over itself, masked"),
        All = ("all", "All three, side by side"),
    }
}

/// Where OPUS-MT English→German is downloaded from (the hub's main branch).
pub const OPUS_MT_EN_DE: &str = "https://huggingface.co/Helsinki-NLP/opus-mt-en-de/resolve/main/";

/// The English sentence the downloaded models open with: the one of the Transformer paper's
/// figure 3, where encoder heads link "making" to "more difficult" far along the sentence.
pub const ENGLISH_TEXT: &str = "It is in this spirit that a majority of American governments have passed new laws \
    since 2009 making the registration or voting process more difficult.";

impl Model {
    /// The bundled model's folder under the book's static files.
    pub fn folder(self) -> Option<&'static str> {
        match self {
            Model::Dates => Some("dates-marian"),
            Model::OpusEnDe | Model::Url => None,
        }
    }

    /// What the model opens with: its text and the layer shown.
    pub fn featured(self) -> (&'static str, usize) {
        match self {
            Model::Dates => (DEFAULT_TEXT, 2),
            // Layer 4: the fifth of six, the encoder layer of the paper's figure.
            Model::OpusEnDe | Model::Url => (ENGLISH_TEXT, 4),
        }
    }

    /// The folder URL its five files are read from (ending in `/`), or why there is none.
    pub fn base(self, base: &str) -> Result<String, String> {
        let given = base.trim();
        let folder = match (self, given) {
            (Model::Dates, _) => return Ok(format!("/models/{}/", self.folder().unwrap_or_default())),
            (Model::OpusEnDe, "") => return Ok(OPUS_MT_EN_DE.into()),
            (Model::Url, "") => return Err("type the address of a folder with the checkpoint's files".into()),
            (_, folder) => folder,
        };
        super::checkpoint_folder(folder)
    }
}

impl Kind {
    /// The attentions the option shows, in the order of the Transformer's figure.
    pub fn each(self) -> &'static [Kind] {
        match self {
            Kind::Cross => &[Kind::Cross],
            Kind::Encoder => &[Kind::Encoder],
            Kind::Decoder => &[Kind::Decoder],
            Kind::All => &[Kind::Encoder, Kind::Decoder, Kind::Cross],
        }
    }

    fn attention(self) -> Option<AttentionKind> {
        match self {
            Kind::Cross => Some(AttentionKind::Cross),
            Kind::Encoder => Some(AttentionKind::Encoder),
            Kind::Decoder => Some(AttentionKind::Decoder),
            Kind::All => None,
        }
    }
}

/// The text the demo opens with: the source says the day first and the year last, the ISO date
/// the other way round, so the alignment crosses.
pub const DEFAULT_TEXT: &str = "the twenty-third of march, nineteen ninety-eight";


crate::params! {
    pub struct Params {
        model: Model = Param::choice("model", "Model", Model::OPTIONS, 0),
        /// the checkpoint folder for `Model::OpusEnDe` (empty: the hub) or `Model::Url`
        base: String = Param::text("base", "Checkpoint folder URL (OPUS-MT: empty for the hub)", 500, ""),
        text: String = Param::text("text", "Text to translate", 300, DEFAULT_TEXT),
        beams: usize = Param::int("beams", "Beams (1 = greedy decoding)", 1, 8, 4),
        kind: Kind = Param::choice("attention", "Attention shown", Kind::OPTIONS, 0),
        layer: usize = Param::int("layer", "Layer", 0, 15, 2),
        mean: bool = Param::boolean("mean", "Mean of the heads", true),
        head: usize = Param::int("head", "Head (when not the mean)", 0, 15, 0),
        knock: String = Param::text("knock-out", "Knocked-out heads (kind.layer.head, e.g. cross.2.1)", 200, ""),
        backend: RunsOn = Param::choice("backend", "Runs on", RunsOn::OPTIONS, 0),
    }
}

pub struct TranslationDemo;

impl Demo for TranslationDemo {
    const ID: &'static str = "translation";
    const TITLE: &'static str = "The real thing: a translation Transformer";
    const CAPTION: &'static str = "A trained encoder–decoder Transformer translates your text on this computer. The \
        matrix shows one of its three attentions: cross-attention (rows: tokens written, columns: source tokens), \
        the encoder's self-attention over the source, or the decoder's masked self-attention over the translation.";
    type Params = Params;
    type Output = Result<TranslateQuery, String>;
    const MAIN: &'static [&'static str] = &["text", "attention", "layer", "mean"];

    /// The model's own text and layer where a link leaves them out.
    fn baseline(p: &Params) -> Params {
        let (text, layer) = p.model.featured();
        Params { text: text.into(), layer, ..<Params as crate::state::Params>::defaults() }
    }

    /// The query the page sends (the translation itself comes from the worker).
    fn compute(p: &Params) -> Result<TranslateQuery, String> {
        query(p)
    }

    fn data(p: &Params) -> Result<serde_json::Value, String> {
        let mut out = serde_json::json!({ "model": p.model.key(), "query": super::to_json(&query(p)?)? });
        out["note"] = "The translation is computed in the browser; the page's Download data adds it.".into();
        Ok(out)
    }

    /// The bundled model's real answer: the worker's translation session on the model's files
    /// (natively; the page asks the worker, which runs the same session). None for a download.
    #[cfg(not(target_arch = "wasm32"))]
    fn load(p: &Params, read: &mut super::Reader) -> Option<Result<serde_json::Value, String>> {
        let folder = p.model.folder()?;
        let mut run = || {
            let dir = format!("models/{folder}");
            let text = |read: &mut super::Reader, f: &str| {
                String::from_utf8(read(&format!("{dir}/{f}"))?).map_err(|e| e.to_string())
            };
            let (config, vocab) = (text(read, "config.json")?, text(read, "vocab.json")?);
            let weights = read(&format!("{dir}/model.safetensors"))?;
            let (src, tgt) = (read(&format!("{dir}/source.spm"))?, read(&format!("{dir}/target.spm"))?);
            let session = crate::session::translate::TranslationSession::load(&config, &weights, (&src, &tgt, &vocab))
                .map_err(|e| e.to_string())?;
            let t = session.translate(&query(p)?).map_err(|e| e.to_string())?;
            super::to_json(&summary(&t, p))
        };
        Some(run())
    }

    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView {
        view::view(ctx)
    }
}

pub static SPEC: DemoSpec = spec::<TranslationDemo>();

/// The model switches from `from` to `p.model`: the text and the layer that are still `from`'s
/// own become the new model's; what the reader changed stays.
pub fn switch_featured(p: &mut Params, from: Model) {
    let (old, new) = (from.featured(), p.model.featured());
    if p.text == old.0 {
        p.text = new.0.to_string();
    }
    if p.layer == old.1 {
        p.layer = new.1;
    }
}

/// Reads knocked-out heads written `kind.layer.head` (kind `cross`, `encoder` or `decoder`),
/// separated by spaces or commas; an entry that is not one is refused with the reason.
pub fn knock_outs(text: &str) -> Result<Vec<(AttentionKind, usize, usize)>, String> {
    let mut out = Vec::new();
    for entry in text.split([' ', ',']).filter(|e| !e.is_empty()) {
        let bad = || {
            format!("“{entry}” is not a head: write kind.layer.head, the kind cross, encoder or decoder (cross.2.1)")
        };
        let mut parts = entry.split('.');
        let kind = match parts.next() {
            Some("cross") => AttentionKind::Cross,
            Some("encoder") => AttentionKind::Encoder,
            Some("decoder") => AttentionKind::Decoder,
            _ => return Err(bad()),
        };
        let mut num = || parts.next().and_then(|n| n.parse::<usize>().ok()).ok_or_else(bad);
        let (layer, head) = (num()?, num()?);
        if parts.next().is_some() {
            return Err(bad());
        }
        if !out.contains(&(kind, layer, head)) {
            out.push((kind, layer, head));
        }
    }
    Ok(out)
}

/// Refuses a knocked-out head the loaded model does not have, naming it and what there is.
pub fn check_knock_outs(heads: &[(AttentionKind, usize, usize)], m: &TranslatorInfo) -> Result<(), String> {
    for &(kind, layer, head) in heads {
        let (name, layers, n) = match kind {
            AttentionKind::Encoder => ("encoder", m.encoder_layers, m.encoder_heads),
            AttentionKind::Decoder => ("decoder", m.decoder_layers, m.decoder_heads),
            AttentionKind::Cross => ("cross", m.decoder_layers, m.decoder_heads),
        };
        if layer >= layers || head >= n {
            return Err(format!(
                "“{name}.{layer}.{head}” is not a head of this model: its {name} attention has layers 0 to {} \
                 and heads 0 to {}",
                layers.saturating_sub(1),
                n.saturating_sub(1)
            ));
        }
    }
    Ok(())
}

/// What the page asks the worker: the text (refused when empty), as many tokens as the session
/// allows for its length (`max_new` 0).
pub fn query(p: &Params) -> Result<TranslateQuery, String> {
    if p.text.trim().is_empty() {
        return Err("type a text to translate".into());
    }
    let knock_out = knock_outs(&p.knock)?;
    Ok(TranslateQuery { id: 0, text: p.text.clone(), beams: p.beams, max_new: 0, knock_out })
}

/// The matrix shown: which attention, layer and head (`None`: the heads' mean), its weights
/// (rows queries, columns keys) and the tokens that label them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shown {
    pub title: String,
    pub layer: usize,
    pub head: Option<usize>,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    pub weights: Vec<Vec<f32>>,
}

/// The layers and heads of `kind` in a translation (for all three, the most of any).
pub fn shape(t: &Translation, kind: Kind) -> (usize, usize) {
    let of = |layers: &[ndarray::Array3<f32>]| (layers.len(), layers.first().map_or(0, |a| a.dim().0));
    match kind {
        Kind::Encoder => of(&t.encoder),
        Kind::Decoder => of(&t.decoder),
        Kind::Cross => of(&t.cross),
        Kind::All => {
            let (e, d) = (of(&t.encoder), of(&t.decoder));
            (e.0.max(d.0), e.1.max(d.1))
        }
    }
}

/// The matrices the parameters ask for (one, or all three), each one's layer and head kept
/// within the model's.
pub fn shown(t: &Translation, p: &Params) -> Vec<Shown> {
    p.kind.each().iter().filter_map(|&kind| one(t, p, kind)).collect()
}

fn one(t: &Translation, p: &Params, kind: Kind) -> Option<Shown> {
    let (layers, heads) = shape(t, kind);
    let layer = p.layer.min(layers.checked_sub(1)?);
    let head = (!p.mean).then(|| p.head.min(heads.saturating_sub(1)));
    let w = t.weights(kind.attention()?, layer, head)?;
    let text = |tokens: &[Token]| -> Vec<String> { tokens.iter().map(|t| label(&t.text)).collect() };
    // The decoder reads the start token and what it wrote before: its row i is the pass that wrote
    // target token i, whose query is the token before it.
    let inputs = || {
        let mut v: Vec<String> = vec!["start".into()];
        v.extend(text(&t.target[..t.target.len().saturating_sub(1)]));
        v
    };
    let (rows, cols) = match kind {
        Kind::Encoder => (text(&t.source), text(&t.source)),
        Kind::Decoder => (inputs(), inputs()),
        Kind::Cross | Kind::All => (text(&t.target), text(&t.source)),
    };
    let out: Vec<usize> = match (kind.attention(), knock_outs(&p.knock)) {
        (Some(k), Ok(all)) => all.iter().filter(|x| x.0 == k && x.1 == layer).map(|x| x.2).collect(),
        _ => Vec::new(),
    };
    let which = match head {
        Some(h) if out.contains(&h) => format!("head {h}, knocked out"),
        Some(h) => format!("head {h}"),
        None if !out.is_empty() => format!("mean of the heads, {} of them knocked out", out.len()),
        None => "mean of the heads".to_string(),
    };
    let title = match kind {
        Kind::Cross | Kind::All => format!("cross-attention, layer {layer}, {which} (rows: written, columns: source)"),
        Kind::Encoder => format!("encoder self-attention, layer {layer}, {which} (rows: queries, columns: keys)"),
        Kind::Decoder => {
            format!("masked decoder self-attention, layer {layer}, {which} (rows: queries, columns: keys)")
        }
    };
    let weights = w.outer_iter().map(|r| r.to_vec()).collect();
    Some(Shown { title, layer, head, rows, cols, weights })
}

/// A token as a matrix labels it: a piece that is only a space shows as SentencePiece's `▁`.
pub fn label(text: &str) -> String {
    if text.trim().is_empty() {
        "\u{2581}".repeat(text.chars().count().max(1))
    } else {
        text.to_string()
    }
}

/// For each row of a matrix, the column of its largest weight.
pub fn strongest(weights: &[Vec<f32>]) -> Vec<usize> {
    weights
        .iter()
        .map(|r| r.iter().enumerate().fold((0, f32::MIN), |m, (j, &x)| if x > m.1 { (j, x) } else { m }).0)
        .collect()
}

/// Whether the translation ended with `</s>`, rather than at the length limit.
pub fn complete(t: &Translation) -> bool {
    t.target.last().is_some_and(|x| x.text == "</s>")
}

/// What "Download data" and the tests read: the translation, its hypotheses and the matrix shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub text: String,
    pub source: Vec<String>,
    pub target: Vec<String>,
    pub hypotheses: Vec<crate::session::protocol::Hypothesis>,
    pub steps: Vec<crate::session::protocol::BeamStep>,
    pub shown: Vec<Shown>,
    /// For each matrix shown, row by row, the column of its largest weight.
    pub strongest: Vec<Vec<usize>>,
    /// The translation ended with `</s>` (else the length limit cut it).
    pub complete: bool,
}

pub fn summary(t: &Translation, p: &Params) -> Summary {
    let shown = shown(t, p);
    Summary {
        text: t.text.clone(),
        source: t.source.iter().map(|x| x.text.clone()).collect(),
        target: t.target.iter().map(|x| x.text.clone()).collect(),
        hypotheses: t.hypotheses.clone(),
        steps: t.steps.clone(),
        strongest: shown.iter().map(|s| strongest(&s.weights)).collect(),
        complete: complete(t),
        shown,
    }
}

#[cfg(target_arch = "wasm32")]
mod view;
