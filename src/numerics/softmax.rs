//! Softmax with masking: the normalisation at the heart of every attention layer.

use ndarray::{Array1, ArrayView1};

/// Softmax of a score vector, where a score of −∞ means "masked": that weight is exactly 0.
///
/// Returns `None` when every score is −∞ (or any is NaN): the weights would be 0/0 and there
/// is no sensible answer, so the caller must say so instead of drawing NaN.
pub fn masked_softmax(scores: ArrayView1<f64>) -> Option<Array1<f64>> {
    if scores.iter().any(|s| s.is_nan()) {
        return None;
    }
    let m = scores.fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    if m == f64::NEG_INFINITY {
        return None; // empty support: nothing to normalise over
    }
    if m == f64::INFINITY {
        // Infinitely strong scores win outright and split the weight equally.
        let hits = scores.mapv(|s| if s == f64::INFINITY { 1.0 } else { 0.0 });
        let count = hits.sum();
        return Some(hits / count);
    }
    // Max-subtract: softmax(s) = softmax(s − c) for any constant c. With c = max(s) the
    // largest exponent is exp(0) = 1, so nothing overflows, and the sum is at least 1, so a very
    // sharp kernel (tiny σ) cannot underflow every term to 0 and produce 0/0.
    // exp(−∞ − m) = exp(−∞) = 0 exactly: masked positions get weight exactly 0.
    let e = scores.mapv(|s| (s - m).exp());
    let z = e.sum();
    Some(e / z)
}

/// Plain softmax for scores that are all finite. Same trick, same guarantees.
pub fn softmax(scores: ArrayView1<f64>) -> Array1<f64> {
    masked_softmax(scores).unwrap_or_else(|| Array1::from_elem(scores.len(), f64::NAN))
}

/// The index of the largest logit (the first one on ties, as `torch.argmax`).
pub fn argmax(logits: ArrayView1<f32>) -> u32 {
    let mut best = 0;
    for (i, &x) in logits.iter().enumerate() {
        if x > logits[best] {
            best = i;
        }
    }
    best as u32
}
