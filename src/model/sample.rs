//! From logits to the next token: temperature, top-k, top-p (nucleus) and greedy decoding.

use ndarray::ArrayView1;

use crate::numerics::rng::Rng;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// Divides the logits; 0 means greedy (always the most likely token).
    pub temperature: f32,
    /// Keep only the k most likely tokens (0 = no limit).
    pub top_k: usize,
    /// Keep the smallest set of most likely tokens whose probability reaches p (1 = no limit).
    pub top_p: f32,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling { temperature: 1.0, top_k: 0, top_p: 1.0 }
    }
}

pub use crate::numerics::softmax::argmax;

/// The distribution the sampler draws from: (token, probability) pairs, most likely first,
/// after temperature, top-k and top-p, renormalised to sum to 1.
///
/// Stable at any temperature: the scaled logits are shifted by their maximum before exp (in
/// f64), so the largest term is exp(0) = 1 and small temperatures only push the others to 0.
pub fn distribution(logits: ArrayView1<f32>, s: &Sampling) -> Vec<(u32, f64)> {
    if logits.is_empty() {
        return Vec::new();
    }
    if s.temperature.is_nan() || s.temperature <= 0.0 {
        return vec![(argmax(logits), 1.0)];
    }
    let t = s.temperature as f64;
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x)) as f64;
    let mut probs: Vec<(u32, f64)> =
        logits.iter().enumerate().map(|(i, &x)| (i as u32, ((x as f64 - max) / t).exp())).collect();
    // Most likely first; ties keep the lower id first so results do not depend on sort details.
    probs.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    if s.top_k > 0 {
        probs.truncate(s.top_k);
    }
    let total: f64 = probs.iter().map(|p| p.1).sum();
    probs.iter_mut().for_each(|p| p.1 /= total);
    if s.top_p < 1.0 {
        let mut acc = 0.0;
        let keep = probs
            .iter()
            .position(|p| {
                acc += p.1;
                acc >= s.top_p as f64
            })
            .map_or(probs.len(), |i| i + 1);
        probs.truncate(keep.max(1));
        let total: f64 = probs.iter().map(|p| p.1).sum();
        probs.iter_mut().for_each(|p| p.1 /= total);
    }
    probs
}

/// Draws a token from `distribution(logits, s)` with the given RNG.
pub fn sample(logits: ArrayView1<f32>, s: &Sampling, rng: &mut Rng) -> u32 {
    let dist = distribution(logits, s);
    let u = rng.uniform();
    let mut acc = 0.0;
    for &(id, p) in &dist {
        acc += p;
        if u < acc {
            return id;
        }
    }
    dist.last().map_or(0, |p| p.0) // rounding left u just above the total
}
