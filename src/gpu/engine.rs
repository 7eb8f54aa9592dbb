//! A model on a backend, for either family: the same forward pass on the CPU or on the GPU,
//! behind one async interface (`gpt2::engine` and `llama::engine` name theirs). The caller sees
//! which one ran (`Engine::backend`) and a GPU failure as a value (`EngineError::Gpu`), which the
//! sessions answer by falling back to the CPU.

use std::future::Future;
use std::rc::Rc;

use ndarray::Array2;

use super::GpuError;
use crate::formats::RunError;
use crate::numerics::kv_cache::KvCache;

/// A model's CPU forward pass, as the engine calls it.
pub trait CpuModel {
    type Config;
    type Options;
    type Output: Logits;
    fn config(&self) -> &Self::Config;
    fn new_cache(&self) -> KvCache;
    /// The input errors of a forward pass on any backend (no tokens, an id outside the
    /// vocabulary, more positions than the window).
    fn check_input(&self, tokens: &[u32], past: usize) -> Result<(), RunError>;
    fn forward(&self, tokens: &[u32], cache: &mut KvCache, opts: &Self::Options) -> Result<Self::Output, RunError>;
}

/// The same model on the GPU: its forward pass awaits the device.
pub trait GpuModel {
    type Cpu: CpuModel;
    fn config(&self) -> &<Self::Cpu as CpuModel>::Config;
    /// A KV cache for `capacity` positions (at most the model's window).
    fn new_cache(&self, capacity: usize) -> GpuKvCache;
    fn forward(
        &self,
        tokens: &[u32],
        cache: &mut GpuKvCache,
        opts: &<Self::Cpu as CpuModel>::Options,
    ) -> impl Future<Output = Result<<Self::Cpu as CpuModel>::Output, GpuError>>;
}

/// Implements [`CpuModel`] for `$cpu` and [`GpuModel`] for `$gpu` by their inherent methods of
/// the same names (`config` is their `config` field), and [`Logits`] for `$out`: a family's
/// engine is then `Engine<$gpu>`.
#[macro_export]
macro_rules! engine_models {
    ($cpu:ty, $gpu:ty, $config:ty, $opts:ty, $out:ty) => {
        impl $crate::gpu::engine::CpuModel for $cpu {
            type Config = $config;
            type Options = $opts;
            type Output = $out;
            fn config(&self) -> &$config {
                &self.config
            }
            fn new_cache(&self) -> $crate::numerics::kv_cache::KvCache {
                <$cpu>::new_cache(self)
            }
            fn check_input(&self, tokens: &[u32], past: usize) -> Result<(), $crate::formats::RunError> {
                <$cpu>::check_input(self, tokens, past)
            }
            fn forward(
                &self,
                tokens: &[u32],
                cache: &mut $crate::numerics::kv_cache::KvCache,
                opts: &$opts,
            ) -> Result<$out, $crate::formats::RunError> {
                <$cpu>::forward(self, tokens, cache, opts)
            }
        }

        impl $crate::gpu::engine::GpuModel for $gpu {
            type Cpu = $cpu;
            fn config(&self) -> &$config {
                &self.config
            }
            fn new_cache(&self, capacity: usize) -> $crate::gpu::engine::GpuKvCache {
                <$gpu>::new_cache(self, capacity)
            }
            async fn forward(
                &self,
                tokens: &[u32],
                cache: &mut $crate::gpu::engine::GpuKvCache,
                opts: &$opts,
            ) -> Result<$out, $crate::gpu::GpuError> {
                <$gpu>::forward(self, tokens, cache, opts).await
            }
        }

        impl $crate::gpu::engine::Logits for $out {
            fn logits(&self) -> &ndarray::Array2<f32> {
                &self.logits
            }
        }
    };
}

/// A forward pass's output, for the check both backends make: logits that overflowed are refused.
pub trait Logits {
    /// (T, vocab), or (1, vocab) for the last token only.
    fn logits(&self) -> &Array2<f32>;
}

/// Keys and values on the GPU: per layer, (capacity, width) each, width the KV heads' keys side
/// by side (GPT-2: the model's width), as the CPU's `KvCache`. The models' GPU code writes the
/// buffers and moves `len`.
pub struct GpuKvCache {
    pub k: Vec<wgpu::Buffer>,
    pub v: Vec<wgpu::Buffer>,
    pub capacity: usize,
    pub len: usize,
}

impl GpuKvCache {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    /// The bytes the cached positions take (as `KvCache::bytes`; the buffers hold `capacity`).
    pub fn bytes(&self) -> usize {
        let per_position = |b: &wgpu::Buffer| b.size() as usize / self.capacity.max(1);
        self.k.iter().chain(&self.v).map(|b| per_position(b) * self.len).sum()
    }
    /// Forgets every position (the buffers are kept and overwritten).
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

pub enum Engine<G: GpuModel> {
    Cpu(Rc<G::Cpu>),
    Gpu(Rc<G>),
}

impl<G: GpuModel> Clone for Engine<G> {
    fn clone(&self) -> Self {
        match self {
            Engine::Cpu(m) => Engine::Cpu(m.clone()),
            Engine::Gpu(m) => Engine::Gpu(m.clone()),
        }
    }
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
    /// The bytes the cached keys and values take: 2 · layers · positions · width · 4 on either
    /// backend (width: one key per KV head, so H / KV times less than one per query head).
    pub fn bytes(&self) -> usize {
        match self {
            Cache::Cpu(c) => c.bytes(),
            Cache::Gpu(c) => c.bytes(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum EngineError {
    /// The input is wrong, or the logits overflowed (on any backend).
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

impl<G: GpuModel> Engine<G> {
    pub fn config(&self) -> &<G::Cpu as CpuModel>::Config {
        match self {
            Engine::Cpu(m) => m.config(),
            Engine::Gpu(m) => m.config(),
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

    /// The model's forward pass on this backend. `cpu` checks the input, so both backends refuse
    /// the same, and logits that overflowed are refused on both (`RunError::NotFinite`).
    pub async fn forward(
        &self,
        cpu: &G::Cpu,
        tokens: &[u32],
        cache: &mut Cache,
        opts: &<G::Cpu as CpuModel>::Options,
    ) -> Result<<G::Cpu as CpuModel>::Output, EngineError> {
        cpu.check_input(tokens, cache.len())?;
        match (self, cache) {
            (Engine::Cpu(m), Cache::Cpu(c)) => Ok(m.forward(tokens, c, opts)?),
            (Engine::Gpu(m), Cache::Gpu(c)) => {
                let out = m.forward(tokens, c, opts).await.map_err(EngineError::Gpu)?;
                if out.logits().iter().any(|v| !v.is_finite()) {
                    return Err(RunError::NotFinite.into());
                }
                Ok(out)
            }
            _ => Err(EngineError::Gpu(GpuError::Unsupported("a cache from the other backend".into()))),
        }
    }
}
