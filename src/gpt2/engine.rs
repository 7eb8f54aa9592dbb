//! A model on a backend: the same forward pass on the CPU (`Gpt2`) or on the GPU (`GpuGpt2`),
//! behind one async interface. The caller sees which one ran (`Engine::backend`) and a GPU
//! failure as a value (`EngineError::Gpu`), which `Session` answers by falling back to the CPU.

use std::rc::Rc;

use super::gpu::{GpuGpt2, GpuKvCache};
use super::{Config, ForwardOptions, ForwardOutput, Gpt2, KvCache, RunError};
use crate::gpu::GpuError;

#[derive(Clone)]
pub enum Engine {
    Cpu(Rc<Gpt2>),
    Gpu(Rc<GpuGpt2>),
}

pub enum Cache {
    Cpu(KvCache),
    Gpu(GpuKvCache),
}

impl Cache {
    pub fn len(&self) -> usize {
        match self {
            Cache::Cpu(c) => c.len(),
            Cache::Gpu(c) => c.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn clear(&mut self) {
        match self {
            Cache::Cpu(c) => c.clear(),
            Cache::Gpu(c) => c.clear(),
        }
    }
    /// The bytes the cached keys and values take: 2 · layers · positions · C · 4 on either
    /// backend (one key and one value per query head).
    pub fn bytes(&self) -> usize {
        match self {
            Cache::Cpu(c) => c.bytes(),
            Cache::Gpu(c) => c.bytes(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum EngineError {
    /// The input is wrong (on any backend).
    Run(RunError),
    /// The GPU failed; the CPU can run the same request.
    Gpu(GpuError),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Run(e) => e.fmt(f),
            EngineError::Gpu(e) => e.fmt(f),
        }
    }
}

impl From<RunError> for EngineError {
    fn from(e: RunError) -> Self {
        EngineError::Run(e)
    }
}

impl Engine {
    pub fn config(&self) -> &Config {
        match self {
            Engine::Cpu(m) => &m.config,
            Engine::Gpu(m) => &m.config,
        }
    }

    /// "cpu" or "webgpu" (the GPU backend, whatever API wgpu uses underneath).
    pub fn backend(&self) -> &'static str {
        match self {
            Engine::Cpu(_) => "cpu",
            Engine::Gpu(_) => "webgpu",
        }
    }

    /// A cache for up to `capacity` positions (the CPU's grows as needed).
    pub fn new_cache(&self, capacity: usize) -> Cache {
        match self {
            Engine::Cpu(m) => Cache::Cpu(m.new_cache()),
            Engine::Gpu(m) => Cache::Gpu(m.new_cache(capacity)),
        }
    }

    /// `Gpt2::forward` on this backend. `cpu` checks the input, so both backends refuse the same.
    pub async fn forward(
        &self,
        cpu: &Gpt2,
        tokens: &[u32],
        cache: &mut Cache,
        opts: &ForwardOptions,
    ) -> Result<ForwardOutput, EngineError> {
        cpu.check_input(tokens, cache.len())?;
        match (self, cache) {
            (Engine::Cpu(m), Cache::Cpu(c)) => Ok(m.forward(tokens, c, opts)?),
            (Engine::Gpu(m), Cache::Gpu(c)) => m.forward(tokens, c, opts).await.map_err(EngineError::Gpu),
            _ => Err(EngineError::Gpu(GpuError::Unsupported("a cache from the other backend".into()))),
        }
    }
}
