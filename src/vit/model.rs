//! The Vision Transformer's forward pass, read top to bottom as `modeling_vit.py`: the image cut
//! into patches, each patch's pixels through one product (the patch embedding), the class token
//! (and DeiT's distillation token) in front, the learned positions added, then pre-norm blocks:
//! x ← x + attn(LayerNorm(x)), x ← x + mlp(LayerNorm(x)), with bidirectional self-attention over
//! every token; the final layer norm and the classifier on the class token.

use ndarray::{s, Array1, Array2, Array3, ArrayView2, ArrayView3, Axis};

use super::weights::{Layer, Weights};
use super::Config;
use crate::formats::safetensors::SafeTensors;
use crate::formats::LoadError;
use crate::model::RunError;
use crate::numerics::flash::full_attention;
use crate::numerics::par;

pub struct Vit {
    pub config: Config,
    pub weights: Weights,
}

/// What a pass keeps beside its logits.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Every layer's attention weights (heads, N, N).
    pub attentions: bool,
    /// The residual stream after the embeddings and after each layer (before the final norm).
    pub hidden_states: bool,
    /// (layer, head) whose output is zeroed before the attention's output projection.
    pub knock_out: Vec<(usize, usize)>,
}

/// One image through the model.
pub struct Output {
    /// (classes,)
    pub logits: Array1<f32>,
    /// [embeddings, layer 0, …], each (N, C), when asked for.
    pub hidden_states: Vec<Array2<f32>>,
    /// Per layer (H, N, N), when asked for; tokens in order: the class token (DeiT: then the
    /// distillation token), then the patches row by row.
    pub attentions: Vec<Array3<f32>>,
}

impl Vit {
    /// Loads `config.json` text and `model.safetensors` bytes.
    pub fn load(config_json: &str, safetensors: &[u8]) -> Result<Self, LoadError> {
        let config = Config::from_json(config_json)?;
        let st = SafeTensors::parse(safetensors)?;
        let weights = Weights::from_safetensors(&st, &config)?;
        Ok(Vit { config, weights })
    }

    /// Runs the model on preprocessed pixels (channels, height, width), as `pixel_values` holds
    /// one image.
    pub fn forward(&self, pixels: ArrayView3<f32>, opts: &Options) -> Result<Output, RunError> {
        let cfg = &self.config;
        let want = (cfg.num_channels, cfg.image_size, cfg.image_size);
        if pixels.dim() != want {
            return Err(RunError::ImageShape { got: pixels.dim(), want });
        }
        let mut x = self.embed(pixels);
        let mut out = Output { logits: Array1::zeros(0), hidden_states: Vec::new(), attentions: Vec::new() };
        if opts.hidden_states {
            out.hidden_states.push(x.clone());
        }
        let eps = cfg.layer_norm_eps;
        for (l, layer) in self.weights.layers.iter().enumerate() {
            // Self-attention over every token, no mask: (N, C) -> (N, C)
            let h = layer.layernorm_before.apply(x.view(), eps);
            let (y, w) = self.attend(layer, h.view(), |head| opts.knock_out.contains(&(l, head)));
            x += &y;
            // MLP: (N, C) -> (N, F) -> (N, C)
            let h = layer.layernorm_after.apply(x.view(), eps);
            let mut a = layer.intermediate.apply(h.view());
            a.mapv_inplace(|v| cfg.hidden_act.apply(v));
            x += &layer.output.apply(a.view());
            if opts.attentions {
                out.attentions.push(w);
            }
            if opts.hidden_states {
                out.hidden_states.push(x.clone());
            }
        }
        let x = self.weights.layernorm.apply(x.view(), eps);
        // The class token's logits; DeiT with its teacher: their mean with the distillation token's.
        let head =
            |d: &crate::model::dense::Dense, row: usize| d.apply(x.slice(s![row..row + 1, ..])).row(0).to_owned();
        out.logits = match &self.weights.distillation_classifier {
            Some(d) => (head(&self.weights.classifier, 0) + head(d, 1)) / 2.0,
            None => head(&self.weights.classifier, 0),
        };
        if out.logits.iter().any(|v| !v.is_finite()) {
            return Err(RunError::NotFinite);
        }
        Ok(out)
    }

    /// The tokens before the first block: the class token (DeiT: and the distillation token),
    /// then each patch's embedding, row by row; positions added. (N, C)
    fn embed(&self, pixels: ArrayView3<f32>) -> Array2<f32> {
        let (cfg, w) = (&self.config, &self.weights);
        // (patches, channels · p · p) x (channels · p · p, C) -> (patches, C)
        let embedded = w.patch.apply(self.patches(pixels).view());
        let mut x = Array2::<f32>::zeros((cfg.tokens(), cfg.hidden_size));
        x.row_mut(0).assign(&w.cls_token);
        if let Some(d) = &w.distillation_token {
            x.row_mut(1).assign(d);
        }
        x.slice_mut(s![cfg.extra_tokens().., ..]).assign(&embedded);
        x + &w.position_embeddings
    }

    /// The image cut into its grid of patches, row by row: (patches, channels · p · p), each patch's
    /// pixels in (channel, row, column) order, as the patch embedding's convolution weight is laid
    /// out.
    pub fn patches(&self, pixels: ArrayView3<f32>) -> Array2<f32> {
        let cfg = &self.config;
        let (p, g) = (cfg.patch_size, cfg.grid());
        let mut patches = Array2::<f32>::zeros((g * g, cfg.num_channels * p * p));
        for (i, mut row) in patches.rows_mut().into_iter().enumerate() {
            let (py, px) = (i / g * p, i % g * p);
            let patch = pixels.slice(s![.., py..py + p, px..px + p]);
            row.iter_mut().zip(patch.iter()).for_each(|(o, &v)| *o = v);
        }
        patches
    }

    /// The heads' attention over (N, C) normalised tokens: the output after the output projection
    /// (N, C) and the weights (H, N, N). A knocked-out head's slice is zeroed before the
    /// projection mixes the heads.
    fn attend(&self, layer: &Layer, h: ArrayView2<f32>, knocked: impl Fn(usize) -> bool) -> (Array2<f32>, Array3<f32>) {
        let (n, c, heads) = (h.nrows(), self.config.hidden_size, self.config.num_attention_heads);
        let d = c / heads;
        let (q, k, v) = (layer.query.apply(h), layer.key.apply(h), layer.value.apply(h));
        let cols = |i: usize| s![.., i * d..(i + 1) * d];
        // (H, N, N) scores and (H, N, d) outputs: 2 H N² d multiply-adds.
        let each = par::map(heads, 2 * heads * n * n * d, |i| {
            full_attention(q.slice(cols(i)), k.slice(cols(i)), v.slice(cols(i)))
        });
        let mut y = Array2::<f32>::zeros((n, c));
        let mut weights = Array3::<f32>::zeros((heads, n, n));
        for (i, (o, w)) in each.into_iter().enumerate() {
            if !knocked(i) {
                y.slice_mut(cols(i)).assign(&o);
            }
            weights.index_axis_mut(Axis(0), i).assign(&w);
        }
        (layer.attention_output.apply(y.view()), weights)
    }
}
