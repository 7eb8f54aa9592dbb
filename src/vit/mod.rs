//! Vision Transformers, DOM-free: load a Hugging Face `ViTForImageClassification` checkpoint (or
//! DeiT's, with its distillation token) and run it on an image. The image is cut into a grid of
//! square patches; each patch becomes a token (its pixels through one product, the patch
//! embedding), a class token (and DeiT's distillation token) goes in front, learned position
//! embeddings are added, and pre-norm encoder blocks with bidirectional self-attention follow; the
//! classifier reads the class token (DeiT with its teacher: the mean of the class token's head and
//! the distillation token's).
//!
//! Modules:
//! - `config`: the hyper-parameters (`Config`), read from `config.json`, refusing what the engine
//!   does not run with a message naming the field;
//! - `weights`: the checkpoint's tensors under their checkpoint names, from F32, F16 or BF16
//!   safetensors;
//! - `model`: the forward pass, every attention captured, knock-outs per head;
//! - `gpu`: the same forward pass on the GPU backend;
//! - `stream`: the checkpoint loaded while it downloads (`model::stream`);
//! - `preprocess`: a picture to its pixels, as the checkpoint's image processor does it;
//! - `maps`: what the page draws over the image: where a token looks, and attention rollout.
//!
//! Everything here builds and is tested natively (`tests/engines/vit.rs`, against fixtures
//! written by `scripts/vit/make_fixtures.py` with `transformers`).

pub mod config;
pub mod gpu;
pub mod maps;
pub mod model;
pub mod preprocess;
pub mod stream;
pub mod weights;

pub use config::Config;
pub use model::{Options, Output, Vit};
