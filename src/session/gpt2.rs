//! GPT-2 as a session's family: its BPE (or its config's character vocabulary), and an empty
//! prompt started from `<|endoftext|>`.

use super::family::ModelFamily;
use super::protocol::Family;
use super::serve::{cut_to_window, Session};
use crate::formats::LoadError;
use crate::gpt2::gpu::GpuGpt2;
use crate::gpt2::tokenizer::{Tokenizer, END_OF_TEXT};
use crate::gpt2::Gpt2;
use crate::model::RunError;

/// GPT-2: learned positions, one key and value per head, LayerNorm, GELU.
impl ModelFamily for Gpt2 {
    const FAMILY: Family = Family::Gpt2;
    const MODEL_TYPE: &'static str = "gpt2";
    const ARCHITECTURE: &'static str = "GPT2LMHeadModel";
    const NAME: &'static str = "GPT-2";
    const LABEL: &'static str = "GPT-2";
    const END_OF_TEXT: &'static [&'static str] = &["<|endoftext|>"];
    const TOKENIZER_FILE: Option<&'static str> = None;
    const GROUPED_QUERIES: bool = false;
    type Gpu = GpuGpt2;
    type Tokenizer = Tokenizer;

    /// GPT-2 reads its own BPE, or the character vocabulary its config names: no tokenizer file.
    fn load(config_json: &str, safetensors: &[u8], _tokenizer: Option<&str>) -> Result<Session<Self>, LoadError> {
        Session::<Gpt2>::new(config_json, safetensors)
    }

    fn with_model(model: Gpt2, _tokenizer: Option<&str>) -> Result<Session<Self>, LoadError> {
        let tok = match &model.config.char_vocab {
            Some(vocab) => Tokenizer::chars(vocab),
            None => Tokenizer::gpt2(),
        };
        Ok(Session::from_parts(model, tok))
    }

    /// A character-vocabulary model refuses a prompt with a character it has no token for, and
    /// an empty one (it has no `<|endoftext|>` to start from).
    fn tokens(tok: &Tokenizer, prompt: &str, window: usize) -> Result<(Vec<u32>, usize), RunError> {
        let mut ids = tok.encode_checked(prompt)?;
        if ids.is_empty() {
            if tok.char_vocab().is_some() {
                return Err(RunError::Empty);
            }
            ids.push(END_OF_TEXT);
        }
        let dropped = cut_to_window(&mut ids, window);
        Ok((ids, dropped))
    }

    fn text_tokens(tok: &Tokenizer, text: &str) -> Result<Vec<u32>, RunError> {
        tok.encode_checked(text)
    }

    fn token_text(tok: &Tokenizer, id: u32) -> String {
        tok.token_text(id)
    }

    fn decode(tok: &Tokenizer, ids: &[u32]) -> String {
        tok.decode(ids)
    }

    fn char_vocab(tok: &Tokenizer) -> Option<String> {
        tok.char_vocab()
    }
}

impl Session<Gpt2> {
    /// Loads a checkpoint. Its tokenizer is GPT-2's BPE, or the character vocabulary its
    /// `config.json` names (`char_vocab`).
    pub fn new(config_json: &str, safetensors: &[u8]) -> Result<Self, LoadError> {
        <Gpt2 as ModelFamily>::with_model(Gpt2::load(config_json, safetensors)?, None)
    }
}
