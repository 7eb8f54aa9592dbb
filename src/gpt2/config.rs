//! GPT-2's hyper-parameters, as Hugging Face's `config.json` writes them.

use serde_json::Value;

use super::LoadError;
use crate::model::limits::{check_params, check_sizes, MAX_FFN, MAX_HEADS, MAX_LAYERS, MAX_VOCAB, MAX_WIDTH};

/// The window's limit: the rows of the table of learned positions (GPT-2 has 1,024).
pub const MAX_POSITIONS: usize = 1 << 16;

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
    /// A character vocabulary (`char_vocab`, not a `GPT2Config` key: the training lab writes it):
    /// token i is its i-th character, and the model reads text one character per token. `None`:
    /// GPT-2's BPE.
    pub char_vocab: Option<String>,
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
        Config {
            vocab_size,
            n_positions,
            n_embd,
            n_layer,
            n_head,
            n_inner: n_embd.saturating_mul(4), // `validate` refuses a saturated one
            layer_norm_epsilon: 1e-5,
            char_vocab: None,
        }
    }

    /// The width of one head, C / H.
    pub fn head_dim(&self) -> usize {
        self.n_embd / self.n_head
    }

    /// Reads `config.json`. Unknown keys are ignored; what the engine cannot run is refused,
    /// and so is a key written twice (two readers could take different ones).
    pub fn from_json(text: &str) -> Result<Self, LoadError> {
        let json = crate::formats::json::parse_strict(text, 10_000)
            .map_err(|e| LoadError::Config(format!("not valid JSON ({e})")))?;
        let Value::Object(raw) = json else {
            return Err(LoadError::Config("it is not a JSON object".into()));
        };
        let text_field = |key: &str| -> Result<Option<&str>, LoadError> {
            match raw.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(other) => Err(LoadError::Config(format!("`{key}` must be a string, not {other}"))),
            }
        };
        let flag = |key: &str| -> Result<Option<bool>, LoadError> {
            match raw.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Bool(b)) => Ok(Some(*b)),
                Some(other) => Err(LoadError::Config(format!("`{key}` must be true or false, not {other}"))),
            }
        };
        // A size: a whole number from 1 to its limit (sizes past the limits are refused here,
        // before anything is allocated from them or multiplied by them).
        let size = |key: &str, max: usize| -> Result<Option<usize>, LoadError> {
            match raw.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => match v.as_u64() {
                    Some(0) => Err(LoadError::Config(format!("`{key}` must be positive"))),
                    Some(n) if n <= max as u64 => Ok(Some(n as usize)),
                    _ => Err(LoadError::Config(format!(
                        "`{key}` must be a whole number from 1 to at most {max}, not {v}"
                    ))),
                },
            }
        };
        if let Some(kind) = text_field("model_type")? {
            if kind != "gpt2" {
                return Err(LoadError::Config(format!("model_type is \"{kind}\"; this engine runs \"gpt2\" models")));
            }
        }
        if let Some(act) = text_field("activation_function")? {
            // "gelu_new" and "gelu_pytorch_tanh" are the same tanh approximation GPT-2 uses.
            if act != "gelu_new" && act != "gelu_pytorch_tanh" {
                return Err(LoadError::Config(format!(
                    "activation_function \"{act}\" is not supported (GPT-2 uses \"gelu_new\")"
                )));
            }
        }
        if flag("scale_attn_weights")? == Some(false) || flag("scale_attn_by_inverse_layer_idx")? == Some(true) {
            return Err(LoadError::Config("only GPT-2's attention scaling (1/√d per head) is supported".into()));
        }
        let char_vocab = match raw.get("char_vocab") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(LoadError::Config(format!(
                    "char_vocab must be a string whose i-th character is token i, not {other}"
                )))
            }
        };
        let layer_norm_epsilon = match raw.get("layer_norm_epsilon") {
            None | Some(Value::Null) => 1e-5,
            Some(v) => v.as_f64().ok_or_else(|| {
                LoadError::Config(format!("`layer_norm_epsilon` must be a small positive number, not {v}"))
            })? as f32,
        };
        let need = |v: Option<usize>, name: &str| v.ok_or_else(|| LoadError::Config(format!("`{name}` is missing")));
        let n_embd = need(size("n_embd", MAX_WIDTH)?, "n_embd")?;
        let cfg = Config {
            vocab_size: need(size("vocab_size", MAX_VOCAB)?, "vocab_size")?,
            n_positions: need(size("n_positions", MAX_POSITIONS)?.or(size("n_ctx", MAX_POSITIONS)?), "n_positions")?,
            n_embd,
            n_layer: need(size("n_layer", MAX_LAYERS)?, "n_layer")?,
            n_head: need(size("n_head", MAX_HEADS)?, "n_head")?,
            n_inner: size("n_inner", MAX_FFN)?.unwrap_or(4 * n_embd), // n_embd ≤ MAX_WIDTH: no overflow
            layer_norm_epsilon,
            char_vocab,
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks the numbers are consistent with each other.
    pub fn validate(&self) -> Result<(), LoadError> {
        check_sizes(&[
            ("vocab_size", self.vocab_size, MAX_VOCAB),
            ("n_positions", self.n_positions, MAX_POSITIONS),
            ("n_embd", self.n_embd, MAX_WIDTH),
            ("n_layer", self.n_layer, MAX_LAYERS),
            ("n_head", self.n_head, MAX_HEADS),
            ("n_inner", self.n_inner, MAX_FFN),
        ])?;
        check_params(self.param_count())?;
        if !self.n_embd.is_multiple_of(self.n_head) {
            return Err(LoadError::Config(format!(
                "n_embd = {} is not divisible by n_head = {}",
                self.n_embd, self.n_head
            )));
        }
        if !(self.layer_norm_epsilon > 0.0 && self.layer_norm_epsilon.is_finite()) {
            return Err(LoadError::Config("layer_norm_epsilon must be a small positive number".into()));
        }
        if let Some(vocab) = &self.char_vocab {
            let n = vocab.chars().count();
            if n != self.vocab_size {
                return Err(LoadError::Config(format!(
                    "char_vocab has {n} characters but vocab_size is {}: token i is the i-th character, so \
                     they must be as many",
                    self.vocab_size
                )));
            }
            // A set, not a pairwise search: a vocabulary may have up to MAX_VOCAB characters.
            let mut seen = std::collections::HashSet::with_capacity(n);
            if let Some((i, c)) = vocab.chars().enumerate().find(|&(_, c)| !seen.insert(c)) {
                return Err(LoadError::Config(format!("char_vocab has {c:?} twice (again as token {i})")));
            }
        }
        Ok(())
    }

    /// The number of distinct parameters (the LM head is tied to `wte`). `validate` bounds it,
    /// so on a validated config this cannot overflow, even in a 32-bit build.
    pub fn n_params(&self) -> usize {
        self.param_count().and_then(|n| usize::try_from(n).ok()).unwrap_or(usize::MAX)
    }

    /// The parameter count in u64, every product checked: None if it overflows.
    pub fn param_count(&self) -> Option<u64> {
        let [v, p, c, f, l] =
            [self.vocab_size, self.n_positions, self.n_embd, self.n_inner, self.n_layer].map(|x| x as u64);
        // block = 2C (ln_1) + 3C² + 3C (c_attn) + C² + C (c_proj) + 2C (ln_2) + CF + F (c_fc) + FC + C (c_proj)
        let c2 = c.checked_mul(c)?;
        let cf = c.checked_mul(f)?;
        let block =
            c2.checked_mul(4)?.checked_add(cf.checked_mul(2)?)?.checked_add(c.checked_mul(9)?)?.checked_add(f)?;
        v.checked_mul(c)?
            .checked_add(p.checked_mul(c)?)?
            .checked_add(l.checked_mul(block)?)?
            .checked_add(c.checked_mul(2)?)
    }
}
