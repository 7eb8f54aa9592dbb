//! Tiled attention with the online softmax equals the naive formula.

use attention_live::numerics::flash::{naive_attention, tiled_attention};
use attention_live::numerics::rng::Rng;
use ndarray::Array2;

fn random(rng: &mut Rng, rows: usize, cols: usize, scale: f64) -> Array2<f32> {
    Array2::from_shape_fn((rows, cols), |_| (rng.normal() * scale) as f32)
}

#[test]
fn tiled_equals_naive_for_every_tile_size_with_and_without_the_mask() {
    let mut rng = Rng::new(11);
    // Large scores (scale 3) so the running maximum really moves between tiles.
    let (q, k, v) = (random(&mut rng, 37, 16, 3.0), random(&mut rng, 37, 16, 3.0), random(&mut rng, 37, 16, 1.0));
    for causal in [false, true] {
        let want = naive_attention(q.view(), k.view(), v.view(), causal);
        for tile in [1, 2, 5, 16, 37, 64] {
            let got = tiled_attention(q.view(), k.view(), v.view(), causal, tile);
            let err = (&got - &want).iter().fold(0.0f32, |m, e| m.max(e.abs()));
            assert!(err < 1e-5, "causal {causal}, tile {tile}: off by {err}");
        }
    }
}

#[test]
fn causal_rows_see_only_their_past() {
    // Hand check: with a causal mask the first query sees only key 0, so its output is v₀.
    let mut rng = Rng::new(3);
    let (q, k, v) = (random(&mut rng, 4, 8, 1.0), random(&mut rng, 4, 8, 1.0), random(&mut rng, 4, 8, 1.0));
    let out = tiled_attention(q.view(), k.view(), v.view(), true, 2);
    assert!((&out.row(0) - &v.row(0)).iter().all(|e| e.abs() < 1e-6));
    // Queries over a longer cache (2 queries, 5 keys): the last query sees all keys, as unmasked.
    let (q2, k5, v5) = (random(&mut rng, 2, 8, 1.0), random(&mut rng, 5, 8, 1.0), random(&mut rng, 5, 8, 1.0));
    let masked = tiled_attention(q2.view(), k5.view(), v5.view(), true, 3);
    let open = naive_attention(q2.view(), k5.view(), v5.view(), false);
    assert!((&masked.row(1) - &open.row(1)).iter().all(|e| e.abs() < 1e-5));
    assert!((&masked.row(0) - &open.row(0)).iter().any(|e| e.abs() > 1e-3), "the mask changes the first row");
}

#[test]
fn the_step_through_rescales_as_printed_and_ends_at_the_naive_output() {
    use attention_live::demos::flash_steps::{compute, TOL};
    let o = compute(8, 4, 3, 1, 3, 7); // query row 1 (0-based), all 3 tiles
    assert_eq!(o.steps.len(), 3, "8 keys in tiles of 3: 3 + 3 + 2");
    assert_eq!(o.steps.iter().map(|s| s.keys).collect::<Vec<_>>(), [(0, 3), (3, 6), (6, 8)]);
    // Every step obeys the printed recurrences (in f64, from the row's scores):
    // m = max(m_old, tile max); ℓ = ℓ_old·exp(m_old − m) + Σ_tile exp(s − m).
    let (mut m, mut l) = (f64::NEG_INFINITY, 0.0);
    for s in &o.steps {
        let tile = &o.scores[s.keys.0..s.keys.1];
        let m_new = m.max(tile.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b)));
        l = l * (m - m_new).exp() + tile.iter().map(|x| (x - m_new).exp()).sum::<f64>();
        assert!((s.m_after - m_new).abs() < 1e-5 && (s.rescale - (m - m_new).exp()).abs() < 1e-5, "{s:?}");
        assert!((s.l - l).abs() < 1e-4 * l, "ℓ {} vs {l}", s.l);
        m = m_new;
    }
    // The last state: ℓ = Σ exp(s − max), and acc/ℓ is the naive output.
    let last = o.steps.last().unwrap();
    assert_eq!(last.partial, o.tiled);
    assert!(o.tiled.iter().zip(&o.naive).all(|(a, b)| (a - b).abs() <= TOL));
    assert!(o.max_diff <= TOL, "{}", o.max_diff);
    // Part-way, acc/ℓ is attention over the keys seen so far only: a different vector.
    assert!(o.steps[0].partial.iter().zip(&o.naive).any(|(a, b)| (a - b).abs() > 1e-3));
}

#[test]
fn memory_traffic_matches_hand_counts() {
    use attention_live::numerics::flash::memory_traffic;
    // n = 8, d = 4, blocks of 3 (3 blocks): naive 4·64 + 4·32 = 384; tiled 2·32 + 2·32·3 = 256.
    assert_eq!(memory_traffic(8, 4, 3), (384, 256));
    // n = 4096, d = 64, blocks of 128 (32 blocks): naive 4·16,777,216 + 4·262,144 = 68,157,440;
    // tiled 2·262,144 + 2·262,144·32 = 17,301,504: 3.9× less.
    assert_eq!(memory_traffic(4096, 64, 128), (68_157_440, 17_301_504));
}
