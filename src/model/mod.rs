//! What every model family shares, below the engines (`gpt2`, `llama`) and above the backend
//! (`gpu`):
//!
//! - `forward`: what a forward pass is asked for (`ForwardOptions`: capture, knock-outs, hidden
//!   states, thumbnails) and what it returns (`ForwardOutput`);
//! - `cache`: the CPU's KV cache (`KvCache`) and which layers' weights are kept (`Capture`);
//! - `error`: why a forward pass was refused (`RunError`), in the same words for every family;
//! - `limits`: the largest sizes a checkpoint's config may give, checked before anything is
//!   allocated; `fields`: typed reads of `config.json`, each refusal naming the field;
//! - `linear`: a projection stored (out, in) as nn.Linear does, packed for the browser's kernel;
//!   `dense`: such a projection with its bias, a layer norm and an MLP's activation (the
//!   encoder-style engines'), and `gpu_dense` the same on the GPU;
//! - `patch`: values written into a pass in place of what it computed (activation patching),
//!   on the CPU and as copies on the GPU;
//! - `sample`: from logits to the next token (temperature, top-k, top-p, greedy);
//! - `shape`: a loaded model's sizes (`Shape`), whatever its config calls them;
//! - `stream`: a checkpoint loaded while it downloads, for every family (`Streamed`: each
//!   engine's plan of where its tensors go), the file never held whole;
//! - `engine`: a model on the CPU or the GPU behind one async interface (`Engine`), a GPU failure
//!   a value the session answers by falling back to the CPU; `readout`: a GPU pass's readback cut
//!   into its output.

pub mod cache;
pub mod dense;
pub mod engine;
pub mod error;
pub mod fields;
pub mod forward;
pub mod gpu_dense;
pub mod limits;
pub mod linear;
pub mod patch;
pub mod readout;
pub mod sample;
pub mod shape;
pub mod stream;

pub use cache::{Capture, KvCache};
pub use error::RunError;
pub use forward::{ForwardOptions, ForwardOutput};
pub use patch::Patches;
pub use shape::Shape;
