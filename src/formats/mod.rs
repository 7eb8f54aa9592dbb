//! File formats, below every model: the `.safetensors` container (a strict reader and writer,
//! F32, F16 and BF16) and the error every checkpoint loader reports.

pub mod error;
pub mod safetensors;

pub use error::LoadError;
