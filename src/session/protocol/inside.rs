//! The messages about looking inside a model: the logit lens (`LensQuery`, `Lens`), a patching
//! sweep (`PatchQuery`, its progress, `Patching`) and the head detectors (`HeadsQuery`,
//! `HeadScores`). They are the look-inside session's own types.

pub use crate::session::inside::{HeadScores, HeadsQuery, Lens, LensQuery, PatchQuery, Patching, Run, Sweep};
