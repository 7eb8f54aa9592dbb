//! A Marian translation model's hyper-parameters, as Hugging Face's `MarianConfig` writes them in
//! `config.json` (the OPUS-MT models, `Helsinki-NLP/opus-mt-*`).

use crate::formats::LoadError;
use crate::model::fields::Fields;
use crate::model::limits::{check_params, check_sizes, MAX_FFN, MAX_HEADS, MAX_LAYERS, MAX_VOCAB, MAX_WIDTH};

/// The most positions of the sinusoidal table (OPUS-MT's is 512).
pub const MAX_POSITIONS: usize = 1 << 14;

pub use crate::model::dense::Activation;

/// The shape of a Marian model. Field names follow `MarianConfig`.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// One vocabulary shared by source and target (`share_encoder_decoder_embeddings`).
    pub vocab_size: usize,
    /// The model width C.
    pub d_model: usize,
    pub encoder_layers: usize,
    pub decoder_layers: usize,
    pub encoder_attention_heads: usize,
    pub decoder_attention_heads: usize,
    pub encoder_ffn_dim: usize,
    pub decoder_ffn_dim: usize,
    pub activation_function: Activation,
    /// Token embeddings multiplied by √C.
    pub scale_embedding: bool,
    /// The sinusoidal table's length: the longest source, and the longest target.
    pub max_position_embeddings: usize,
    pub pad_token_id: u32,
    /// The token the decoder starts from (OPUS-MT: the pad token).
    pub decoder_start_token_id: u32,
    /// `</s>`: ends the source and the translation.
    pub eos_token_id: u32,
    /// Whether the output layer is the shared token embeddings (no `lm_head.weight` of its own).
    pub tie_word_embeddings: bool,
}

impl Config {
    /// `Helsinki-NLP/opus-mt-en-de`'s shape: 6 + 6 layers of 8 heads, width 512, FFN 2,048,
    /// 58,101 tokens, tied, swish, embeddings scaled.
    pub fn opus_mt_en_de() -> Config {
        Config {
            vocab_size: 58101,
            d_model: 512,
            encoder_layers: 6,
            decoder_layers: 6,
            encoder_attention_heads: 8,
            decoder_attention_heads: 8,
            encoder_ffn_dim: 2048,
            decoder_ffn_dim: 2048,
            activation_function: Activation::Swish,
            scale_embedding: true,
            max_position_embeddings: 512,
            pad_token_id: 58100,
            decoder_start_token_id: 58100,
            eos_token_id: 0,
            tie_word_embeddings: true,
        }
    }

    /// Reads `config.json`. Unknown keys are ignored; what the engine cannot run is refused,
    /// naming the field.
    pub fn from_json(text: &str) -> Result<Self, LoadError> {
        let raw = Fields::object(text)?;
        let r = Fields(&raw);
        match r.text("model_type")? {
            Some("marian") => {}
            Some(kind) => {
                return Err(LoadError::Config(format!("model_type is \"{kind}\"; this engine runs \"marian\" models")))
            }
            None => return Err(LoadError::Config("`model_type` is missing; this engine runs \"marian\"".into())),
        }
        let refuse = |what: String| Err(LoadError::Config(what));
        if r.flag("share_encoder_decoder_embeddings")? == Some(false) {
            return refuse(
                "`share_encoder_decoder_embeddings` is false: only models whose source and target share one \
                 vocabulary are supported"
                    .into(),
            );
        }
        if r.flag("static_position_embeddings")? == Some(false) {
            return refuse("`static_position_embeddings` is false: only sinusoidal positions are supported".into());
        }
        for key in ["normalize_before", "add_final_layer_norm", "normalize_embedding"] {
            if r.flag(key)? == Some(true) {
                return refuse(format!("`{key}` is true: only Marian's post-norm blocks are supported"));
            }
        }
        let name = r.text("activation_function")?.unwrap_or("gelu");
        let Some(activation_function) = Activation::from_name(name) else {
            return refuse(format!(
                "activation_function \"{name}\" is not supported (swish, silu, relu, gelu, gelu_new are)"
            ));
        };
        let need = |key: &str, max| r.size(key, max)?.ok_or_else(|| LoadError::Config(format!("`{key}` is missing")));
        let vocab_size = need("vocab_size", MAX_VOCAB)?;
        if let Some(v) = r.size("decoder_vocab_size", MAX_VOCAB)?.filter(|&v| v != vocab_size) {
            return refuse(format!("decoder_vocab_size = {v} but vocab_size = {vocab_size}: one shared vocabulary"));
        }
        let id = |key: &str, default: Option<u32>| -> Result<u32, LoadError> {
            match r.number(key)? {
                Some(n) if n >= 0.0 && n.fract() == 0.0 && n < vocab_size as f64 => Ok(n as u32),
                Some(n) => Err(LoadError::Config(format!("`{key}` = {n} is not a token of the {vocab_size}"))),
                None => default.ok_or_else(|| LoadError::Config(format!("`{key}` is missing"))),
            }
        };
        let pad_token_id = id("pad_token_id", None)?;
        let cfg = Config {
            vocab_size,
            d_model: need("d_model", MAX_WIDTH)?,
            encoder_layers: need("encoder_layers", MAX_LAYERS)?,
            decoder_layers: need("decoder_layers", MAX_LAYERS)?,
            encoder_attention_heads: need("encoder_attention_heads", MAX_HEADS)?,
            decoder_attention_heads: need("decoder_attention_heads", MAX_HEADS)?,
            encoder_ffn_dim: need("encoder_ffn_dim", MAX_FFN)?,
            decoder_ffn_dim: need("decoder_ffn_dim", MAX_FFN)?,
            activation_function,
            scale_embedding: r.flag("scale_embedding")?.unwrap_or(false),
            max_position_embeddings: need("max_position_embeddings", MAX_POSITIONS)?,
            pad_token_id,
            decoder_start_token_id: id("decoder_start_token_id", Some(pad_token_id))?,
            eos_token_id: id("eos_token_id", Some(0))?,
            tie_word_embeddings: r.flag("tie_word_embeddings")?.unwrap_or(true),
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks the numbers are consistent with each other and within the limits.
    pub fn validate(&self) -> Result<(), LoadError> {
        check_sizes(&[
            ("vocab_size", self.vocab_size, MAX_VOCAB),
            ("d_model", self.d_model, MAX_WIDTH),
            ("encoder_layers", self.encoder_layers, MAX_LAYERS),
            ("decoder_layers", self.decoder_layers, MAX_LAYERS),
            ("encoder_attention_heads", self.encoder_attention_heads, MAX_HEADS),
            ("decoder_attention_heads", self.decoder_attention_heads, MAX_HEADS),
            ("encoder_ffn_dim", self.encoder_ffn_dim, MAX_FFN),
            ("decoder_ffn_dim", self.decoder_ffn_dim, MAX_FFN),
            ("max_position_embeddings", self.max_position_embeddings, MAX_POSITIONS),
        ])?;
        for (key, heads) in [
            ("encoder_attention_heads", self.encoder_attention_heads),
            ("decoder_attention_heads", self.decoder_attention_heads),
        ] {
            if !self.d_model.is_multiple_of(heads) {
                return Err(LoadError::Config(format!(
                    "d_model = {} is not divisible by {key} = {heads}",
                    self.d_model
                )));
            }
        }
        check_params(self.param_count())
    }

    /// The number of distinct parameters (the output layer counted once when tied).
    pub fn n_params(&self) -> usize {
        self.param_count().and_then(|n| usize::try_from(n).ok()).unwrap_or(usize::MAX)
    }

    /// The parameter count in u64, every product checked: None if it overflows.
    pub fn param_count(&self) -> Option<u64> {
        let [v, c, le, ld, fe, fd] = [
            self.vocab_size,
            self.d_model,
            self.encoder_layers,
            self.decoder_layers,
            self.encoder_ffn_dim,
            self.decoder_ffn_dim,
        ]
        .map(|x| x as u64);
        // An attention: 4 projections C → C with biases; a layer norm: 2C; an MLP: C·F + F + F·C + C.
        let attn = c.checked_mul(c)?.checked_add(c)?.checked_mul(4)?;
        let mlp = |f: u64| c.checked_mul(f)?.checked_mul(2)?.checked_add(f)?.checked_add(c);
        let enc = attn.checked_add(mlp(fe)?)?.checked_add(c.checked_mul(4)?)?;
        let dec = attn.checked_mul(2)?.checked_add(mlp(fd)?)?.checked_add(c.checked_mul(6)?)?;
        let tables = if self.tie_word_embeddings { 1 } else { 3 };
        v.checked_mul(c)?
            .checked_mul(tables)?
            .checked_add(v)?
            .checked_add(le.checked_mul(enc)?)?
            .checked_add(ld.checked_mul(dec)?)
    }

    /// The width of one encoder head and of one decoder head.
    pub fn head_dims(&self) -> (usize, usize) {
        (self.d_model / self.encoder_attention_heads, self.d_model / self.decoder_attention_heads)
    }
}
