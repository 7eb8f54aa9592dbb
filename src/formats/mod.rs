//! File formats, below every model: the `.safetensors` container (a strict reader and writer,
//! F32, F16 and BF16), JSON read strictly (no duplicate keys), the error every checkpoint
//! loader reports, the record of the bundled files' hashes, and outside text quoted in the
//! book's messages.

pub mod bundled;
pub mod echo;
pub mod error;
pub mod json;
pub mod safetensors;

pub use error::LoadError;
