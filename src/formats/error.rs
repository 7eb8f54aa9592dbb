//! Why a checkpoint could not be loaded: every variant names the problem in words a reader can act on.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// The file is shorter than the 8-byte header length, or than the length it declares.
    Truncated { needed: u64, have: u64 },
    /// The JSON header is not valid (or not the expected shape).
    BadHeader(String),
    /// A tensor uses a dtype this engine does not read.
    UnknownDtype { tensor: String, dtype: String },
    /// A tensor's byte range is outside the file or does not match its shape.
    BadOffsets { tensor: String, reason: String },
    /// A tensor the model needs is not in the file.
    Missing(String),
    /// A tensor has the wrong shape for the config.
    Shape { tensor: String, expected: Vec<usize>, found: Vec<usize> },
    /// `config.json` is malformed or contradicts itself or the tensors.
    Config(String),
    /// The tensors contradict each other (e.g. an `lm_head` that is not tied to `wte`).
    Checkpoint(String),
    /// A tensor holds a NaN or an infinity (`what`), first at flat index `index`.
    NotFinite { tensor: String, index: usize, what: &'static str },
    /// The file or the model is past a limit, refused before it is allocated.
    TooLarge(String),
    /// `tokenizer.json` is missing, malformed, of a kind not supported, or not the model's.
    Tokenizer(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Truncated { needed, have } => {
                write!(f, "the file is truncated: it needs at least {needed} bytes but has {have}")
            }
            LoadError::BadHeader(why) => write!(f, "the safetensors header is malformed: {why}"),
            LoadError::UnknownDtype { tensor, dtype } => {
                write!(f, "tensor `{tensor}` has dtype {dtype}; only F32, F16 and BF16 are supported")
            }
            LoadError::BadOffsets { tensor, reason } => write!(f, "tensor `{tensor}`: {reason}"),
            LoadError::Missing(name) => write!(f, "the checkpoint has no tensor `{name}`"),
            LoadError::Shape { tensor, expected, found } => {
                write!(f, "tensor `{tensor}` has shape {found:?}, but the config needs {expected:?}")
            }
            LoadError::Config(why) => write!(f, "config.json: {why}"),
            LoadError::Checkpoint(why) => write!(f, "the checkpoint's tensors are inconsistent: {why}"),
            LoadError::NotFinite { tensor, index, what } => write!(
                f,
                "tensor `{tensor}` holds {what} (at value {index}): the checkpoint is damaged, and a model \
                 with such a weight computes nothing but NaN"
            ),
            LoadError::TooLarge(why) => write!(f, "the checkpoint is too large: {why}"),
            LoadError::Tokenizer(why) if why.starts_with("tokenizer.json") => write!(f, "{why}"),
            LoadError::Tokenizer(why) => write!(f, "tokenizer.json: {why}"),
        }
    }
}

impl std::error::Error for LoadError {}
