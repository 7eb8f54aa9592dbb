//! A Vision Transformer answering the page: a ViT or DeiT checkpoint (`crate::vit`) with its image
//! processor. One question, one answer: a picture (RGBA pixels, as a canvas gives them) gives the
//! prediction (the five likeliest classes), the picture as the model saw it (resized, cropped),
//! and every layer's attention over the class token(s) and the patches; with heads knocked out,
//! the same classes' probabilities without them too, to compare.
//!
//! What belongs to the model rather than to a picture comes once, in [`VisionInfo`]: its shape,
//! its labels, and how alike its learned position embeddings are (each patch position's cosine
//! similarity to every other, the ViT paper's figure 7).
//!
//! The model runs on the GPU when one is attached (`attach_gpu`, after a self-test against the
//! CPU); if the GPU fails, the session moves to the CPU for good, answers there and says so once.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use ndarray::{Array1, Array3, ArrayView3, Axis};
use serde::{Deserialize, Serialize};

use crate::formats::LoadError;
use crate::gpu::{Gpu, GpuError};
use crate::model::RunError;
use crate::vit::gpu::GpuVit;
use crate::vit::preprocess::Processor;
use crate::vit::{Options, Output, Vit};

/// The most pixels a picture may have (a 40-megapixel photo; the page scales pictures over 16
/// megapixels down first).
pub const MAX_PIXELS: usize = 40_000_000;

/// The most bytes of attention weights one picture's answer may carry (every layer's, to the
/// page): ViT-B/16 at 224 × 224 needs 22 MB, ViT-L/16 at 384 × 384 about 1.1 GB.
pub const MAX_ATTENTION_BYTES: u64 = 256_000_000;

/// The classes a prediction lists.
pub const TOP: usize = 5;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClassifyQuery {
    pub id: u64,
    /// The picture's size; its RGBA bytes (width · height · 4, row by row) travel beside the query.
    pub width: usize,
    pub height: usize,
    /// (layer, head) knocked out.
    #[serde(default)]
    pub knock_out: Vec<(usize, usize)>,
}

/// One class of a prediction.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Prediction {
    pub index: usize,
    pub label: String,
    pub prob: f32,
}

/// What the page learns of a loaded vision model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VisionInfo {
    pub name: String,
    /// "ViT" or "DeiT".
    pub family: String,
    pub image_size: usize,
    pub patch_size: usize,
    /// Patches per side.
    pub grid: usize,
    /// The tokens before the patches: the class token, and DeiT's distillation token.
    pub extra_tokens: usize,
    pub layers: usize,
    pub heads: usize,
    pub hidden_size: usize,
    pub params: u64,
    pub labels: Vec<String>,
    /// (grid², grid²), row-major: the cosine similarity of patch i's position embedding to patch
    /// j's.
    pub positions: Vec<f32>,
    /// Where it runs: "WebGPU (adapter)", or "the CPU" and why (set by the worker).
    #[serde(default)]
    pub backend: String,
}

/// A picture's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Vision {
    pub id: u64,
    /// The likeliest classes, most likely first (at most [`TOP`]).
    pub top: Vec<Prediction>,
    /// With heads knocked out: the same classes' probabilities without the knock-outs.
    pub unablated: Option<Vec<Prediction>>,
    /// The picture as the model saw it: (size, size, 3) RGB, the normalisation undone.
    pub seen: Array3<u8>,
    /// Per layer (heads, N, N): the class token (DeiT: then the distillation token), then the
    /// patches row by row.
    pub attentions: Vec<Array3<f32>>,
    /// The worker's time for the whole picture in milliseconds (set by the worker; 0 natively).
    pub compute_ms: f64,
    /// What computed it: "the CPU", or "WebGPU (adapter)".
    pub backend: String,
    /// Why it ran on the CPU after all, once, when the GPU just failed.
    pub notice: Option<String>,
}

/// A picture's answer as it travels from the worker: everything but the numbers, which go beside
/// it as one f32 buffer: the picture seen (size · size · 3 values 0 to 255), then every layer's
/// attention (heads, N, N).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VisionMessage {
    pub id: u64,
    pub top: Vec<Prediction>,
    pub unablated: Option<Vec<Prediction>>,
    pub size: usize,
    pub layers: usize,
    pub heads: usize,
    pub tokens: usize,
    #[serde(default)]
    pub compute_ms: f64,
    #[serde(default)]
    pub backend: String,
    #[serde(default)]
    pub notice: Option<String>,
}

impl Vision {
    /// The message and its buffer (see [`VisionMessage`]).
    pub fn into_parts(self) -> (VisionMessage, Vec<f32>) {
        let (heads, tokens) = self.attentions.first().map_or((0, 0), |a| (a.dim().0, a.dim().1));
        let mut data: Vec<f32> = self.seen.iter().map(|&v| f32::from(v)).collect();
        data.extend(self.attentions.iter().flat_map(|a| a.iter().copied()));
        let message = VisionMessage {
            id: self.id,
            top: self.top,
            unablated: self.unablated,
            size: self.seen.dim().0,
            layers: self.attentions.len(),
            heads,
            tokens,
            compute_ms: self.compute_ms,
            backend: self.backend,
            notice: self.notice,
        };
        (message, data)
    }

    /// Reads a message and the buffer received beside it: the buffer must hold exactly what the
    /// message's sizes describe.
    pub fn from_parts(m: VisionMessage, data: Vec<f32>) -> Result<Vision, String> {
        let seen_len = m.size.checked_mul(m.size).and_then(|n| n.checked_mul(3));
        let per_layer = m.heads.checked_mul(m.tokens).and_then(|n| n.checked_mul(m.tokens));
        let want = seen_len.zip(per_layer.and_then(|p| p.checked_mul(m.layers))).and_then(|(a, b)| a.checked_add(b));
        let (Some(seen_len), Some(per_layer), Some(want)) = (seen_len, per_layer, want) else {
            return Err("the picture's message describes more numbers than fit".into());
        };
        if want != data.len() {
            return Err(format!("the picture's buffer holds {} numbers, but its message describes {want}", data.len()));
        }
        let seen = Array3::from_shape_fn((m.size, m.size, 3), |(y, x, c)| data[(y * m.size + x) * 3 + c] as u8);
        let attentions = data[seen_len..]
            .chunks_exact(per_layer.max(1))
            .take(m.layers)
            .map(|c| Array3::from_shape_vec((m.heads, m.tokens, m.tokens), c.to_vec()).expect("sized"))
            .collect();
        Ok(Vision {
            id: m.id,
            top: m.top,
            unablated: m.unablated,
            seen,
            attentions,
            compute_ms: m.compute_ms,
            backend: m.backend,
            notice: m.notice,
        })
    }
}

/// The relative difference of a logit between the GPU and the CPU that the self-test accepts.
const SELF_TEST_TOL: f32 = 1e-4;

pub struct VisionSession {
    /// The CPU model: always present, the GPU's fallback.
    pub model: Arc<Vit>,
    pub processor: Processor,
    gpu: RefCell<Option<Rc<GpuVit>>>,
    /// Why the GPU was dropped, until the next answer says so.
    notice: RefCell<Option<String>>,
}

impl VisionSession {
    /// A session on the checkpoint's `config.json`, `model.safetensors` and
    /// `preprocessor_config.json`.
    pub fn load(config_json: &str, safetensors: &[u8], preprocessor_json: &str) -> Result<Self, LoadError> {
        VisionSession::with_model(Vit::load(config_json, safetensors)?, Processor::from_json(preprocessor_json)?)
    }

    /// A session on a model and its image processor, refused when they do not fit each other (the
    /// processor must make 3-channel pictures of the model's size) or the page (every layer's
    /// attention for one picture within [`MAX_ATTENTION_BYTES`]).
    pub fn with_model(model: Vit, processor: Processor) -> Result<Self, LoadError> {
        let c = &model.config;
        if c.num_channels != 3 {
            return Err(LoadError::Config(format!(
                "num_channels = {}: the page gives pictures in RGB",
                c.num_channels
            )));
        }
        let s = c.image_size;
        // What the processor makes of a square picture larger than everything it asks for.
        let out = processor.output_size((4 * s.max(512), 4 * s.max(512)));
        if out != (s, s) {
            return Err(LoadError::Config(format!(
                "preprocessor_config.json makes pictures of {} × {}, but the model reads {s} × {s}",
                out.1, out.0
            )));
        }
        let n = c.tokens() as u64;
        let bytes = (c.num_hidden_layers * c.num_attention_heads) as u64 * n * n * 4;
        if bytes > MAX_ATTENTION_BYTES {
            return Err(LoadError::Config(format!(
                "every layer's attention for one picture would be {} MB ({n} tokens, {} layers of {} heads): the \
                 page takes {} MB at most",
                bytes / 1_000_000,
                c.num_hidden_layers,
                c.num_attention_heads,
                MAX_ATTENTION_BYTES / 1_000_000
            )));
        }
        Ok(VisionSession { model: Arc::new(model), processor, gpu: RefCell::new(None), notice: RefCell::new(None) })
    }

    /// What the page is told once it loaded.
    pub fn info(&self, name: &str) -> VisionInfo {
        let c = &self.model.config;
        VisionInfo {
            name: name.into(),
            family: match c.family {
                crate::vit::config::Family::Vit => "ViT".into(),
                crate::vit::config::Family::Deit => "DeiT".into(),
            },
            image_size: c.image_size,
            patch_size: c.patch_size,
            grid: c.grid(),
            extra_tokens: c.extra_tokens(),
            layers: c.num_hidden_layers,
            heads: c.num_attention_heads,
            hidden_size: c.hidden_size,
            params: c.param_count().unwrap_or(0),
            labels: c.labels.clone(),
            positions: position_similarity(&self.model).into_raw_vec_and_offset().0,
            backend: "the CPU".into(),
        }
    }

    /// The model's pixels for an RGBA picture, or why it cannot be used.
    pub fn pixels(&self, q: &ClassifyQuery, rgba: &[u8]) -> Result<Array3<f32>, RunError> {
        let (w, h) = (q.width, q.height);
        let n = w.checked_mul(h).filter(|&n| n > 0 && n <= MAX_PIXELS);
        let Some(n) = n else {
            return Err(RunError::Picture(format!(
                "the picture is {w} × {h} pixels: it needs at least one and at most {} million",
                MAX_PIXELS / 1_000_000
            )));
        };
        if rgba.len() != n * 4 {
            return Err(RunError::Picture(format!("a {w} × {h} picture has {} RGBA bytes, not {}", n * 4, rgba.len())));
        }
        // The alpha channel is dropped, as PIL's convert("RGB") does.
        let rgb = ArrayView3::from_shape((h, w, 4), rgba).expect("sized").slice_move(ndarray::s![.., .., ..3]);
        self.processor.apply(rgb).map_err(RunError::Picture)
    }

    /// The picture as the model sees it, the normalisation and rescaling undone: (size, size, 3).
    fn seen(&self, pixels: &Array3<f32>) -> Array3<u8> {
        let p = &self.processor;
        let (_, h, w) = pixels.dim();
        Array3::from_shape_fn((h, w, 3), |(y, x, c)| {
            let mut v = pixels[[c, y, x]];
            if let Some((mean, std)) = p.normalize {
                v = v * std[c] + mean[c];
            }
            if let Some(s) = p.rescale {
                v /= s as f32;
            }
            v.round().clamp(0.0, 255.0) as u8
        })
    }

    /// Uploads the model to `gpu` and runs a self-test: a picture's logits on the GPU must match
    /// the CPU's. Only then do pictures run there.
    pub async fn attach_gpu(&self, gpu: Rc<Gpu>) -> Result<(), GpuError> {
        let g = GpuVit::upload(gpu, self.model.clone()).await?;
        let cfg = &self.model.config;
        let s = cfg.image_size;
        let pixels =
            Array3::from_shape_fn((cfg.num_channels, s, s), |(c, y, x)| ((c + 2 * y + 3 * x) % 7) as f32 / 7.0);
        let test = |e: RunError| GpuError::SelfTest(e.to_string());
        let cpu = self.model.forward(pixels.view(), &Options::default()).map_err(test)?.logits;
        let out = g.forward(pixels.view(), &Options::default()).await?.logits;
        let (cpu, out) = (cpu.as_standard_layout(), out.as_standard_layout());
        super::serve::logits_agree(cpu.as_slice().unwrap_or(&[]), out.as_slice().unwrap_or(&[]), SELF_TEST_TOL)?;
        *self.gpu.borrow_mut() = Some(Rc::new(g));
        Ok(())
    }

    /// Runs on the CPU from now on.
    pub fn detach_gpu(&self) {
        *self.gpu.borrow_mut() = None;
    }

    /// Makes the next GPU run fail (a real validation error), to exercise the fallback.
    pub fn inject_gpu_fault(&self) {
        if let Some(g) = self.gpu.borrow().as_ref() {
            g.fail_next();
        }
    }

    /// Classifies a picture on the CPU.
    pub fn classify(&self, q: &ClassifyQuery, rgba: &[u8]) -> Result<Vision, RunError> {
        let pixels = self.pixels(q, rgba)?;
        self.check_knock_outs(&q.knock_out)?;
        self.classify_pixels(q, &pixels)
    }

    /// The passes a query asks for: with its knock-outs and every attention, and, when it knocks
    /// heads out, one without them for the probabilities to compare.
    fn passes(q: &ClassifyQuery) -> (Options, Option<Options>) {
        let shown = Options { attentions: true, knock_out: q.knock_out.clone(), ..Default::default() };
        (shown, (!q.knock_out.is_empty()).then(Options::default))
    }

    /// Classifies preprocessed pixels on the CPU.
    fn classify_pixels(&self, q: &ClassifyQuery, pixels: &Array3<f32>) -> Result<Vision, RunError> {
        let (shown, plain) = Self::passes(q);
        let out = self.model.forward(pixels.view(), &shown)?;
        let plain = plain.map(|o| self.model.forward(pixels.view(), &o)).transpose()?;
        Ok(self.assemble(q, pixels, out, plain, "the CPU".into()))
    }

    async fn classify_on(&self, g: &GpuVit, q: &ClassifyQuery, pixels: &Array3<f32>) -> Result<Vision, GpuError> {
        let (shown, plain) = Self::passes(q);
        let out = g.forward(pixels.view(), &shown).await?;
        let plain = match plain {
            Some(o) => Some(g.forward(pixels.view(), &o).await?),
            None => None,
        };
        Ok(self.assemble(q, pixels, out, plain, format!("WebGPU ({})", g.gpu.name)))
    }

    /// Classifies a picture where the model runs: on the GPU when attached, and if it fails
    /// there, on the CPU from now on, with a notice.
    pub async fn answer(&self, q: &ClassifyQuery, rgba: &[u8]) -> Result<Vision, RunError> {
        // A picture the model cannot take is the reader's to fix, not the GPU's failure.
        let pixels = self.pixels(q, rgba)?;
        self.check_knock_outs(&q.knock_out)?;
        let gpu = self.gpu.borrow().clone();
        if let Some(g) = gpu {
            match self.classify_on(&g, q, &pixels).await {
                Ok(v) => return Ok(v),
                Err(e) => {
                    self.detach_gpu();
                    *self.notice.borrow_mut() = Some(super::gpu_failed(&e));
                }
            }
        }
        let notice = self.notice.borrow_mut().take();
        // The pixels prepared above: a large photo is not resized twice.
        match self.classify_pixels(q, &pixels) {
            Ok(v) => Ok(Vision { notice, ..v }),
            Err(e) => {
                *self.notice.borrow_mut() = notice;
                Err(e)
            }
        }
    }

    /// Refuses a knocked-out head the model does not have.
    fn check_knock_outs(&self, heads: &[(usize, usize)]) -> Result<(), RunError> {
        let c = &self.model.config;
        match heads.iter().find(|&&(l, h)| l >= c.num_hidden_layers || h >= c.num_attention_heads) {
            Some((l, h)) => Err(RunError::Picture(format!(
                "layer {l}, head {h} is not a head of this model: it has layers 0 to {} and heads 0 to {}",
                c.num_hidden_layers - 1,
                c.num_attention_heads - 1
            ))),
            None => Ok(()),
        }
    }

    fn assemble(
        &self,
        q: &ClassifyQuery,
        pixels: &Array3<f32>,
        out: Output,
        plain: Option<Output>,
        backend: String,
    ) -> Vision {
        let probs = softmax(&out.logits);
        let top = top(&probs, &self.model.config.labels);
        let unablated = plain.map(|p| {
            let probs = softmax(&p.logits);
            top.iter().map(|t| Prediction { prob: probs[t.index], ..t.clone() }).collect()
        });
        Vision {
            id: q.id,
            top,
            unablated,
            seen: self.seen(pixels),
            attentions: out.attentions,
            compute_ms: 0.0,
            backend,
            notice: None,
        }
    }
}

/// Probabilities from logits (computed in f64).
pub fn softmax(logits: &Array1<f32>) -> Vec<f32> {
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let e: Vec<f64> = logits.iter().map(|&v| f64::from(v - max).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.iter().map(|v| (v / sum) as f32).collect()
}

/// The [`TOP`] likeliest classes, most likely first (ties: the lower index first).
pub fn top(probs: &[f32], labels: &[String]) -> Vec<Prediction> {
    let mut order: Vec<usize> = (0..probs.len()).collect();
    order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]).then(a.cmp(&b)));
    order
        .into_iter()
        .take(TOP)
        .map(|i| Prediction {
            index: i,
            label: labels.get(i).cloned().unwrap_or_else(|| format!("class {i}")),
            prob: probs[i],
        })
        .collect()
}

/// (grid², grid²): the cosine similarity of each patch position's learned embedding to every
/// other's (the class and distillation tokens' positions left out), as the ViT paper's figure 7.
pub fn position_similarity(model: &Vit) -> ndarray::Array2<f32> {
    let extra = model.config.extra_tokens();
    let p = model.weights.position_embeddings.slice(ndarray::s![extra.., ..]).mapv(f64::from);
    let norms = p.map_axis(Axis(1), |r| r.dot(&r).sqrt().max(1e-12));
    let unit = &p / &norms.insert_axis(Axis(1));
    unit.dot(&unit.t()).mapv(|v| v as f32)
}
