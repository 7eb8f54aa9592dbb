//! A Llama-family model on a backend (`crate::gpu::engine`): `Llama` on the CPU, `GpuLlama` on the GPU, behind one
//! async interface, which `LlamaSession` answers a GPU failure with by falling back to the CPU.

use super::gpu::GpuLlama;
use super::{Config, ForwardOptions, ForwardOutput, KvCache, Llama, RunError};
use crate::gpu::engine::{CpuModel, GpuKvCache, GpuModel, Logits};
use crate::gpu::GpuError;

pub use crate::gpu::engine::{Cache, EngineError};

pub type Engine = crate::gpu::engine::Engine<GpuLlama>;

impl CpuModel for Llama {
    type Config = Config;
    type Options = ForwardOptions;
    type Output = ForwardOutput;
    fn config(&self) -> &Config {
        &self.config
    }
    fn new_cache(&self) -> KvCache {
        Llama::new_cache(self)
    }
    fn check_input(&self, tokens: &[u32], past: usize) -> Result<(), RunError> {
        Llama::check_input(self, tokens, past)
    }
    fn forward(&self, tokens: &[u32], cache: &mut KvCache, opts: &ForwardOptions) -> Result<ForwardOutput, RunError> {
        Llama::forward(self, tokens, cache, opts)
    }
}

impl GpuModel for GpuLlama {
    type Cpu = Llama;
    fn config(&self) -> &Config {
        &self.config
    }
    fn new_cache(&self, capacity: usize) -> GpuKvCache {
        GpuLlama::new_cache(self, capacity)
    }
    async fn forward(
        &self,
        tokens: &[u32],
        cache: &mut GpuKvCache,
        opts: &ForwardOptions,
    ) -> Result<ForwardOutput, GpuError> {
        GpuLlama::forward(self, tokens, cache, opts).await
    }
}

impl Logits for ForwardOutput {
    fn logits(&self) -> &ndarray::Array2<f32> {
        &self.logits
    }
}
