//! A Llama-family model on a backend, as GPT-2's `gpt2::engine`: the same forward pass on the
//! CPU (`Llama`) or on the GPU (`GpuLlama`), behind one async interface. The caller sees which
//! one ran (`Engine::backend`) and a GPU failure as a value (`EngineError::Gpu`), to answer by
//! falling back to the CPU.

use std::rc::Rc;

use super::gpu::{GpuKvCache, GpuLlama};
use super::{Config, ForwardOptions, ForwardOutput, KvCache, Llama, RunError};
use crate::gpu::GpuError;

#[derive(Clone)]
pub enum Engine {
    Cpu(Rc<Llama>),
    Gpu(Rc<GpuLlama>),
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
    /// The bytes the cached keys and values take: 2 · layers · positions · KV · D · 4 on either
    /// backend (per KV head, so H / KV times less than one per query head).
    pub fn bytes(&self) -> usize {
        match self {
            Cache::Cpu(c) => c.bytes(),
            Cache::Gpu(c) => c.bytes(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum EngineError {
    /// The input is wrong, or the weights overflow (on any backend).
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

    /// `Llama::forward` on this backend. `cpu` checks the input, so both backends refuse the
    /// same, and logits that overflowed are refused on both (`RunError::NotFinite`).
    pub async fn forward(
        &self,
        cpu: &Llama,
        tokens: &[u32],
        cache: &mut Cache,
        opts: &ForwardOptions,
    ) -> Result<ForwardOutput, EngineError> {
        cpu.check_input(tokens, cache.len())?;
        match (self, cache) {
            (Engine::Cpu(m), Cache::Cpu(c)) => Ok(m.forward(tokens, c, opts)?),
            (Engine::Gpu(m), Cache::Gpu(c)) => {
                let out = m.forward(tokens, c, opts).await.map_err(EngineError::Gpu)?;
                if out.logits.iter().any(|v| !v.is_finite()) {
                    return Err(RunError::NotFinite.into());
                }
                Ok(out)
            }
            _ => Err(EngineError::Gpu(GpuError::Unsupported("a cache from the other backend".into()))),
        }
    }
}
