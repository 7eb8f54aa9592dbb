//! Sampling after a prompt with the KV cache, for every family: the tokens so far, their cache
//! and the next-token logits, and the step that samples one more token and runs it. The session
//! lends its forward pass as `run` (the tokens already cached, the new ones, the cache and the
//! options, to the last position's logits).

use ndarray::Array2;

use super::protocol::{Query, Token};
use crate::model::engine::Cache;
use crate::model::sample::{sample, Sampling};
use crate::model::{ForwardOptions, RunError};
use crate::numerics::rng::Rng;

/// A generation in progress: its cache lives on the backend that ran its prompt.
pub struct Generation {
    ids: Vec<u32>,
    cache: Cache,
    logits: Array2<f32>,
    /// The knock-outs every step runs with.
    opts: ForwardOptions,
    sampling: Sampling,
    rng: Rng,
    continuation: Vec<u32>,
}

impl Generation {
    /// Runs the prompt's `ids` once into `cache`, with the query's sampling settings and seed.
    pub async fn start(
        ids: Vec<u32>,
        mut cache: Cache,
        opts: ForwardOptions,
        q: &Query,
        mut run: impl AsyncFnMut(&[u32], &[u32], &mut Cache, &ForwardOptions) -> Result<Array2<f32>, RunError>,
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
        mut run: impl AsyncFnMut(&[u32], &[u32], &mut Cache, &ForwardOptions) -> Result<Array2<f32>, RunError>,
    ) -> Result<u32, RunError> {
        let next = sample(self.logits.row(0), &self.sampling, &mut self.rng);
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

/// The continuation so far, `text`, after the newest `token`: as it is, or, when the token ends
/// the text (`any::ends_text`), without the token's literal, and `true`: the generation stops there, and the
/// marker never reaches the page as if the model had written it.
pub fn until_end_of_text(token: &Token, text: String) -> (String, bool) {
    if !super::any::ends_text(&token.text) {
        return (text, false);
    }
    let kept = text.strip_suffix(token.text.as_str()).map(str::to_string).unwrap_or(text);
    (kept, true)
}
