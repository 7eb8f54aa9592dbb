//! Sampling: temperature, top-k, top-p and greedy, against hand arithmetic.

use attention_live::model::sample::Sampling;
use attention_live::model::sample::{argmax, distribution, sample};
use attention_live::numerics::rng::Rng;
use ndarray::arr1;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn temperature_one_is_softmax() {
    // softmax(2, 1, 0) = (e², e, 1) / (e² + e + 1) = (0.665241, 0.244728, 0.090031)
    let d = distribution(arr1(&[1.0f32, 2.0, 0.0]).view(), &Sampling::default());
    assert_eq!(d.iter().map(|p| p.0).collect::<Vec<_>>(), vec![1, 0, 2]);
    for (p, want) in d.iter().zip([0.665241, 0.244728, 0.090031]) {
        assert!((p.1 - want).abs() < 1e-6, "{p:?}");
    }
}

#[test]
fn temperature_sharpens_and_flattens() {
    // T = 2: softmax(1, 0.5, 0) = (0.506480, 0.307196, 0.186324)
    let d = distribution(arr1(&[2.0f32, 1.0, 0.0]).view(), &Sampling { temperature: 2.0, ..Default::default() });
    assert!(close(d[0].1, 0.506480) && close(d[1].1, 0.307196) && close(d[2].1, 0.186324), "{d:?}");
    // T = 0.05 on (10, 9.9, −10⁴): scaled gaps 2 and ~2·10⁵,
    // so p = (1, e⁻²)/(1 + e⁻²) = (0.880797, 0.119203, 0)
    let d = distribution(arr1(&[10.0f32, 9.9, -1e4]).view(), &Sampling { temperature: 0.05, ..Default::default() });
    assert!((d[0].1 - 0.880797).abs() < 1e-5 && (d[1].1 - 0.119203).abs() < 1e-5 && d[2].1 == 0.0, "{d:?}");
    // Very low temperatures stay finite (exp of large logits would overflow without max-subtract).
    let d = distribution(arr1(&[80.0f32, 79.0, 3.0]).view(), &Sampling { temperature: 0.001, ..Default::default() });
    assert!(d.iter().all(|p| p.1.is_finite()) && d[0] == (0, 1.0), "{d:?}");
}

#[test]
fn temperature_zero_is_greedy() {
    let logits = arr1(&[0.5f32, 3.0, 3.0, -1.0]);
    assert_eq!(argmax(logits.view()), 1, "ties go to the first");
    let d = distribution(logits.view(), &Sampling { temperature: 0.0, ..Default::default() });
    assert_eq!(d, vec![(1, 1.0)]);
    let mut rng = Rng::new(1);
    let greedy = Sampling { temperature: 0.0, ..Default::default() };
    assert!((0..50).all(|_| sample(logits.view(), &greedy, &mut rng) == 1));
}

#[test]
fn top_k_and_top_p_cut_and_renormalise() {
    let logits = arr1(&[2.0f32, 1.0, 0.0]);
    // Top-2: e²/(e² + e) = 0.731059, e/(e² + e) = 0.268941
    let k2 = distribution(logits.view(), &Sampling { top_k: 2, ..Default::default() });
    assert_eq!(k2.len(), 2);
    assert!(close(k2[0].1, 0.731059) && close(k2[1].1, 0.268941), "{k2:?}");
    // Top-p 0.8: 0.665 < 0.8 ≤ 0.665 + 0.245 = 0.910, so the same two tokens survive.
    let p8 = distribution(logits.view(), &Sampling { top_p: 0.8, ..Default::default() });
    assert_eq!(p8.len(), 2);
    assert!(p8.iter().zip(&k2).all(|(a, b)| a.0 == b.0 && close(a.1, b.1)), "{p8:?}");
    // Top-p 0.5: the first token alone already reaches it.
    assert_eq!(distribution(logits.view(), &Sampling { top_p: 0.5, ..Default::default() }), vec![(0, 1.0)]);
}

#[test]
fn seeded_sampling_is_reproducible_and_follows_the_distribution() {
    let logits = arr1(&[1.0f32, 2.0, 0.0, -1.0]);
    let s = Sampling::default();
    let draw = |seed| {
        let mut rng = Rng::new(seed);
        (0..20_000).map(|_| sample(logits.view(), &s, &mut rng)).collect::<Vec<_>>()
    };
    let a = draw(42);
    assert_eq!(a, draw(42));
    assert_ne!(a, draw(43));
    for (id, p) in distribution(logits.view(), &s) {
        let freq = a.iter().filter(|&&x| x == id).count() as f64 / a.len() as f64;
        assert!((freq - p).abs() < 0.01, "token {id}: drawn {freq}, p = {p}");
    }
}
