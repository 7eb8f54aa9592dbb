//! A loaded model of any family answering the page: the worker holds one `ModelSession`, a
//! `Session` of the family `config.json` names (`model_type`, or `architectures`). Every family
//! answers with the same replies, so the page's views draw any of them.

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::family::ModelFamily;
use super::generation::Generation;
use super::inside::{HeadScores, HeadsQuery, Lens, LensQuery, PatchQuery, PatchSweep};
use super::protocol::{Analysis, Attention, HeadQkv, Query, Reply, Source, Token};
use super::serve::Session;
use crate::formats::LoadError;
use crate::gpt2::Gpt2;
use crate::gpu::{Gpu, GpuError, Precision};
use crate::llama::Llama;
use crate::model::stream::StreamLoader;
use crate::model::RunError;

/// The registry of families: one line each, the `ModelSession` variant and the engine's CPU model
/// (its `ModelFamily` says how `config.json` names it and how it loads). The first is what a
/// config that names no family is read as (the book's own checkpoints and older files say
/// nothing). `$d` is `$`, for the `each!` macro this writes.
macro_rules! families {
    ($d:tt $($variant:ident($model:ty)),+ $(,)?) => {
        /// A model's family: one variant per line of the registry (see `protocol::Family`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Family {
            $($variant),+
        }

        impl Family {
            /// How the page names it ("GPT-2", "Llama family").
            pub fn label(self) -> &'static str {
                match self {
                    $(Family::$variant => <$model as ModelFamily>::LABEL),+
                }
            }
        }

        /// Whether `token` ends a text in some family's vocabulary (`ModelFamily::END_OF_TEXT`).
        pub fn ends_text(token: &str) -> bool {
            [$(<$model as ModelFamily>::END_OF_TEXT),+].iter().any(|ends| ends.contains(&token))
        }

        // A worker holds one session: the variants' sizes (the tokenizer's byte table) do not matter.
        #[allow(clippy::large_enum_variant)]
        pub enum ModelSession {
            $($variant(Session<$model>)),+
        }

        /// `$body` on the session inside, whatever its family (`$s` names it).
        macro_rules! each {
            ($d this:expr, $d s:ident => $d body:expr) => {
                match $d this {
                    $(ModelSession::$variant($d s) => $d body),+
                }
            };
        }

        /// Each family: its name in the replies, its `model_type`, its architecture, how a
        /// message names it, and its tokenizer file.
        const FAMILIES: &[(Family, &str, &str, &str, Option<&str>)] = &[$((
            <$model as ModelFamily>::FAMILY,
            <$model as ModelFamily>::MODEL_TYPE,
            <$model as ModelFamily>::ARCHITECTURE,
            <$model as ModelFamily>::NAME,
            <$model as ModelFamily>::TOKENIZER_FILE,
        )),+];

        impl ModelSession {
            /// Loads a checkpoint of the family its `config.json` names, with the tokenizer file
            /// the family needs (`tokenizer.json` for the Llama family; GPT-2 reads its own BPE).
            pub fn new(config_json: &str, safetensors: &[u8], tokenizer: Option<&str>) -> Result<Self, LoadError> {
                let family = family(config_json)?;
                $(if family == <$model as ModelFamily>::FAMILY {
                    let session = <$model as ModelFamily>::load(config_json, safetensors, tokenizer)?;
                    return Ok(ModelSession::$variant(session));
                })+
                // `family` names only the registry's families.
                Err(LoadError::Config(format!("the page has no session for {}", family.label())))
            }

            pub fn family(&self) -> Family {
                match self {
                    $(ModelSession::$variant(_) => <$model as ModelFamily>::FAMILY),+
                }
            }
        }

        /// A checkpoint of any family being loaded while it downloads (`model::stream`).
        pub enum ModelLoader {
            $($variant(StreamLoader<$model>)),+
        }

        impl ModelLoader {
            /// A loader for the family its `config.json` names, for a file of `declared` bytes
            /// when that is known.
            pub fn new(config_json: &str, declared: Option<u64>) -> Result<Self, LoadError> {
                let family = family(config_json)?;
                $(if family == <$model as ModelFamily>::FAMILY {
                    return Ok(ModelLoader::$variant(StreamLoader::new(config_json, declared)?));
                })+
                Err(LoadError::Config(format!("the page has no session for {}", family.label())))
            }

            /// Takes the next bytes of the file; an error ends the load.
            pub fn feed(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
                match self {
                    $(ModelLoader::$variant(l) => l.feed(bytes)),+
                }
            }

            /// The session, once every byte has been fed, with the tokenizer file the family
            /// needs (`Family::tokenizer_file`).
            pub fn finish(self, tokenizer: Option<&str>) -> Result<ModelSession, LoadError> {
                match self {
                    $(ModelLoader::$variant(l) => {
                        Ok(ModelSession::$variant(<$model as ModelFamily>::with_model(l.finish()?, tokenizer)?))
                    }),+
                }
            }
        }
    };
}

families!($
    Gpt2(Gpt2),
    Llama(Llama),
);

/// What the page can load, for the refusal's message: "GPT-2 (model_type "gpt2",
/// GPT2LMHeadModel) and the Llama family (…)".
pub fn supported() -> String {
    let each: Vec<String> = FAMILIES
        .iter()
        .map(|(_, model_type, arch, name, _)| format!("{name} (model_type \"{model_type}\", {arch})"))
        .collect();
    match each.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => each.concat(),
    }
}

/// A config that names no family is read as the first of the registry's (GPT-2).
impl Default for Family {
    fn default() -> Self {
        FAMILIES[0].0
    }
}

impl Family {
    /// The tokenizer file the family reads beside `config.json` (`ModelFamily::TOKENIZER_FILE`).
    pub fn tokenizer_file(self) -> Option<&'static str> {
        FAMILIES.iter().find(|f| f.0 == self).and_then(|f| f.4)
    }
}

/// Which family `config.json` describes: its `model_type`, else its `architectures`; a config
/// that names neither is read as the first family of the registry (GPT-2).
pub fn family(config_json: &str) -> Result<Family, LoadError> {
    let json: serde_json::Value = serde_json::from_str(config_json)
        .map_err(|e| LoadError::Config(format!("config.json is not valid JSON ({e})")))?;
    let model_type = json.get("model_type").and_then(|v| v.as_str());
    let architectures: Vec<&str> =
        json.get("architectures").and_then(|v| v.as_array()).into_iter().flatten().filter_map(|v| v.as_str()).collect();
    if let Some(model_type) = model_type {
        return FAMILIES.iter().find(|f| f.1 == model_type).map(|f| f.0).ok_or_else(|| {
            LoadError::Config(format!(
                "its model_type is \"{model_type}\", which this page does not run: it runs {}",
                supported()
            ))
        });
    }
    match architectures.first() {
        None => Ok(FAMILIES[0].0),
        Some(arch) => FAMILIES.iter().find(|f| f.2 == *arch).map(|f| f.0).ok_or_else(|| {
            LoadError::Config(format!(
                "its architecture is {arch}, which this page does not run: it runs {}",
                supported()
            ))
        }),
    }
}

impl ModelSession {
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

    pub async fn lens(&self, q: &LensQuery) -> Result<Lens, RunError> {
        each!(self, s => s.lens(q).await)
    }

    pub async fn start_patching(&self, q: &PatchQuery) -> Result<PatchSweep, RunError> {
        each!(self, s => s.start_patching(q).await)
    }

    pub async fn patch_step(&self, sweep: &mut PatchSweep) -> Result<(), RunError> {
        each!(self, s => s.patch_step(sweep).await)
    }

    pub async fn head_detectors(&self, q: &HeadsQuery) -> Result<HeadScores, RunError> {
        each!(self, s => s.head_detectors(q).await)
    }
}
