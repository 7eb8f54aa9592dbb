//! GPT-2 on a backend (`crate::model::engine`): `Gpt2` on the CPU, `GpuGpt2` on the GPU, behind
//! one async interface; the session answers a GPU failure by falling back to the CPU.

use std::rc::Rc;

use ndarray::{Array2, ArrayView2};

use super::gpu::GpuGpt2;
use super::{Config, ForwardOptions, ForwardOutput, Gpt2, KvCache, RunError};
use crate::gpu::{Gpu, GpuError, Precision};
use crate::model::engine::{CpuModel, GpuKvCache, GpuModel};
use crate::model::Shape;

pub use crate::model::engine::{Cache, EngineError};

pub type Engine = crate::model::engine::Engine<GpuGpt2>;

impl CpuModel for Gpt2 {
    type Config = Config;
    fn config(&self) -> &Config {
        &self.config
    }
    fn shape(&self) -> Shape {
        let c = &self.config;
        Shape {
            layers: c.n_layer,
            heads: c.n_head,
            kv_heads: c.n_head,
            head_dim: c.head_dim(),
            width: c.n_embd,
            window: c.n_positions,
            vocab: c.vocab_size,
            params: c.n_params(),
        }
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
    fn head_qkv(&self, tokens: &[u32], layer: usize, head: usize) -> Result<[Array2<f32>; 3], RunError> {
        Gpt2::head_qkv(self, tokens, layer, head)
    }
    fn read_out(&self, x: ArrayView2<f32>) -> Array2<f32> {
        Gpt2::read_out(self, x)
    }
}

impl GpuModel for GpuGpt2 {
    type Cpu = Gpt2;
    async fn upload(gpu: Rc<Gpu>, model: &Gpt2, precision: Precision) -> Result<Self, GpuError> {
        GpuGpt2::upload_with(gpu, model, precision).await
    }
    fn lossless_precision(gpu: &Gpu, model: &Gpt2) -> Precision {
        GpuGpt2::lossless_precision(gpu, model)
    }
    fn precision(&self) -> Precision {
        GpuGpt2::precision(self)
    }
    fn fail_next(&self) {
        GpuGpt2::fail_next(self)
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
