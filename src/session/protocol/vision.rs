//! The messages about pictures: a picture to classify (`ClassifyQuery`, its RGBA bytes beside
//! it), the answer (`VisionMessage`, the picture seen and the attentions beside it in one buffer,
//! read back into a `Vision`), and what a loaded vision model is (`VisionInfo`). They are the
//! vision session's own types.

pub use crate::session::vision::{ClassifyQuery, Prediction, Vision, VisionInfo, VisionMessage, TOP};
