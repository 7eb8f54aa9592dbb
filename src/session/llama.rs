//! A Llama-family model as a session's family: the checkpoint's `tokenizer.json` (its template's
//! special tokens kept first when a prompt is cut to the window), and an empty prompt started
//! from the tokenizer's start-of-text token.

use super::family::ModelFamily;
use super::protocol::Family;
use super::serve::{cut_to_window, Session};
use crate::formats::LoadError;
use crate::llama::gpu::GpuLlama;
use crate::llama::{Llama, Tokenizer};
use crate::model::RunError;

/// The tokens an empty prompt may start from, the first the tokenizer has (SmolLM2's first id).
pub const START_TOKENS: [&str; 3] = ["<|endoftext|>", "<|begin_of_text|>", "<s>"];

/// Llama's: RoPE, grouped-query attention, RMSNorm, SwiGLU (Llama 2 and 3, SmolLM2, …).
impl ModelFamily for Llama {
    const FAMILY: Family = Family::Llama;
    const MODEL_TYPE: &'static str = "llama";
    const ARCHITECTURE: &'static str = "LlamaForCausalLM";
    const NAME: &'static str = "the Llama family";
    const LABEL: &'static str = "Llama family";
    /// Llama 1 and 2's, Llama 3's (base and chat), and the ChatML models' (SmolLM2, whose
    /// `<|endoftext|>` is GPT-2's).
    const END_OF_TEXT: &'static [&'static str] =
        &["<|endoftext|>", "</s>", "<|end_of_text|>", "<|eot_id|>", "<|im_end|>"];
    const TOKENIZER_FILE: Option<&'static str> = Some("tokenizer.json");
    const GROUPED_QUERIES: bool = true;
    type Gpu = GpuLlama;
    type Tokenizer = Tokenizer;

    fn load(config_json: &str, safetensors: &[u8], tokenizer: Option<&str>) -> Result<Session<Self>, LoadError> {
        let tok = tokenizer.ok_or_else(missing_tokenizer)?;
        Session::<Llama>::new(config_json, safetensors, tok)
    }

    /// A tokenizer whose ids do not fit the model's vocabulary is refused.
    fn with_model(model: Llama, tokenizer: Option<&str>) -> Result<Session<Self>, LoadError> {
        let json = tokenizer.ok_or_else(missing_tokenizer)?;
        let tok = Tokenizer::from_json(json).map_err(|e| LoadError::Tokenizer(e.to_string()))?;
        tok.check_vocab(model.config.vocab_size).map_err(|e| LoadError::Tokenizer(e.to_string()))?;
        Ok(Session::from_parts(model, tok))
    }

    /// The prompt's tokens in the tokenizer's template, the text cut from the front to fit the
    /// window (the template's begin-of-text token stays first).
    fn tokens(tok: &Tokenizer, prompt: &str, window: usize) -> Result<(Vec<u32>, usize), RunError> {
        let template = tok.template();
        let mut text = tok.encode_text(prompt);
        let specials = template.apply_single(&[]).len();
        let mut dropped = cut_to_window(&mut text, window.saturating_sub(specials).max(1));
        let mut ids = template.apply_single(&text);
        if ids.is_empty() {
            let start = START_TOKENS.iter().find_map(|t| tok.added_id(t)).ok_or(RunError::Empty)?;
            ids.push(start);
        }
        dropped += cut_to_window(&mut ids, window);
        Ok((ids, dropped))
    }

    fn text_tokens(tok: &Tokenizer, text: &str) -> Result<Vec<u32>, RunError> {
        Ok(tok.encode_text(text))
    }

    fn token_text(tok: &Tokenizer, id: u32) -> String {
        tok.token_text(id)
    }

    fn decode(tok: &Tokenizer, ids: &[u32]) -> String {
        tok.decode(ids)
    }
}

impl Session<Llama> {
    /// Loads `config.json`, `model.safetensors` and `tokenizer.json`; a tokenizer whose ids do
    /// not fit the model's vocabulary is refused.
    pub fn new(config_json: &str, safetensors: &[u8], tokenizer_json: &str) -> Result<Self, LoadError> {
        <Llama as ModelFamily>::with_model(Llama::load(config_json, safetensors)?, Some(tokenizer_json))
    }
}

fn missing_tokenizer() -> LoadError {
    LoadError::Tokenizer(
        "tokenizer.json is missing: a Llama-family model needs it beside config.json and model.safetensors".into(),
    )
}
