//! The CPU kernels the browser uses instead of ndarray's, against ndarray.

use crate::common;

/// The browser's matrix product (weights packed in column panels of 8, rows in blocks of 4, a
/// lone row apart) equals ndarray's, on row counts that fill blocks exactly (4, 16), leave a
/// padded block (2, 3, 7) or a lone row (1, 5, 17), on widths that end in a partial panel, and
/// with no inner dimension at all (zeros).
/// x given as a transposed view (the xᵀ of a weight's gradient, packed where it lies) gives
/// the same outputs bit for bit.
#[test]
fn the_packed_matmul_equals_ndarray() {
    use attention_live::numerics::packed::PackedMatrix;
    use attention_live::numerics::rng::normal_matrix;
    for (t, k, n) in [
        (1, 3, 5),
        (2, 8, 8),
        (3, 33, 17),
        (4, 16, 24),
        (5, 9, 31),
        (7, 64, 70),
        (16, 64, 1030),
        (17, 33, 517),
        (5, 0, 3),
    ] {
        let x = normal_matrix(t, k, 1, 1.0).mapv(|v| v as f32);
        let w = normal_matrix(k, n, 2, 1.0).mapv(|v| v as f32);
        let packed = PackedMatrix::pack(w.view());
        assert_eq!(packed.unpack(), w, "unpack(pack(W)) = W");
        let want = x.dot(&w);
        let got = packed.matmul(x.view());
        assert_eq!(got.dim(), (t, n));
        let e = want.iter().zip(&got).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(e < 1e-4, "({t}, {k}, {n}): differs by {e}");
        let stored_transposed = x.t().as_standard_layout().into_owned(); // (k, t), row-major
        assert_eq!(packed.matmul(stored_transposed.t()), got, "({t}, {k}, {n}): x read transposed");
    }
}

/// The browser's loader packs each weight straight from the file (F32 and F16 checkpoints):
/// the same weights as the row-major load, packed.
#[test]
fn loading_packed_gives_the_same_weights() {
    use attention_live::formats::safetensors::SafeTensors;
    use attention_live::gpt2::weights::{LinearWeight, Weights};
    use attention_live::gpt2::Config;
    for name in ["a", "b"] {
        let (cfg, bytes) = common::checkpoint(&format!("tests/fixtures/gpt2/{name}"));
        let (cfg, st) = (Config::from_json(&cfg).unwrap(), SafeTensors::parse(&bytes).unwrap());
        let (plain, packed) = (
            Weights::from_safetensors_in(&st, &cfg, false).unwrap(),
            Weights::from_safetensors_in(&st, &cfg, true).unwrap(),
        );
        for (p, q) in plain.h.iter().zip(&packed.h) {
            for (a, b) in [
                (&p.attn.c_attn, &q.attn.c_attn),
                (&p.attn.c_proj, &q.attn.c_proj),
                (&p.mlp.c_fc, &q.mlp.c_fc),
                (&p.mlp.c_proj, &q.mlp.c_proj),
            ] {
                assert!(matches!(a.weight, LinearWeight::Plain(_)) && matches!(b.weight, LinearWeight::Packed(_)));
                assert_eq!((a.weight(), &a.bias), (b.weight(), &b.bias), "{name}");
            }
        }
    }
}

/// Decoding one token at a time takes the one-row paths (`linear` without packing, the tied
/// logits as dot products); they equal the full products, in both weight layouts.
#[test]
fn one_row_paths_equal_the_full_products() {
    use attention_live::gpt2::ops::{linear, tied_logits};
    use attention_live::gpt2::weights::Linear;
    use attention_live::numerics::rng::normal_matrix;
    let x = normal_matrix(1, 37, 3, 1.0).mapv(|v| v as f32);
    let (w, bias) = (
        normal_matrix(37, 70, 4, 1.0).mapv(|v| v as f32),
        normal_matrix(1, 70, 5, 1.0).mapv(|v| v as f32).row(0).to_owned(),
    );
    let want = x.dot(&w) + &bias;
    for packed in [false, true] {
        let lin = Linear::with_layout(w.clone(), bias.clone(), packed);
        assert_eq!(*lin.weight(), w);
        let e = want.iter().zip(&linear(x.view(), &lin)).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(e < 1e-4, "linear (packed: {packed}) differs by {e}");
    }
    let wte = normal_matrix(101, 37, 6, 1.0).mapv(|v| v as f32);
    let want = x.dot(&wte.t());
    let e = want.iter().zip(&tied_logits(x.view(), &wte)).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(e < 1e-4, "logits differ by {e}");
}

#[test]
fn max_pooling_keeps_the_largest_weight_of_each_block() {
    use attention_live::numerics::attention::max_pool_into;
    // 4 × 4 → 2 × 2: blocks [[1, 2], [5, 6]] → 6, [[3, 4], [7, 8]] → 8,
    // [[9, 10], [13, 14]] → 14, [[11, 12], [15, 16]] → 16.
    let m = ndarray::Array2::from_shape_fn((4, 4), |(i, j)| (i * 4 + j + 1) as f32);
    let mut out = ndarray::Array2::zeros((2, 2));
    max_pool_into(m.view(), out.view_mut());
    assert_eq!(out, ndarray::arr2(&[[6.0, 8.0], [14.0, 16.0]]));
    // 3 × 5 → 2 × 2 (uneven blocks: rows {0}, {1, 2}; columns {0, 1}, {2, 3, 4}).
    let m = ndarray::Array2::from_shape_fn((3, 5), |(i, j)| (i * 5 + j) as f32);
    let mut out = ndarray::Array2::zeros((2, 2));
    max_pool_into(m.view(), out.view_mut());
    assert_eq!(out, ndarray::arr2(&[[1.0, 4.0], [11.0, 14.0]]));
}

/// The thumbnails a forward pass keeps for long prompts equal max-pooling the full weights.
#[test]
fn forward_thumbnails_match_the_full_attention() {
    use attention_live::gpt2::{Capture, ForwardOptions, Gpt2};
    use attention_live::numerics::attention::max_pool_into;
    let (cfg, bytes) = common::checkpoint("tests/fixtures/gpt2/a");
    let model = Gpt2::load(&cfg, &bytes).unwrap();
    let tokens: Vec<u32> = (0..12).map(|i| (i * 37 % 256) as u32).collect();
    let opts = ForwardOptions { capture: Capture::All, thumbnails: Some(5), ..Default::default() };
    let out = model.forward(&tokens, &mut model.new_cache(), &opts).unwrap();
    assert_eq!(out.thumbnails.len(), 2);
    for (l, th) in out.thumbnails.iter().enumerate() {
        assert_eq!(th.dim(), (2, 5, 5));
        let full = out.attentions[l].as_ref().unwrap();
        for h in 0..2 {
            let mut want = ndarray::Array2::zeros((5, 5));
            max_pool_into(full.index_axis(ndarray::Axis(0), h), want.view_mut());
            assert_eq!(th.index_axis(ndarray::Axis(0), h), want);
        }
    }
}

/// The GELU's own exponential (a polynomial, so the browser can run it on four lanes) is within
/// 3 units in the last place of e^x on [−80, 80] (below, results near f32's smallest normal lose
/// digits, which the GELU never notices), and clamps beyond ±87.
#[test]
fn the_polynomial_exp_is_accurate_to_a_few_ulp() {
    use attention_live::gpt2::gelu::exp;
    let mut worst = 0.0f64;
    for i in -80_000..=80_000 {
        let x = i as f32 * 1e-3;
        let want = (x as f64).exp();
        let ulp = (want as f32).abs() * f32::EPSILON;
        worst = worst.max(((exp(x) as f64) - want).abs() / ulp as f64);
    }
    assert!(worst <= 3.0, "worst error {worst} ulp");
    assert_eq!(exp(0.0), 1.0);
    assert_eq!(exp(1000.0), exp(87.0));
    assert!(exp(87.0).is_finite() && exp(-1000.0) > 0.0);
}

/// gelu_new = 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))), the formula printed in the GPT-2
/// chapter, computed here in f64 with the library tanh; and the four-lane form (which the
/// browser uses) gives the same values on a slice whose length is not a multiple of four.
#[test]
fn gelu_matches_the_tanh_formula() {
    use attention_live::gpt2::gelu::{gelu_in_place, gelu_new};
    let xs: Vec<f32> = (-1000..=1000).map(|i| i as f32 * 0.01).chain([-1e4, -60.0, 60.0, 1e4]).collect();
    for &x in &xs {
        let xf = x as f64;
        let want = 0.5 * xf * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (xf + 0.044715 * xf.powi(3))).tanh());
        let got = gelu_new(x) as f64;
        assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0), "gelu({x}) = {got}, want {want}");
    }
    let mut lanes = xs[..2003].to_vec();
    gelu_in_place(&mut lanes);
    assert!(lanes.iter().zip(&xs).all(|(&g, &x)| g == gelu_new(x)));
}
