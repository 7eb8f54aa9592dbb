//! Measuring the models: accuracy over random strings of one length (the bottleneck curve,
//! recomputed live), and how much each input position still moves the encoder's last state
//! (the fading signal of a recurrent network).

use super::model::Seq2Seq;
use super::EOS;
use crate::numerics::rng::Rng;

/// A random source of `len` letters plus `</s>`.
pub fn random_source(rng: &mut Rng, len: usize) -> Vec<u32> {
    let mut src: Vec<u32> = (0..len).map(|_| 3 + (rng.next_u64() % 26) as u32).collect();
    src.push(EOS);
    src
}

/// The correct output for a source: its letters reversed, then `</s>`.
pub fn target(src: &[u32]) -> Vec<u32> {
    let mut t: Vec<u32> = src.iter().copied().filter(|&x| x != EOS).rev().collect();
    t.push(EOS);
    t
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Accuracy {
    /// Fraction of outputs exactly right (letters and stopping point).
    pub exact: f64,
    /// Fraction of target positions (letters and the final `</s>`) produced correctly.
    pub token: f64,
}

/// Greedy accuracy of `model` on `n` random strings of `len` letters drawn from `seed`, scored
/// like the training script's evaluation.
pub fn accuracy(model: &Seq2Seq, len: usize, n: usize, seed: u64) -> Accuracy {
    let mut rng = Rng::new(seed);
    let (mut exact, mut right, mut total) = (0usize, 0usize, 0usize);
    for _ in 0..n {
        let src = random_source(&mut rng, len);
        let want = target(&src);
        let got = model.greedy(&src).out;
        exact += usize::from(got == want);
        right += want.iter().zip(&got).filter(|(a, b)| a == b).count();
        total += want.len();
    }
    Accuracy { exact: exact as f64 / n.max(1) as f64, token: right as f64 / total.max(1) as f64 }
}

/// For each position j of the source's letters: the mean change ‖h_S − h_S′‖ in the encoder's
/// last state when letter j is replaced by each other letter. The fixed-context decoder sees
/// only h_S, so a position that barely moves it is a position the decoder can hardly recover.
pub fn sensitivity(model: &Seq2Seq, src: &[u32]) -> Vec<f64> {
    if src.is_empty() {
        return Vec::new();
    }
    let last = |s: &[u32]| {
        let hs = model.encode(s);
        hs.row(hs.nrows() - 1).to_owned()
    };
    let base = last(src);
    let letters = src.len().saturating_sub(1);
    (0..letters)
        .map(|j| {
            let mut sum = 0.0;
            for other in 3..29u32 {
                if other == src[j] {
                    continue;
                }
                let mut s = src.to_vec();
                s[j] = other;
                sum += f64::from((&last(&s) - &base).mapv(|x| x * x).sum().sqrt());
            }
            sum / 25.0
        })
        .collect()
}
