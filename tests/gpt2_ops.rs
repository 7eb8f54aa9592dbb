//! The CPU kernels the browser uses instead of ndarray's, against ndarray.

/// The browser's matrix product (`matmul_blocked`, used on wasm) equals ndarray's, on shapes
/// that are not multiples of its blocks.
#[test]
fn the_blocked_matmul_equals_ndarray() {
    use attention_live::gpt2::ops::matmul_blocked;
    use attention_live::numerics::rng::normal_matrix;
    for (t, k, n) in [(1, 3, 5), (9, 33, 517), (20, 64, 1030)] {
        let x = normal_matrix(t, k, 1, 1.0).mapv(|v| v as f32);
        let w = normal_matrix(k, n, 2, 1.0).mapv(|v| v as f32);
        let want = x.dot(&w);
        let got = matmul_blocked(x.view(), w.view());
        let e = want.iter().zip(&got).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(e < 1e-4, "({t}, {k}, {n}): differs by {e}");
    }
}

/// Decoding one token at a time takes the one-row paths (`linear` without packing, the tied
/// logits as dot products); they equal the full products.
#[test]
fn one_row_paths_equal_the_full_products() {
    use attention_live::gpt2::ops::{linear, tied_logits};
    use attention_live::gpt2::weights::Linear;
    use attention_live::numerics::rng::normal_matrix;
    let x = normal_matrix(1, 37, 3, 1.0).mapv(|v| v as f32);
    let lin = Linear { weight: normal_matrix(37, 70, 4, 1.0).mapv(|v| v as f32), bias: normal_matrix(1, 70, 5, 1.0).mapv(|v| v as f32).row(0).to_owned() };
    let want = x.dot(&lin.weight) + &lin.bias;
    let e = want.iter().zip(&linear(x.view(), &lin)).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(e < 1e-4, "linear differs by {e}");
    let wte = normal_matrix(101, 37, 6, 1.0).mapv(|v| v as f32);
    let want = x.dot(&wte.t());
    let e = want.iter().zip(&tied_logits(x.view(), &wte)).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(e < 1e-4, "logits differ by {e}");
}
