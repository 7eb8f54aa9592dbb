//! Sliding-window attention (as in Mistral): query i sees itself and the w − 1 tokens before
//! it. One layer reaches back w − 1 positions; stacking layers chains windows, so after L
//! layers position i has heard from every j with 0 ≤ i − j ≤ L·(w − 1).

use ndarray::Array2;

/// The (n, n) mask of one layer: `true` where query i may attend to key j (j ≤ i < j + w).
pub fn window_mask(n: usize, w: usize) -> Array2<bool> {
    Array2::from_shape_fn((n, n), |(i, j)| j <= i && i - j < w)
}

/// Which positions reach which after `layers` stacked window layers: the boolean matrix power
/// of the mask (a path of one attention step per layer; the residual connection is the
/// diagonal, which the mask already contains).
pub fn reachable(n: usize, w: usize, layers: usize) -> Array2<bool> {
    let mask = window_mask(n, w);
    let mut reach = Array2::from_shape_fn((n, n), |(i, j)| i == j);
    for _ in 0..layers {
        // reach ← reach ∘ mask: i reaches j if i attends to some k that already reached j.
        reach = Array2::from_shape_fn((n, n), |(i, j)| (0..n).any(|k| mask[[i, k]] && reach[[k, j]]));
    }
    reach
}

/// The first layer after which query i has information from position j, or None if j is in
/// i's future (or out of reach of any depth when w = 1 and j ≠ i): ⌈(i − j)/(w − 1)⌉, and 1
/// for j = i (a token sees itself from the first layer).
pub fn first_layer(i: usize, j: usize, w: usize) -> Option<usize> {
    match (i.checked_sub(j)?, w) {
        (0, _) => Some(1),
        (_, 0 | 1) => None,
        (gap, w) => Some(gap.div_ceil(w - 1)),
    }
}

/// How many tokens one query reaches after `layers` layers (itself included), at most n:
/// L·(w − 1) + 1.
pub fn receptive_field(w: usize, layers: usize) -> usize {
    layers * w.saturating_sub(1) + 1
}
