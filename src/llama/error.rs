//! Why a forward pass was refused: the caller's input, or weights whose numbers overflow.

use std::fmt;

/// Why a forward pass was refused (the same cases, in the same words, as GPT-2's `RunError`).
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
    /// The scores came out NaN or infinite (NaN and infinite weights are refused at load time).
    NotFinite,
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
        }
    }
}

impl std::error::Error for RunError {}
