//! GPT-2 on a backend (`crate::gpu::engine`): `Gpt2` on the CPU, `GpuGpt2` on the GPU,
//! behind one async interface; `Session` answers a GPU failure by falling back to the CPU.

use super::gpu::GpuGpt2;
use super::{Config, ForwardOptions, ForwardOutput, Gpt2};

pub use crate::gpu::engine::{Cache, EngineError};

pub type Engine = crate::gpu::engine::Engine<GpuGpt2>;

crate::engine_models!(Gpt2, GpuGpt2, Config, ForwardOptions, ForwardOutput);
