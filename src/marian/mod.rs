//! Marian translation models, DOM-free: load a Hugging Face `MarianMTModel` checkpoint (the
//! OPUS-MT models) and run it. The original Transformer's shape, an encoder and a decoder, so all
//! three of its attentions are here on a real model:
//!
//! - the encoder's self-attention, without a mask: every source token sees the whole sentence;
//! - the decoder's masked self-attention over the target written so far (with a KV cache);
//! - the decoder's cross-attention: each target token's query over the source's keys, the
//!   alignment between the two sentences.
//!
//! Post-norm blocks, sinusoidal positions (sines then cosines), biases everywhere, one vocabulary
//! shared by source and target, an output layer tied to it or not, and a bias on the final logits.
//!
//! Modules:
//! - `config`: the hyper-parameters (`Config`), read from `config.json`, refusing what the engine
//!   does not run with a message naming the field;
//! - `weights`: the checkpoint's tensors under their checkpoint names, from F32, F16 or BF16
//!   safetensors;
//! - `stream`: a checkpoint loaded while it downloads (`model::stream` reads the bytes);
//! - `model`: the encoder, the decoder with its cache, every attention captured, knock-outs per
//!   head and kind, greedy decoding and beam search (`beam`), as `transformers`' `generate` does
//!   them;
//! - `gpu`: the same forward passes, greedy decoding and beam search on the GPU backend;
//! - `tokenizer`: the checkpoint's `source.spm`, `target.spm` and `vocab.json`, with
//!   `MarianTokenizer`'s ids.
//!
//! Everything here builds and is tested natively (`tests/engines/marian.rs`, against fixtures
//! written by `scripts/marian/make_fixtures.py` and `make_tokenizer_fixture.py` with
//! `transformers`).

pub mod beam;
pub mod config;
pub mod gpu;
pub mod model;
pub mod stream;
pub mod tokenizer;
pub mod weights;

pub use crate::model::RunError;
pub use beam::{BeamSettings, Step};
pub use config::Config;
pub use model::{Decoded, DecoderCache, Encoded, Hypothesis, Kind, Marian, Options};
pub use tokenizer::{Tokenizer, TokenizerError};
