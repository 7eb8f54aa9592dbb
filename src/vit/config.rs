//! A Vision Transformer's hyper-parameters, as Hugging Face's `ViTConfig` and `DeiTConfig` write
//! them in `config.json`.

use crate::formats::LoadError;
use crate::model::fields::Fields;
use crate::model::limits::{check_params, check_sizes, MAX_FFN, MAX_HEADS, MAX_LAYERS, MAX_WIDTH};

/// The largest image side the engine takes (DeiT-base at 384 is the largest common one).
pub const MAX_IMAGE: usize = 1024;
/// The most classes of a classifier (ImageNet-21k has 21,843).
pub const MAX_LABELS: usize = 32_768;
/// The most tokens of an image (DeiT-base at 384 in patches of 16 has 578): each layer's
/// attention weights are heads × tokens² numbers.
pub const MAX_TOKENS: usize = 4096;

pub use crate::model::dense::Activation;

/// Which family wrote the checkpoint: the names of its tensors and its extra token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `vit.*`, a class token.
    Vit,
    /// `deit.*`, a class token and a distillation token.
    Deit,
}

/// The shape of a ViT. Field names follow `ViTConfig`.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub family: Family,
    pub image_size: usize,
    pub patch_size: usize,
    pub num_channels: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub hidden_act: Activation,
    pub layer_norm_eps: f64,
    pub qkv_bias: bool,
    /// The classes' names, in the order of the logits (`id2label`).
    pub labels: Vec<String>,
}

impl Config {
    /// Reads `config.json`. Unknown keys are ignored; what the engine cannot run is refused,
    /// naming the field.
    pub fn from_json(text: &str) -> Result<Self, LoadError> {
        let raw = Fields::object(text)?;
        let r = Fields(&raw);
        let family = match r.text("model_type")? {
            Some("vit") => Family::Vit,
            Some("deit") => Family::Deit,
            Some(kind) => {
                return Err(LoadError::Config(format!(
                    "model_type is \"{kind}\"; this engine runs \"vit\" and \"deit\" models"
                )))
            }
            None => return Err(LoadError::Config("`model_type` is missing; this engine runs \"vit\"".into())),
        };
        let refuse = |what: String| Err(LoadError::Config(what));
        let act = r.text("hidden_act")?.unwrap_or("gelu");
        let Some(hidden_act) = Activation::from_name(act) else {
            return refuse(format!("hidden_act \"{act}\" is not supported (gelu, gelu_new, relu, silu are)"));
        };
        let need = |key: &str, max| r.size(key, max)?.ok_or_else(|| LoadError::Config(format!("`{key}` is missing")));
        let labels = match raw.get("id2label") {
            Some(serde_json::Value::Object(map)) => {
                let mut labels = vec![String::new(); map.len()];
                for (k, v) in map {
                    let i = k.parse::<usize>().ok().filter(|&i| i < map.len());
                    let (Some(i), Some(name)) = (i, v.as_str()) else {
                        return refuse(format!(
                            "id2label has the entry \"{k}\", which is not a class of 0 to {}",
                            map.len()
                        ));
                    };
                    labels[i] = name.to_string();
                }
                labels
            }
            Some(_) => return refuse("id2label is not a map of class numbers to names".into()),
            None => return refuse("`id2label` is missing: the engine runs image classifiers".into()),
        };
        let eps = r.number("layer_norm_eps")?.unwrap_or(1e-12);
        if !(eps > 0.0 && eps < 1.0) {
            return refuse(format!("layer_norm_eps = {eps} is not a small positive number"));
        }
        let cfg = Config {
            family,
            image_size: need("image_size", MAX_IMAGE)?,
            patch_size: need("patch_size", MAX_IMAGE)?,
            num_channels: r.size("num_channels", 4)?.unwrap_or(3),
            hidden_size: need("hidden_size", MAX_WIDTH)?,
            num_hidden_layers: need("num_hidden_layers", MAX_LAYERS)?,
            num_attention_heads: need("num_attention_heads", MAX_HEADS)?,
            intermediate_size: need("intermediate_size", MAX_FFN)?,
            hidden_act,
            layer_norm_eps: eps,
            qkv_bias: r.flag("qkv_bias")?.unwrap_or(true),
            labels,
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks the numbers are consistent with each other and within the limits.
    pub fn validate(&self) -> Result<(), LoadError> {
        check_sizes(&[
            ("image_size", self.image_size, MAX_IMAGE),
            ("patch_size", self.patch_size, MAX_IMAGE),
            ("num_channels", self.num_channels, 4),
            ("hidden_size", self.hidden_size, MAX_WIDTH),
            ("num_hidden_layers", self.num_hidden_layers, MAX_LAYERS),
            ("num_attention_heads", self.num_attention_heads, MAX_HEADS),
            ("intermediate_size", self.intermediate_size, MAX_FFN),
            ("the number of classes (id2label)", self.labels.len(), MAX_LABELS),
        ])?;
        let fail = |what: String| Err(LoadError::Config(what));
        if !self.image_size.is_multiple_of(self.patch_size) {
            return fail(format!(
                "image_size = {} is not a whole number of patches of {}",
                self.image_size, self.patch_size
            ));
        }
        if self.tokens() > MAX_TOKENS {
            return fail(format!(
                "image_size {} in patches of {} makes {} tokens; the engine takes {MAX_TOKENS}",
                self.image_size,
                self.patch_size,
                self.tokens()
            ));
        }
        if !self.hidden_size.is_multiple_of(self.num_attention_heads) {
            return fail(format!(
                "hidden_size = {} is not divisible by num_attention_heads = {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        check_params(self.param_count())
    }

    /// Patches along a side.
    pub fn grid(&self) -> usize {
        self.image_size / self.patch_size
    }

    /// The tokens of an image: the patches and the class token (and DeiT's distillation token).
    pub fn tokens(&self) -> usize {
        self.grid() * self.grid() + self.extra_tokens()
    }

    /// The tokens in front of the patches: the class token, and DeiT's distillation token.
    pub fn extra_tokens(&self) -> usize {
        match self.family {
            Family::Vit => 1,
            Family::Deit => 2,
        }
    }

    /// The parameter count in u64, every product checked: None if it overflows (one classifier
    /// counted).
    pub fn param_count(&self) -> Option<u64> {
        let [c, f, l, p, ch, n, k] = [
            self.hidden_size,
            self.intermediate_size,
            self.num_hidden_layers,
            self.patch_size,
            self.num_channels,
            self.tokens(),
            self.labels.len(),
        ]
        .map(|x| x as u64);
        let patch = ch.checked_mul(p)?.checked_mul(p)?.checked_add(1)?.checked_mul(c)?;
        let attn = c.checked_mul(c)?.checked_add(c)?.checked_mul(4)?;
        let mlp = c.checked_mul(f)?.checked_mul(2)?.checked_add(f)?.checked_add(c)?;
        let layer = attn.checked_add(mlp)?.checked_add(c.checked_mul(4)?)?;
        // The patch embedding, the positions and the class (and distillation) tokens.
        let tokens = (self.extra_tokens() as u64).checked_mul(c)?;
        patch
            .checked_add(tokens)?
            .checked_add(n.checked_mul(c)?)?
            .checked_add(l.checked_mul(layer)?)?
            .checked_add(c.checked_mul(2)?)?
            .checked_add(k.checked_mul(c)?.checked_add(k)?)
    }

    /// The width of one head.
    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads
    }
}
