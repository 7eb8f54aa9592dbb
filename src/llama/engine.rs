//! A Llama-family model on a backend (`crate::model::engine`): `Llama` on the CPU, `GpuLlama` on
//! the GPU, behind one async interface; the session answers a GPU failure by falling back to the CPU.

use std::rc::Rc;

use ndarray::{Array2, ArrayView2};

use super::gpu::GpuLlama;
use super::{Config, ForwardOptions, ForwardOutput, KvCache, Llama, RunError};
use crate::gpu::{Gpu, GpuError, Precision};
use crate::model::engine::{CpuModel, GpuKvCache, GpuModel};
use crate::model::Shape;

pub use crate::model::engine::{Cache, EngineError};

pub type Engine = crate::model::engine::Engine<GpuLlama>;

impl CpuModel for Llama {
    type Config = Config;
    fn config(&self) -> &Config {
        &self.config
    }
    fn shape(&self) -> Shape {
        let c = &self.config;
        Shape {
            layers: c.num_hidden_layers,
            heads: c.num_attention_heads,
            kv_heads: c.num_key_value_heads,
            head_dim: c.head_dim,
            width: c.hidden_size,
            window: c.max_position_embeddings,
            vocab: c.vocab_size,
            params: c.n_params(),
        }
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
    fn head_qkv(&self, tokens: &[u32], layer: usize, head: usize) -> Result<[Array2<f32>; 3], RunError> {
        Llama::head_qkv(self, tokens, layer, head)
    }
    fn read_out(&self, x: ArrayView2<f32>) -> Array2<f32> {
        Llama::read_out(self, x)
    }
}

impl GpuModel for GpuLlama {
    type Cpu = Llama;
    async fn upload(gpu: Rc<Gpu>, model: &Llama, precision: Precision) -> Result<Self, GpuError> {
        GpuLlama::upload_with(gpu, model, precision).await
    }
    fn lossless_precision(gpu: &Gpu, model: &Llama) -> Precision {
        GpuLlama::lossless_precision(gpu, model)
    }
    fn precision(&self) -> Precision {
        GpuLlama::precision(self)
    }
    fn fail_next(&self) {
        GpuLlama::fail_next(self)
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
