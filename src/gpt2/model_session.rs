//! A loaded model of either family answering the page: GPT-2 (`session::Session`) or a
//! Llama-family model (`llama_session::LlamaSession`), told apart by `config.json`'s
//! `model_type` (or `architectures`). The worker holds one of these; both answer with the same
//! replies, so the page's views draw either.

use std::rc::Rc;

use super::llama_session::{LlamaGeneration, LlamaSession};
use super::protocol::{Analysis, Attention, Family, HeadQkv, Query, Reply, Source, Token};
use super::session::{Generation as Gpt2Generation, Session};
use super::{LoadError, RunError};
use crate::gpu::{Gpu, GpuError, Precision};

/// What the page can load, for the refusal's message.
pub const SUPPORTED: &str = "GPT-2 (model_type \"gpt2\", GPT2LMHeadModel) and the Llama family \
    (model_type \"llama\", LlamaForCausalLM)";

/// Which family `config.json` describes: its `model_type`, else its `architectures`; a config
/// that names neither is read as GPT-2 (the book's own checkpoints and older files say nothing).
pub fn family(config_json: &str) -> Result<Family, LoadError> {
    let json: serde_json::Value = serde_json::from_str(config_json)
        .map_err(|e| LoadError::Config(format!("config.json is not valid JSON ({e})")))?;
    let model_type = json.get("model_type").and_then(|v| v.as_str());
    let architectures: Vec<&str> =
        json.get("architectures").and_then(|v| v.as_array()).into_iter().flatten().filter_map(|v| v.as_str()).collect();
    match model_type {
        Some("gpt2") => return Ok(Family::Gpt2),
        Some("llama") => return Ok(Family::Llama),
        Some(other) => {
            return Err(LoadError::Config(format!(
                "its model_type is \"{other}\", which this page does not run: it runs {SUPPORTED}"
            )))
        }
        None => {}
    }
    match architectures.first() {
        None | Some(&"GPT2LMHeadModel") => Ok(Family::Gpt2),
        Some(&"LlamaForCausalLM") => Ok(Family::Llama),
        Some(other) => Err(LoadError::Config(format!(
            "its architecture is {other}, which this page does not run: it runs {SUPPORTED}"
        ))),
    }
}

// A worker holds one session: the variants' sizes (the tokenizer's byte table) do not matter.
#[allow(clippy::large_enum_variant)]
pub enum ModelSession {
    Gpt2(Session),
    Llama(LlamaSession),
}

/// A generation in progress on either family.
pub enum Generation {
    Gpt2(Gpt2Generation),
    Llama(LlamaGeneration),
}

impl ModelSession {
    /// Loads a checkpoint of either family. A Llama-family model needs its `tokenizer.json`
    /// (`tokenizer`); GPT-2 reads GPT-2's BPE or its config's character vocabulary.
    pub fn new(config_json: &str, safetensors: &[u8], tokenizer: Option<&str>) -> Result<Self, LoadError> {
        match family(config_json)? {
            Family::Gpt2 => Ok(ModelSession::Gpt2(Session::new(config_json, safetensors)?)),
            Family::Llama => {
                let tok = tokenizer.ok_or_else(|| {
                    LoadError::Tokenizer(
                        "tokenizer.json is missing: a Llama-family model needs it beside config.json and \
                         model.safetensors"
                            .into(),
                    )
                })?;
                Ok(ModelSession::Llama(LlamaSession::new(config_json, safetensors, tok)?))
            }
        }
    }

    pub fn family(&self) -> Family {
        match self {
            ModelSession::Gpt2(_) => Family::Gpt2,
            ModelSession::Llama(_) => Family::Llama,
        }
    }

    pub fn loaded(&self, name: &str, source: Source) -> Reply {
        match self {
            ModelSession::Gpt2(s) => s.loaded(name, source),
            ModelSession::Llama(s) => s.loaded(name, source),
        }
    }

    pub async fn attach_gpu_with(&self, gpu: Rc<Gpu>, f16: bool) -> Result<(), GpuError> {
        match self {
            ModelSession::Gpt2(s) => s.attach_gpu_with(gpu, f16).await,
            ModelSession::Llama(s) => s.attach_gpu_with(gpu, f16).await,
        }
    }

    pub fn gpu_f16_change(&self) -> Option<f32> {
        match self {
            ModelSession::Gpt2(s) => s.gpu_f16_change(),
            ModelSession::Llama(s) => s.gpu_f16_change(),
        }
    }

    pub fn gpu_precision(&self) -> Option<Precision> {
        match self {
            ModelSession::Gpt2(s) => s.gpu_precision(),
            ModelSession::Llama(s) => s.gpu_precision(),
        }
    }

    pub fn detach_gpu(&self) {
        match self {
            ModelSession::Gpt2(s) => s.detach_gpu(),
            ModelSession::Llama(s) => s.detach_gpu(),
        }
    }

    pub fn inject_gpu_fault(&self) {
        match self {
            ModelSession::Gpt2(s) => s.inject_gpu_fault(),
            ModelSession::Llama(s) => s.inject_gpu_fault(),
        }
    }

    /// "cpu" or "webgpu": what runs the requests now.
    pub fn backend(&self) -> &'static str {
        match self {
            ModelSession::Gpt2(s) => s.engine().backend(),
            ModelSession::Llama(s) => s.engine().backend(),
        }
    }

    pub fn take_notice(&self) -> Option<String> {
        match self {
            ModelSession::Gpt2(s) => s.take_notice(),
            ModelSession::Llama(s) => s.take_notice(),
        }
    }

    /// The prompt's tokens cut to the window: (kept, dropped).
    pub fn tokens(&self, prompt: &str) -> Result<(Vec<u32>, usize), RunError> {
        match self {
            ModelSession::Gpt2(s) => s.tokens(prompt),
            ModelSession::Llama(s) => s.tokens(prompt),
        }
    }

    pub async fn analyze(&self, q: &Query) -> Result<(Analysis, Attention), RunError> {
        match self {
            ModelSession::Gpt2(s) => s.analyze(q).await,
            ModelSession::Llama(s) => s.analyze(q).await,
        }
    }

    pub fn head_qkv(&self, id: u64, prompt: &str, layer: usize, head: usize) -> Result<HeadQkv, RunError> {
        match self {
            ModelSession::Gpt2(s) => s.head_qkv(id, prompt, layer, head),
            ModelSession::Llama(s) => s.head_qkv(id, prompt, layer, head),
        }
    }

    pub async fn start_generation(&self, q: &Query) -> Result<Generation, RunError> {
        Ok(match self {
            ModelSession::Gpt2(s) => Generation::Gpt2(s.start_generation(q).await?),
            ModelSession::Llama(s) => Generation::Llama(s.start_generation(q).await?),
        })
    }

    pub async fn next_token(&self, g: &mut Generation) -> Result<(Token, String), RunError> {
        match (self, g) {
            (ModelSession::Gpt2(s), Generation::Gpt2(g)) => s.next_token(g).await,
            (ModelSession::Llama(s), Generation::Llama(g)) => s.next_token(g).await,
            _ => Err(RunError::Empty), // a generation of another model: never made by the worker
        }
    }

    /// Samples `steps` tokens after the prompt, calling `emit` with each token and the
    /// continuation so far as text: all `steps`, an end-of-text token included (the benchmarks time
    /// a fixed number; the worker's loop stops at the end of the text, [`until_end_of_text`]).
    pub async fn generate(&self, q: &Query, steps: usize, mut emit: impl FnMut(Token, String)) -> Result<(), RunError> {
        let mut g = self.start_generation(q).await?;
        for _ in 0..steps {
            let (token, text) = self.next_token(&mut g).await?;
            emit(token, text);
        }
        Ok(())
    }
}

/// The tokens that end a text in the families' vocabularies: GPT-2's, Llama 1 and 2's, Llama 3's
/// (base and chat) and the ChatML models' (SmolLM2).
pub const END_OF_TEXT: [&str; 5] = ["<|endoftext|>", "</s>", "<|end_of_text|>", "<|eot_id|>", "<|im_end|>"];

/// The continuation so far, `text`, after the newest `token`: as it is, or, when the token ends
/// the text, without the token's literal, and `true`: the generation stops there, and the
/// marker never reaches the page as if the model had written it.
pub fn until_end_of_text(token: &Token, text: String) -> (String, bool) {
    if !END_OF_TEXT.contains(&token.text.as_str()) {
        return (text, false);
    }
    let kept = text.strip_suffix(token.text.as_str()).map(str::to_string).unwrap_or(text);
    (kept, true)
}
