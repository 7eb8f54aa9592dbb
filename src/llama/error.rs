//! Why a forward pass was refused: the caller's input, or weights whose numbers overflow (one
//! error for both families, `formats::RunError`, in the same words as GPT-2's).

pub use crate::formats::RunError;
