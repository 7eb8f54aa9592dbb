//! Sampling after a prompt with the KV cache, for either family: the tokens so far, their cache
//! and the next-token logits, and the step that samples one more token and runs it. A session
//! lends its forward pass as `run` (the tokens already cached, the new ones, the cache and the
//! options, to the last position's logits).

use ndarray::Array2;

use super::engine::Cache;
use super::protocol::Query;
use super::{RunError, Sampling};
use crate::numerics::rng::Rng;

/// A generation in progress; `O` is the family's forward-pass options (its knock-outs).
pub struct Generation<O> {
    ids: Vec<u32>,
    cache: Cache,
    logits: Array2<f32>,
    opts: O,
    sampling: Sampling,
    rng: Rng,
    continuation: Vec<u32>,
}

impl<O> Generation<O> {
    /// Runs the prompt's `ids` once into `cache`, with the query's sampling settings and seed.
    pub async fn start(
        ids: Vec<u32>,
        mut cache: Cache,
        opts: O,
        q: &Query,
        mut run: impl AsyncFnMut(&[u32], &[u32], &mut Cache, &O) -> Result<Array2<f32>, RunError>,
    ) -> Result<Self, RunError> {
        let logits = run(&[], &ids, &mut cache, &opts).await?;
        let (sampling, rng) = (q.sampling(), Rng::new(q.seed as u64));
        Ok(Generation { ids, cache, logits, opts, sampling, rng, continuation: Vec::new() })
    }

    /// Samples one more token and runs it through the model with the cache (one row of work).
    /// When the cache holds the whole `window`, the oldest quarter of the tokens is dropped and
    /// the cache rebuilt from the rest, whose positions then count from the new start.
    pub async fn step(
        &mut self,
        window: usize,
        mut run: impl AsyncFnMut(&[u32], &[u32], &mut Cache, &O) -> Result<Array2<f32>, RunError>,
    ) -> Result<u32, RunError> {
        let next = super::sample::sample(self.logits.row(0), &self.sampling, &mut self.rng);
        self.continuation.push(next);
        self.logits = if self.cache.len() < window {
            let logits = run(&self.ids, &[next], &mut self.cache, &self.opts).await?;
            self.ids.push(next);
            logits
        } else {
            self.ids.push(next);
            self.ids.drain(..self.ids.len() - window + window / 4); // slide: keep the last three quarters
            self.cache.clear();
            run(&[], &self.ids, &mut self.cache, &self.opts).await?
        };
        Ok(next)
    }

    /// The tokens sampled so far.
    pub fn continuation(&self) -> &[u32] {
        &self.continuation
    }

    /// The bytes the KV cache holds now (a Llama-family model's, per KV head: H / KV times
    /// less than per query head).
    pub fn cache_bytes(&self) -> usize {
        self.cache.bytes()
    }
}
