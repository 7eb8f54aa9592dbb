//! The messages about translation: a text to translate (`TranslateQuery`), the translation with
//! its three attentions (`TranslationMessage`, the weights beside it in one buffer, read back
//! into a `Translation`), and what a loaded translation model is (`TranslatorInfo`). They are the
//! translation session's own types.

pub use crate::session::translate::{
    AttentionKind, BeamStep, Hypothesis, TranslateQuery, Translation, TranslationMessage, TranslatorInfo, MAX_BEAMS,
};
