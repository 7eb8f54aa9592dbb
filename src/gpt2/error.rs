//! Why a forward pass was refused: the caller's input, never the weights.

use std::fmt;

/// Why a forward pass was refused (the caller's input, never the weights).
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
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Empty => write!(f, "there are no tokens to run"),
            RunError::TokenOutOfRange { id, vocab } => {
                write!(f, "token id {id} is outside the model's vocabulary of {vocab}")
            }
            RunError::TooLong { len, window } => write!(f, "{len} tokens do not fit the model's window of {window}"),
        }
    }
}

impl std::error::Error for RunError {}
