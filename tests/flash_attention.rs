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
