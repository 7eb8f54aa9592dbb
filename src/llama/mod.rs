//! Llama-family models, DOM-free: load a Hugging Face `LlamaForCausalLM` checkpoint and run it.
//! The architecture of most open models since 2023 (Llama 2 and 3, SmolLM2, TinyLlama, …),
//! which differs from GPT-2 where the book's chapters on positions and efficiency look:
//!
//! - positions by rotation (RoPE) of queries and keys, no table of learned positions;
//! - grouped-query attention: H query heads share KV key and value heads, H / KV to a group
//!   (multi-query attention when KV = 1), so the KV cache is H / KV times smaller;
//! - RMSNorm (no centring, no bias) before each sub-layer, and a SwiGLU MLP;
//! - no biases anywhere, and an output layer of its own or tied to the embeddings.
//!
//! Modules:
//! - `config`: the hyper-parameters (`Config`), read from `config.json` (older and newer
//!   `transformers` layouts), refusing what the engine does not run with a message naming it;
//! - `weights`: the checkpoint's tensors under their checkpoint names (`model.layers.N.…`),
//!   from F32, F16 or BF16 safetensors;
//! - `stream`: a checkpoint loaded while it downloads, each tensor written straight into its final
//!   buffer (the file is never held whole; `model::stream` reads the bytes);
//! - `ops`: the CPU kernels (RMSNorm, RoPE in Hugging Face's `rotate_half` convention, SiLU,
//!   the output layer);
//! - `model`: the forward pass with a KV cache per KV head, attention capture per query head,
//!   head knock-outs, greedy decoding, and one head's rotated queries and keys (`head_qkv`);
//! - `gpu`: the same forward pass on the GPU backend (`crate::gpu`'s kernels), the weights and the
//!   KV cache on the device; `engine`: either backend behind one interface, a GPU failure a value;
//! - `tokenizer`: the checkpoint's `tokenizer.json` (byte-level BPE, SmolLM2's kind), with Hugging
//!   Face's ids, refusing other kinds and a vocabulary that does not fit the model's.
//!
//! `weights::Weights::random` makes a model of any shape (SmolLM2-135M's: `Config::smollm2_135m`)
//! without a download, for benchmarks (`examples/llama_bench.rs`).
//!
//! Everything here builds and is tested natively (`tests/engines/llama.rs` and, on the GPU,
//! `tests/gpu/llama_gpu.rs`, against fixtures written by
//! `scripts/llama/make_fixtures.py` with `transformers`; `tests/engines/llama_tokenizer.rs`, against
//! `scripts/llama/make_tokenizer_fixture.py`'s).

pub mod config;
pub mod engine;
pub mod gpu;
pub mod model;
pub mod ops;
pub mod stream;
pub mod tokenizer;
pub mod weights;

// The types every family shares (`crate::model`), under this engine's name too.
pub use crate::model::{Capture, ForwardOptions, ForwardOutput, KvCache, RunError};
pub use config::Config;
pub use model::Llama;
pub use tokenizer::{Tokenizer, TokenizerError};
