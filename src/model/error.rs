//! Why a forward pass was refused: the caller's input, or weights whose numbers overflow. One
//! error for every model family (GPT-2 and Llama), so the page says the same in the same words.

use std::fmt;

/// Why a forward pass was refused: the caller's input, or (`NotFinite`) finite weights whose
/// products overflow f32 (NaN and infinite weights are refused when the checkpoint loads).
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    Empty,
    /// A token id outside the vocabulary.
    TokenOutOfRange {
        id: u32,
        vocab: usize,
    },
    /// The cache plus the new tokens would pass the context window.
    TooLong {
        len: usize,
        window: usize,
    },
    /// Characters a character-vocabulary model has no token for (`found`, each once, in the
    /// order they first appear), and the characters it reads (`allowed`, in id order).
    NotInVocabulary {
        found: String,
        allowed: String,
    },
    /// The scores came out NaN or infinite.
    NotFinite,
    /// An image tensor of another shape than the model takes: (channels, height, width).
    ImageShape {
        got: (usize, usize, usize),
        want: (usize, usize, usize),
    },
    /// A picture that cannot be read or prepared, and why.
    Picture(String),
    /// A look-inside request that does not fit (patches, the lens's or a sweep's length), and why.
    Inside(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Empty => write!(f, "there are no tokens to run"),
            RunError::TokenOutOfRange { id, vocab } => {
                write!(f, "token id {id} is outside the model's vocabulary of {vocab}")
            }
            RunError::TooLong { len, window } => write!(f, "{len} tokens do not fit the model's window of {window}"),
            RunError::NotFinite => write!(
                f,
                "the model computed NaN or infinite scores: its weights are finite but so large that \
                 their products overflow 32-bit floats (the checkpoint is broken)"
            ),
            RunError::Picture(why) | RunError::Inside(why) => write!(f, "{why}"),
            RunError::ImageShape { got, want } => write!(
                f,
                "the image is {} × {} pixels with {} channels, but the model takes {} × {} with {}",
                got.2, got.1, got.0, want.2, want.1, want.0
            ),
            RunError::NotInVocabulary { found, allowed } => {
                use crate::formats::echo::{echo, echo_char};
                let listed: Vec<String> = found.chars().map(echo_char).collect();
                let which = if listed.len() == 1 { "a character" } else { "characters" };
                write!(
                    f,
                    "the prompt has {which} this model has no token for ({}): it reads only the characters {}, \
                     one token each",
                    listed.join(", "),
                    echo(allowed)
                )
            }
        }
    }
}

impl std::error::Error for RunError {}

impl RunError {
    /// The input errors of a forward pass, the same for every model: no tokens, an id outside
    /// the `vocab`, or more positions (`past` cached plus the new tokens) than the `window`.
    pub fn check_input(tokens: &[u32], past: usize, vocab: usize, window: usize) -> Result<(), RunError> {
        if tokens.is_empty() {
            return Err(RunError::Empty);
        }
        if let Some(&id) = tokens.iter().find(|&&id| id as usize >= vocab) {
            return Err(RunError::TokenOutOfRange { id, vocab });
        }
        if past + tokens.len() > window {
            return Err(RunError::TooLong { len: past + tokens.len(), window });
        }
        Ok(())
    }
}
