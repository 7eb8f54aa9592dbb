use attention_live::numerics::soft_lookup::{bigrams, lookup, similarity, COLOURS};

#[test]
fn bigrams_have_boundary_markers() {
    // "Red" -> ⟨r, re, ed, d⟩ (lower-cased)
    let b: Vec<(char, char)> = bigrams("Red").into_keys().collect();
    assert_eq!(b.len(), 4);
    for g in [('⟨', 'r'), ('r', 'e'), ('e', 'd'), ('d', '⟩')] {
        assert!(b.contains(&g), "{g:?} missing from {b:?}");
    }
}

#[test]
fn similarity_hand_values() {
    // red: ⟨r re ed d⟩; rad: ⟨r ra ad d⟩. Shared: ⟨r, d⟩ -> 2 / (√4 · √4) = 0.5
    assert!((similarity("red", "rad") - 0.5).abs() < 1e-12);
    // blu: ⟨b bl lu u⟩ (4); blue: ⟨b bl lu ue e⟩ (5). Shared 3 -> 3 / (2 √5) ≈ 0.670820
    assert!((similarity("blu", "blue") - 3.0 / (2.0 * 5f64.sqrt())).abs() < 1e-12);
    assert!((similarity("teal", "teal") - 1.0).abs() < 1e-12);
    // no shared bigram at all
    assert_eq!(similarity("xyz", "red"), 0.0);
}

#[test]
fn weights_are_a_convex_combination() {
    for (q, beta) in [("blu", 10.0), ("gren", 3.0), ("blue green", 50.0), ("", 7.0)] {
        let r = lookup(q, beta);
        assert!(r.weights.iter().all(|&w| w >= 0.0));
        assert!((r.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        for c in 0..3 {
            let lo = COLOURS.iter().map(|(_, v)| v[c] as f64).fold(f64::INFINITY, f64::min);
            let hi = COLOURS.iter().map(|(_, v)| v[c] as f64).fold(f64::NEG_INFINITY, f64::max);
            assert!(r.output[c] >= lo - 1e-9 && r.output[c] <= hi + 1e-9);
        }
    }
}

#[test]
fn beta_zero_is_average_pooling() {
    let r = lookup("red", 0.0);
    let n = COLOURS.len() as f64;
    assert!(r.weights.iter().all(|&w| (w - 1.0 / n).abs() < 1e-12));
    // the mean colour, summed independently of the dot product in `lookup`
    for c in 0..3 {
        let mean = COLOURS.iter().map(|(_, v)| v[c] as f64).sum::<f64>() / n;
        assert!((r.output[c] - mean).abs() < 1e-9);
    }
}

#[test]
fn large_beta_is_an_exact_lookup() {
    let r = lookup("red", 100.0);
    let i = r.keys.iter().position(|k| *k == "red").unwrap();
    assert!(r.weights[i] > 0.999_999, "{:?}", r.weights);
    assert!((r.output[0] - 220.0).abs() < 1e-3 && (r.output[1] - 40.0).abs() < 1e-3);
}

#[test]
fn empty_query_matches_nothing_so_weights_are_uniform() {
    // "" has the single bigram ⟨⟩, which no key has: all scores 0, uniform for any β.
    let r = lookup("", 80.0);
    assert!(r.scores.iter().all(|&s| s == 0.0));
    assert!(r.weights.iter().all(|&w| (w - 1.0 / COLOURS.len() as f64).abs() < 1e-12));
}

/// The numbers the chapter's prose quotes (chapters/soft-lookup.md), recomputed.
#[test]
fn numbers_quoted_in_the_chapter() {
    let w = |q: &str, beta: f64, key: &str| {
        let r = lookup(q, beta);
        r.weights[r.keys.iter().position(|k| *k == key).unwrap()]
    };
    // "blu" at β = 10: "blue" takes about 91% of the weight, "black" most of the rest.
    assert!((w("blu", 10.0, "blue") - 0.91).abs() < 0.01, "{}", w("blu", 10.0, "blue"));
    assert!(w("blu", 10.0, "black") > 0.5 * (1.0 - w("blu", 10.0, "blue")));
    // "brk": brown and black both score 2 / (2 √6) ≈ 0.408 and split the weight at large β.
    assert!((similarity("brk", "brown") - 2.0 / (2.0 * 6f64.sqrt())).abs() < 1e-12);
    assert!((similarity("brk", "black") - 2.0 / (2.0 * 6f64.sqrt())).abs() < 1e-12);
    assert!((w("brk", 100.0, "brown") - 0.5).abs() < 1e-6 && (w("brk", 100.0, "black") - 0.5).abs() < 1e-6);
    // "gren" at β = 10: "green" gets about 96%; "grey" peaks near a fifth around β ≈ 3.
    assert!((w("gren", 10.0, "green") - 0.96).abs() < 0.01, "{}", w("gren", 10.0, "green"));
    let peak = (0..=100).map(|i| w("gren", i as f64 * 0.1, "grey")).fold(0.0, f64::max);
    assert!((peak - 0.2).abs() < 0.03, "grey peaks at {peak}");
    assert!((w("gren", 3.0, "grey") - peak).abs() < 0.02);
}
