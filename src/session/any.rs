//! A loaded model of any family answering the page: the worker holds one `ModelSession`, a
//! `Session` of the family `config.json` names (`model_type`, or `architectures`). Every family
//! answers with the same replies, so the page's views draw any of them.

use std::rc::Rc;

use super::generation::Generation;
use super::protocol::{Analysis, Attention, Family, HeadQkv, Query, Reply, Source, Token};
use super::serve::Session;
use crate::formats::LoadError;
use crate::gpt2::Gpt2;
use crate::gpu::{Gpu, GpuError, Precision};
use crate::llama::Llama;
use crate::model::RunError;

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
    Gpt2(Session<Gpt2>),
    Llama(Session<Llama>),
}

/// `$body` on the session inside, whatever its family (`$s` names it).
macro_rules! each {
    ($self:expr, $s:ident => $body:expr) => {
        match $self {
            ModelSession::Gpt2($s) => $body,
            ModelSession::Llama($s) => $body,
        }
    };
}

impl ModelSession {
    /// Loads a checkpoint of any family. A Llama-family model needs its `tokenizer.json`
    /// (`tokenizer`); GPT-2 reads GPT-2's BPE or its config's character vocabulary.
    pub fn new(config_json: &str, safetensors: &[u8], tokenizer: Option<&str>) -> Result<Self, LoadError> {
        match family(config_json)? {
            Family::Gpt2 => Ok(ModelSession::Gpt2(Session::<Gpt2>::new(config_json, safetensors)?)),
            Family::Llama => {
                let tok = tokenizer.ok_or_else(|| {
                    LoadError::Tokenizer(
                        "tokenizer.json is missing: a Llama-family model needs it beside config.json and \
                         model.safetensors"
                            .into(),
                    )
                })?;
                Ok(ModelSession::Llama(Session::<Llama>::new(config_json, safetensors, tok)?))
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
        each!(self, s => s.loaded(name, source))
    }

    pub async fn attach_gpu_with(&self, gpu: Rc<Gpu>, f16: bool) -> Result<(), GpuError> {
        each!(self, s => s.attach_gpu_with(gpu, f16).await)
    }

    pub fn gpu_f16_change(&self) -> Option<f32> {
        each!(self, s => s.gpu_f16_change())
    }

    pub fn gpu_precision(&self) -> Option<Precision> {
        each!(self, s => s.gpu_precision())
    }

    pub fn detach_gpu(&self) {
        each!(self, s => s.detach_gpu())
    }

    pub fn inject_gpu_fault(&self) {
        each!(self, s => s.inject_gpu_fault())
    }

    /// "cpu" or "webgpu": what runs the requests now.
    pub fn backend(&self) -> &'static str {
        each!(self, s => s.engine().backend())
    }

    pub fn take_notice(&self) -> Option<String> {
        each!(self, s => s.take_notice())
    }

    /// The prompt's tokens cut to the window: (kept, dropped).
    pub fn tokens(&self, prompt: &str) -> Result<(Vec<u32>, usize), RunError> {
        each!(self, s => s.tokens(prompt))
    }

    pub async fn analyze(&self, q: &Query) -> Result<(Analysis, Attention), RunError> {
        each!(self, s => s.analyze(q).await)
    }

    pub fn head_qkv(&self, id: u64, prompt: &str, layer: usize, head: usize) -> Result<HeadQkv, RunError> {
        each!(self, s => s.head_qkv(id, prompt, layer, head))
    }

    /// Starts sampling after the prompt. The generation runs on this session's backend; a GPU
    /// failure moves it to the CPU with the session.
    pub async fn start_generation(&self, q: &Query) -> Result<Generation, RunError> {
        each!(self, s => s.start_generation(q).await)
    }

    pub async fn next_token(&self, g: &mut Generation) -> Result<(Token, String), RunError> {
        each!(self, s => s.next_token(g).await)
    }

    /// Samples `steps` tokens after the prompt, calling `emit` with each token and the
    /// continuation so far as text (see `Session::generate`).
    pub async fn generate(&self, q: &Query, steps: usize, emit: impl FnMut(Token, String)) -> Result<(), RunError> {
        each!(self, s => s.generate(q, steps, emit).await)
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
