//! GPT-2 on a backend (`crate::gpu::engine`): `Gpt2` on the CPU, `GpuGpt2` on the GPU, behind one
//! async interface, which `Session` answers a GPU failure with by falling back to the CPU.

use super::gpu::GpuGpt2;
use super::{Config, ForwardOptions, ForwardOutput, Gpt2, KvCache, RunError};
use crate::gpu::engine::{CpuModel, GpuKvCache, GpuModel, Logits};
use crate::gpu::GpuError;

pub use crate::gpu::engine::{Cache, EngineError};

pub type Engine = crate::gpu::engine::Engine<GpuGpt2>;

impl CpuModel for Gpt2 {
    type Config = Config;
    type Options = ForwardOptions;
    type Output = ForwardOutput;
    fn config(&self) -> &Config {
        &self.config
    }
    fn new_cache(&self) -> KvCache {
        Gpt2::new_cache(self)
    }
    fn check_input(&self, tokens: &[u32], past: usize) -> Result<(), RunError> {
        Gpt2::check_input(self, tokens, past)
    }
    fn forward(&self, tokens: &[u32], cache: &mut KvCache, opts: &ForwardOptions) -> Result<ForwardOutput, RunError> {
        Gpt2::forward(self, tokens, cache, opts)
    }
}

impl GpuModel for GpuGpt2 {
    type Cpu = Gpt2;
    fn config(&self) -> &Config {
        &self.config
    }
    fn new_cache(&self, capacity: usize) -> GpuKvCache {
        GpuGpt2::new_cache(self, capacity)
    }
    async fn forward(
        &self,
        tokens: &[u32],
        cache: &mut GpuKvCache,
        opts: &ForwardOptions,
    ) -> Result<ForwardOutput, GpuError> {
        GpuGpt2::forward(self, tokens, cache, opts).await
    }
}

impl Logits for ForwardOutput {
    fn logits(&self) -> &ndarray::Array2<f32> {
        &self.logits
    }
}
