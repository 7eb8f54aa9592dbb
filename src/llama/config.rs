//! A Llama-family model's hyper-parameters, as Hugging Face's `LlamaConfig` writes them in
//! `config.json`.
//!
//! Two generations of that file are read: older ones give `rope_theta` and `rope_scaling`
//! (null for plain RoPE); newer ones group them as `rope_parameters` (`rope_type` "default"
//! and `rope_theta`). Both mean the same model.

use serde_json::{Map, Value};

use crate::formats::LoadError;
use crate::model::fields::Fields;
use crate::model::limits::{
    check_params, check_sizes, MAX_FFN, MAX_HEADS, MAX_HEAD_DIM, MAX_LAYERS, MAX_VOCAB, MAX_WIDTH,
};

/// The window's limit: RoPE has no table of positions, so the window is only a number; Llama 3.1
/// gives 131,072.
pub const MAX_POSITIONS: usize = 1 << 20;

/// The model types this engine runs.
pub const SUPPORTED: &str = "\"llama\"";

/// The shape of a Llama-family model. Field names follow `LlamaConfig`.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub vocab_size: usize,
    /// The model width C.
    pub hidden_size: usize,
    /// The MLP's hidden width F (gate and up project C → F, down F → C).
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    /// H, the query heads.
    pub num_attention_heads: usize,
    /// KV, the key and value heads: H for multi-head, 1 for multi-query, between for grouped-query
    /// attention (H / KV query heads share each).
    pub num_key_value_heads: usize,
    /// D, the width of one head (C / H unless the config says otherwise).
    pub head_dim: usize,
    /// The base θ of RoPE's frequencies θ^(−2i/D).
    pub rope_theta: f64,
    pub rms_norm_eps: f32,
    /// Whether the output layer is the token embedding table (no `lm_head.weight` of its own).
    pub tie_word_embeddings: bool,
    /// The context window.
    pub max_position_embeddings: usize,
}

impl Config {
    /// A config with `LlamaConfig`'s defaults for everything but the sizes given: multi-head
    /// (KV = H), D = C / H, θ = 10,000, ε = 10⁻⁶, untied, 2,048 positions.
    pub fn new(vocab_size: usize, hidden_size: usize, intermediate_size: usize, layers: usize, heads: usize) -> Self {
        Config {
            vocab_size,
            hidden_size,
            intermediate_size,
            num_hidden_layers: layers,
            num_attention_heads: heads,
            num_key_value_heads: heads,
            head_dim: hidden_size / heads.max(1), // `validate` refuses heads = 0
            rope_theta: 10_000.0,
            rms_norm_eps: 1e-6,
            tie_word_embeddings: false,
            max_position_embeddings: 2048,
        }
    }

    /// SmolLM2-135M (`HuggingFaceTB/SmolLM2-135M`): 30 layers, 9 heads sharing 3 KV heads.
    pub fn smollm2_135m() -> Self {
        Config {
            num_key_value_heads: 3,
            rope_theta: 100_000.0,
            rms_norm_eps: 1e-5,
            tie_word_embeddings: true,
            max_position_embeddings: 8192,
            ..Config::new(49152, 576, 1536, 30, 9)
        }
    }

    /// H / KV: how many query heads share one key and value head.
    pub fn group_size(&self) -> usize {
        self.num_attention_heads / self.num_key_value_heads
    }

    /// The key and value head that query head `head` reads.
    pub fn kv_head(&self, head: usize) -> usize {
        head / self.group_size()
    }

    /// H · D, the width of the queries and of the attention output.
    pub fn q_width(&self) -> usize {
        self.num_attention_heads * self.head_dim
    }

    /// KV · D, the width of the keys and of the values.
    pub fn kv_width(&self) -> usize {
        self.num_key_value_heads * self.head_dim
    }

    /// Reads `config.json`. Unknown keys are ignored; what the engine cannot run is refused,
    /// naming what it runs, and so is a key written twice (two readers could take different ones).
    pub fn from_json(text: &str) -> Result<Self, LoadError> {
        let raw = Fields::object(text)?;
        let r = Fields(&raw);
        match r.text("model_type")? {
            Some("llama") => {}
            Some(kind) => {
                return Err(LoadError::Config(format!(
                    "model_type is \"{kind}\"; this engine runs {SUPPORTED} models (and GPT-2 its own)"
                )))
            }
            None => return Err(LoadError::Config(format!("`model_type` is missing; this engine runs {SUPPORTED}"))),
        }
        if let Some(act) = r.text("hidden_act")? {
            if act != "silu" {
                return Err(LoadError::Config(format!(
                    "hidden_act \"{act}\" is not supported (Llama's MLP uses \"silu\", SwiGLU)"
                )));
            }
        }
        for key in ["attention_bias", "mlp_bias"] {
            if r.flag(key)? == Some(true) {
                return Err(LoadError::Config(format!(
                    "`{key}` is true; only projections without biases are supported"
                )));
            }
        }
        let rope_theta = rope_theta(&raw, &r)?;
        let need = |key: &str, max| r.size(key, max)?.ok_or_else(|| LoadError::Config(format!("`{key}` is missing")));
        let (hidden_size, heads) = (need("hidden_size", MAX_WIDTH)?, need("num_attention_heads", MAX_HEADS)?);
        let head_dim = match r.size("head_dim", MAX_HEAD_DIM)? {
            Some(d) => d,
            None if hidden_size.is_multiple_of(heads) => hidden_size / heads,
            None => {
                return Err(LoadError::Config(format!(
                    "hidden_size = {hidden_size} is not divisible by num_attention_heads = {heads}, and there is \
                     no head_dim"
                )))
            }
        };
        let cfg = Config {
            vocab_size: need("vocab_size", MAX_VOCAB)?,
            hidden_size,
            intermediate_size: need("intermediate_size", MAX_FFN)?,
            num_hidden_layers: need("num_hidden_layers", MAX_LAYERS)?,
            num_attention_heads: heads,
            num_key_value_heads: r.size("num_key_value_heads", MAX_HEADS)?.unwrap_or(heads),
            head_dim,
            rope_theta,
            rms_norm_eps: r.number("rms_norm_eps")?.unwrap_or(1e-6) as f32,
            tie_word_embeddings: r.flag("tie_word_embeddings")?.unwrap_or(false),
            max_position_embeddings: r.size("max_position_embeddings", MAX_POSITIONS)?.unwrap_or(2048),
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks the numbers are consistent with each other and within the limits.
    pub fn validate(&self) -> Result<(), LoadError> {
        check_sizes(&[
            ("vocab_size", self.vocab_size, MAX_VOCAB),
            ("hidden_size", self.hidden_size, MAX_WIDTH),
            ("intermediate_size", self.intermediate_size, MAX_FFN),
            ("num_hidden_layers", self.num_hidden_layers, MAX_LAYERS),
            ("num_attention_heads", self.num_attention_heads, MAX_HEADS),
            ("num_key_value_heads", self.num_key_value_heads, MAX_HEADS),
            ("head_dim", self.head_dim, MAX_HEAD_DIM),
            ("max_position_embeddings", self.max_position_embeddings, MAX_POSITIONS),
        ])?;
        let (h, kv) = (self.num_attention_heads, self.num_key_value_heads);
        if !h.is_multiple_of(kv) {
            return Err(LoadError::Config(format!(
                "num_attention_heads = {h} is not divisible by num_key_value_heads = {kv}: each key and value head \
                 serves a whole group of query heads"
            )));
        }
        // RoPE rotates the two halves of each head against each other.
        if !self.head_dim.is_multiple_of(2) {
            return Err(LoadError::Config(format!("head_dim = {} must be even for RoPE", self.head_dim)));
        }
        check_params(self.param_count())?;
        if !(self.rms_norm_eps > 0.0 && self.rms_norm_eps.is_finite()) {
            return Err(LoadError::Config("`rms_norm_eps` must be a small positive number".into()));
        }
        if !(self.rope_theta > 1.0 && self.rope_theta.is_finite() && self.rope_theta <= 1e12) {
            return Err(LoadError::Config(format!(
                "`rope_theta` = {} must be a number above 1 and at most 10^12",
                self.rope_theta
            )));
        }
        Ok(())
    }

    /// The number of distinct parameters (the LM head counted once when tied). `validate`
    /// bounds it, so on a validated config this cannot overflow, even in a 32-bit build.
    pub fn n_params(&self) -> usize {
        self.param_count().and_then(|n| usize::try_from(n).ok()).unwrap_or(usize::MAX)
    }

    /// The parameter count in u64, every product checked: None if it overflows.
    pub fn param_count(&self) -> Option<u64> {
        let [v, c, f, l, h, kv, d] = [
            self.vocab_size,
            self.hidden_size,
            self.intermediate_size,
            self.num_hidden_layers,
            self.num_attention_heads,
            self.num_key_value_heads,
            self.head_dim,
        ]
        .map(|x| x as u64);
        let (qw, kvw) = (h.checked_mul(d)?, kv.checked_mul(d)?);
        // layer = C·HD (q) + 2·C·KVD (k, v) + HD·C (o) + 3·C·F (gate, up, down) + 2C (two norms)
        let attn = c.checked_mul(qw)?.checked_mul(2)?.checked_add(c.checked_mul(kvw)?.checked_mul(2)?)?;
        let layer = attn.checked_add(c.checked_mul(f)?.checked_mul(3)?)?.checked_add(c.checked_mul(2)?)?;
        let tables = if self.tie_word_embeddings { 1 } else { 2 };
        v.checked_mul(c)?.checked_mul(tables)?.checked_add(l.checked_mul(layer)?)?.checked_add(c)
    }
}

/// RoPE's base θ, from `rope_theta` or `rope_parameters.rope_theta`; refuses any scaling of the
/// frequencies (`rope_scaling`, or a `rope_type` other than "default"), naming its kind.
fn rope_theta(raw: &Map<String, Value>, r: &Fields) -> Result<f64, LoadError> {
    let mut theta = r.number("rope_theta")?;
    for key in ["rope_scaling", "rope_parameters"] {
        let params = match raw.get(key) {
            None | Some(Value::Null) => continue,
            Some(Value::Object(p)) => Fields(p),
            Some(other) => return Err(LoadError::Config(format!("`{key}` must be an object or null, not {other}"))),
        };
        let kind = params.text("rope_type")?.or(params.text("type")?).unwrap_or("default");
        if kind != "default" {
            return Err(LoadError::Config(format!(
                "{key} of type \"{kind}\" is not supported: this engine runs plain RoPE (rope_type \"default\", \
                 no scaling)"
            )));
        }
        if let Some(t) = params.number("rope_theta")? {
            match theta {
                Some(other) if other != t => {
                    return Err(LoadError::Config(format!(
                        "rope_theta = {other} but {key}.rope_theta = {t}: which is meant?"
                    )))
                }
                _ => theta = Some(t),
            }
        }
    }
    Ok(theta.unwrap_or(10_000.0))
}
