//! A model on a backend, for every family: the same forward pass on the CPU or on the GPU,
//! behind one async interface (`gpt2::engine` and `llama::engine` name theirs). The caller sees
//! which one ran (`Engine::backend`) and a GPU failure as a value (`EngineError::Gpu`), which the
//! session answers by falling back to the CPU.

use std::future::Future;
use std::rc::Rc;

use ndarray::{Array2, ArrayView2};

use super::{ForwardOptions, ForwardOutput, KvCache, RunError, Shape};
use crate::gpu::{Gpu, GpuError, Precision};

/// A model's CPU forward pass, as the engine and the session call it: each family's engine
/// implements it on its CPU model (`gpt2::engine`, `llama::engine`).
pub trait CpuModel {
    type Config;
    fn config(&self) -> &Self::Config;
    /// The sizes the session and the page see.
    fn shape(&self) -> Shape;
    fn new_cache(&self) -> KvCache;
    /// The input errors of a forward pass on any backend (no tokens, an id outside the
    /// vocabulary, more positions than the window).
    fn check_input(&self, tokens: &[u32], past: usize) -> Result<(), RunError>;
    fn forward(&self, tokens: &[u32], cache: &mut KvCache, opts: &ForwardOptions) -> Result<ForwardOutput, RunError>;
    /// One query head's queries and its key and value head's keys and values for `tokens`, (T, D)
    /// each, as the head attends with them (a Llama-family model's queries and keys rotated).
    fn head_qkv(&self, tokens: &[u32], layer: usize, head: usize) -> Result<[Array2<f32>; 3], RunError>;
    /// The residual stream x (T, C) read out as the last block's output is: the final norm and
    /// the LM head, (T, vocab) logits (the logit lens).
    fn read_out(&self, x: ArrayView2<f32>) -> Array2<f32>;
}

/// The same model on the GPU: uploaded from the CPU model, its forward pass awaits the device.
pub trait GpuModel: Sized {
    type Cpu: CpuModel;
    /// Uploads `model`'s weights to `gpu`, the matrix products' weights in `precision`.
    fn upload(gpu: Rc<Gpu>, model: &Self::Cpu, precision: Precision) -> impl Future<Output = Result<Self, GpuError>>;
    /// F16 where the device has `shader-f16` and every weight of the products is exactly an f16
    /// (an F16 checkpoint), else F32: the precision that changes nothing.
    fn lossless_precision(gpu: &Gpu, model: &Self::Cpu) -> Precision;
    /// The precision the weights of the matrix products ended up in.
    fn precision(&self) -> Precision;
    /// Makes the next forward pass fail with a real device error, to show the fallback.
    fn fail_next(&self);
    /// A KV cache for `capacity` positions (at most the model's window).
    fn new_cache(&self, capacity: usize) -> GpuKvCache;
    fn forward(
        &self,
        tokens: &[u32],
        cache: &mut GpuKvCache,
        opts: &ForwardOptions,
    ) -> impl Future<Output = Result<ForwardOutput, GpuError>>;
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
    /// Forgets every position from `len` on (the next pass writes there).
    pub fn truncate(&mut self, len: usize) {
        match self {
            Cache::Cpu(c) => c.truncate(len),
            Cache::Gpu(c) => c.len = c.len.min(len),
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
        opts: &ForwardOptions,
    ) -> Result<ForwardOutput, EngineError> {
        cpu.check_input(tokens, cache.len())?;
        opts.patches.check(&cpu.shape(), tokens.len())?;
        let out = match (self, cache) {
            (Engine::Cpu(m), Cache::Cpu(c)) => m.forward(tokens, c, opts)?,
            (Engine::Gpu(m), Cache::Gpu(c)) => m.forward(tokens, c, opts).await.map_err(EngineError::Gpu)?,
            _ => return Err(EngineError::Gpu(GpuError::Unsupported("a cache from the other backend".into()))),
        };
        Ok(out.finite()?)
    }
}
