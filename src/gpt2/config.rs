//! GPT-2's hyper-parameters, as Hugging Face's `config.json` writes them.

use serde::Deserialize;

use super::LoadError;

/// The shape of a GPT-2 model. Field names follow `GPT2Config`.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub vocab_size: usize,
    /// The context window: the number of rows of `wpe`.
    pub n_positions: usize,
    /// The model width C.
    pub n_embd: usize,
    pub n_layer: usize,
    pub n_head: usize,
    /// The MLP's hidden width (4C unless the config says otherwise).
    pub n_inner: usize,
    pub layer_norm_epsilon: f32,
}

impl Config {
    /// GPT-2 small, the 124M-parameter model (`GPT2Config()`).
    pub fn gpt2_small() -> Self {
        Self::new(50257, 1024, 768, 12, 12)
    }
    /// GPT-2 medium (355M).
    pub fn gpt2_medium() -> Self {
        Self::new(50257, 1024, 1024, 24, 16)
    }

    pub fn new(vocab_size: usize, n_positions: usize, n_embd: usize, n_layer: usize, n_head: usize) -> Self {
        Config { vocab_size, n_positions, n_embd, n_layer, n_head, n_inner: 4 * n_embd, layer_norm_epsilon: 1e-5 }
    }

    /// The width of one head, C / H.
    pub fn head_dim(&self) -> usize {
        self.n_embd / self.n_head
    }

    /// Reads `config.json`. Unknown keys are ignored; what the engine cannot run is refused.
    pub fn from_json(text: &str) -> Result<Self, LoadError> {
        #[derive(Deserialize)]
        struct Raw {
            vocab_size: Option<usize>,
            n_positions: Option<usize>,
            n_ctx: Option<usize>,
            n_embd: Option<usize>,
            n_layer: Option<usize>,
            n_head: Option<usize>,
            n_inner: Option<usize>,
            layer_norm_epsilon: Option<f32>,
            activation_function: Option<String>,
            model_type: Option<String>,
            scale_attn_weights: Option<bool>,
            scale_attn_by_inverse_layer_idx: Option<bool>,
        }
        let raw: Raw = serde_json::from_str(text).map_err(|e| LoadError::Config(format!("not valid JSON ({e})")))?;
        if let Some(kind) = &raw.model_type {
            if kind != "gpt2" {
                return Err(LoadError::Config(format!("model_type is \"{kind}\"; this engine runs \"gpt2\" models")));
            }
        }
        if let Some(act) = &raw.activation_function {
            // "gelu_new" and "gelu_pytorch_tanh" are the same tanh approximation GPT-2 uses.
            if act != "gelu_new" && act != "gelu_pytorch_tanh" {
                return Err(LoadError::Config(format!(
                    "activation_function \"{act}\" is not supported (GPT-2 uses \"gelu_new\")"
                )));
            }
        }
        if raw.scale_attn_weights == Some(false) || raw.scale_attn_by_inverse_layer_idx == Some(true) {
            return Err(LoadError::Config("only GPT-2's attention scaling (1/√d per head) is supported".into()));
        }
        let need = |v: Option<usize>, name: &str| v.ok_or_else(|| LoadError::Config(format!("`{name}` is missing")));
        let n_embd = need(raw.n_embd, "n_embd")?;
        let cfg = Config {
            vocab_size: need(raw.vocab_size, "vocab_size")?,
            n_positions: need(raw.n_positions.or(raw.n_ctx), "n_positions")?,
            n_embd,
            n_layer: need(raw.n_layer, "n_layer")?,
            n_head: need(raw.n_head, "n_head")?,
            n_inner: raw.n_inner.unwrap_or(4 * n_embd),
            layer_norm_epsilon: raw.layer_norm_epsilon.unwrap_or(1e-5),
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks the numbers are consistent with each other.
    pub fn validate(&self) -> Result<(), LoadError> {
        let positive = [
            ("vocab_size", self.vocab_size),
            ("n_positions", self.n_positions),
            ("n_embd", self.n_embd),
            ("n_layer", self.n_layer),
            ("n_head", self.n_head),
            ("n_inner", self.n_inner),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(LoadError::Config(format!("`{name}` must be positive")));
            }
        }
        if !self.n_embd.is_multiple_of(self.n_head) {
            return Err(LoadError::Config(format!(
                "n_embd = {} is not divisible by n_head = {}",
                self.n_embd, self.n_head
            )));
        }
        if !(self.layer_norm_epsilon > 0.0 && self.layer_norm_epsilon.is_finite()) {
            return Err(LoadError::Config("layer_norm_epsilon must be a small positive number".into()));
        }
        Ok(())
    }

    /// The number of distinct parameters (the LM head is tied to `wte`).
    pub fn n_params(&self) -> usize {
        let (c, f) = (self.n_embd, self.n_inner);
        let block = 2 * c + (c * 3 * c + 3 * c) + (c * c + c) + 2 * c + (c * f + f) + (f * c + c);
        self.vocab_size * c + self.n_positions * c + self.n_layer * block + 2 * c
    }
}
