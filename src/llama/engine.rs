//! A Llama-family model on a backend (`crate::gpu::engine`): `Llama` on the CPU, `GpuLlama` on the GPU,
//! behind one async interface; `LlamaSession` answers a GPU failure by falling back to the CPU.

use super::gpu::GpuLlama;
use super::{Config, ForwardOptions, ForwardOutput, Llama};

pub use crate::gpu::engine::{Cache, EngineError};

pub type Engine = crate::gpu::engine::Engine<GpuLlama>;

crate::engine_models!(Llama, GpuLlama, Config, ForwardOptions, ForwardOutput);
