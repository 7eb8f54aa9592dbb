//! What a model family gives the session: its CPU model (an engine's, `CpuModel`, which also
//! loads as it downloads, `Streamed`), its GPU twin (`GpuModel`), and its tokenizer. Everything
//! else (the GPU attach and self-test, the fallback to the CPU, analysis, generation) is the
//! session's, the same for every family.
//!
//! A family is one implementation of [`ModelFamily`] on its CPU model type: `session::gpt2` for
//! GPT-2, `session::llama` for the Llama family.

use super::protocol;
use super::serve::Session;
use crate::formats::LoadError;
use crate::model::engine::{CpuModel, GpuModel};
use crate::model::stream::Streamed;
use crate::model::RunError;

pub trait ModelFamily: CpuModel + Streamed + Sized + 'static {
    /// The family's name in the worker's replies (its variant of `Family`, which the registry
    /// of families in `session::any` writes).
    const FAMILY: protocol::Family;
    /// How `config.json` names the family: its `model_type`, and its first `architectures`.
    const MODEL_TYPE: &'static str;
    const ARCHITECTURE: &'static str;
    /// How a message names the family ("GPT-2", "the Llama family"), and how the page's status
    /// line labels a loaded model ("GPT-2", "Llama family").
    const NAME: &'static str;
    const LABEL: &'static str;
    /// The tokens that end a text in the family's vocabularies: generation stops at one.
    const END_OF_TEXT: &'static [&'static str];
    /// The tokenizer file it reads beside `config.json` and `model.safetensors`, if any
    /// (`tokenizer.json`; GPT-2 has its own BPE).
    const TOKENIZER_FILE: Option<&'static str>;
    /// Whether its attention may group query heads over fewer key and value heads: the page then
    /// shows the KV heads (`Reply::Loaded::n_kv_head`).
    const GROUPED_QUERIES: bool;
    /// The same model on the GPU.
    type Gpu: GpuModel<Cpu = Self>;
    type Tokenizer;

    /// A session on the checkpoint's files: `config.json`'s text, `model.safetensors`' bytes, and
    /// the tokenizer file the family needs (`tokenizer.json`), refused with a message when it is
    /// missing or does not fit the model.
    fn load(config_json: &str, safetensors: &[u8], tokenizer: Option<&str>) -> Result<Session<Self>, LoadError>;

    /// A session on a model already loaded (by `model::stream::StreamLoader`, as it downloaded),
    /// with the tokenizer file the family needs, refused as `load` refuses it.
    fn with_model(model: Self, tokenizer: Option<&str>) -> Result<Session<Self>, LoadError>;

    /// The prompt's tokens, cut from the front to the model's `window`: (kept, dropped). An empty
    /// prompt starts from the tokenizer's start token, or is refused (`RunError::Empty`).
    fn tokens(tok: &Self::Tokenizer, prompt: &str, window: usize) -> Result<(Vec<u32>, usize), RunError>;

    /// A text's own tokens, without what the tokenizer puts around a prompt (a start token):
    /// an answer token, or the letters of the head detectors' random sequence.
    fn text_tokens(tok: &Self::Tokenizer, text: &str) -> Result<Vec<u32>, RunError>;

    /// One token as text (a byte-level token that is part of a character shows its bytes).
    fn token_text(tok: &Self::Tokenizer, id: u32) -> String;

    /// Tokens decoded to text.
    fn decode(tok: &Self::Tokenizer, ids: &[u32]) -> String;

    /// The characters a character-vocabulary model reads (GPT-2's own small models), else None.
    fn char_vocab(_tok: &Self::Tokenizer) -> Option<String> {
        None
    }
}
