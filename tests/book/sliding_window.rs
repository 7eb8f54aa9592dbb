//! Sliding-window masks and the receptive field of stacked layers, against brute-force
//! definitions and hand values.

use attention_live::demos::sliding_window::compute;
use attention_live::numerics::window::{first_layer, reachable, receptive_field, window_mask};

#[test]
fn the_mask_is_the_definition() {
    // Brute force: query i sees key j iff j is not in the future and at most w − 1 back.
    for n in [1, 5, 12] {
        for w in 1..=n + 1 {
            let m = window_mask(n, w);
            for i in 0..n {
                for j in 0..n {
                    assert_eq!(m[[i, j]], j <= i && i - j < w, "n {n} w {w} ({i},{j})");
                }
                // Each row has min(i + 1, w) keys: the count the cost formula sums.
                assert_eq!(m.row(i).iter().filter(|&&b| b).count(), (i + 1).min(w));
            }
        }
    }
    // Hand example, n = 4, w = 2: rows 1000 / 1100 / 0110 / 0011.
    let rows: Vec<String> =
        window_mask(4, 2).rows().into_iter().map(|r| r.iter().map(|&b| if b { '1' } else { '0' }).collect()).collect();
    assert_eq!(rows, ["1000", "1100", "0110", "0011"]);
}

#[test]
fn stacked_layers_reach_back_l_times_w_minus_one() {
    for (n, w, layers) in [(16, 4, 1), (16, 4, 2), (16, 4, 5), (20, 3, 4), (9, 1, 3), (10, 10, 2)] {
        let reach = reachable(n, w, layers);
        for i in 0..n {
            for j in 0..n {
                // Closed form: j ≤ i and i − j ≤ L·(w − 1).
                let want = j <= i && i - j < receptive_field(w, layers);
                assert_eq!(reach[[i, j]], want, "n {n} w {w} L {layers} ({i},{j})");
                assert_eq!(first_layer(i, j, w).is_some_and(|l| l <= layers), want, "first layer of ({i},{j})");
            }
        }
    }
    // Hand values: w = 4 reaches 3 back per layer, so 2 layers see 7 tokens and position 15's
    // token 9 (6 back) arrives at layer 2, token 12 (3 back) at layer 1.
    assert_eq!(receptive_field(4, 2), 7);
    assert_eq!(first_layer(15, 9, 4), Some(2));
    assert_eq!(first_layer(15, 12, 4), Some(1));
    assert_eq!(first_layer(15, 8, 4), Some(3));
    assert_eq!(first_layer(3, 5, 4), None, "the future never arrives");
}

#[test]
fn the_demo_counts_what_it_highlights() {
    let s = compute(16, 4, 2, 15);
    assert_eq!((s.query, s.reached, s.receptive_field), (15, 7, 7));
    assert_eq!(s.first_layer.iter().filter(|l| l.is_some()).count(), 7);
    // Near the start the field is cut to the tokens that exist: query 2 reaches tokens 0..=2.
    let s = compute(16, 4, 2, 2);
    assert_eq!(s.reached, 3);
    // Out-of-range inputs are clamped, never a panic.
    let s = compute(500, 0, 0, 99);
    assert_eq!((s.tokens.len(), s.query, s.reached), (32, 31, 1));
}
