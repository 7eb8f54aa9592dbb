//! The core chapters' demos' outputs against the equations their chapters print.

use attention_live::demos::self_attention::Stage;
use attention_live::demos::{causal, gauss_dot, multi_head, padding, scaling, scorers, self_attention, two_heads};
use attention_live::numerics::attention::MaskFill;

#[test]
fn gauss_and_dot_weights_agree_exactly_when_keys_have_equal_length() {
    for theta in [0.0, 40.0, 123.0, 300.0] {
        let g = gauss_dot::compute(theta, 1.5, true);
        assert!(g.max_diff < 1e-12, "θ={theta}: {}", g.max_diff);
        // each Gaussian score is the sum of its three terms
        for i in 0..4 {
            assert!((g.gauss[i] - (g.dot[i] + g.key_term[i] + g.query_term)).abs() < 1e-12);
        }
        let unequal = gauss_dot::compute(theta, 1.5, false);
        assert!(unequal.max_diff > 1e-3, "unequal key lengths change the weights");
    }
}

#[test]
fn scaling_keeps_the_variance_near_one() {
    for d in [1usize, 16, 256, 1024] {
        let s = scaling::compute(d, 16, 1);
        // 256 samples: the sample variance is within ~30% of the true value (d, then 1).
        assert!((s.var_raw / d as f64 - 1.0).abs() < 0.3, "d={d}: var {}", s.var_raw);
        assert!((s.var_scaled - 1.0).abs() < 0.3, "d={d}: scaled var {}", s.var_scaled);
        assert_eq!(s.hist_raw.counts.len(), scaling::BINS);
        assert!(s.hist_scaled.counts.iter().sum::<usize>() > 250, "±4 sd holds nearly every sample");
        assert!((s.w_raw.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
    // unscaled softmax collapses toward one key for large d; scaled does not
    let big = scaling::compute(1024, 16, 1);
    assert!(big.w_raw[0] > 0.99 && big.w_scaled[0] < 0.9, "{} {}", big.w_raw[0], big.w_scaled[0]);
}

#[test]
fn scaled_dot_is_dot_over_root_d_and_keeps_the_ranking() {
    let s = scorers::compute(5, 4, 8, 1, 2);
    for i in 0..5 {
        assert!((s.scores[1][i] - s.scores[0][i] / 2.0).abs() < 1e-12);
    }
    let rank = |v: &Vec<f64>| {
        let mut idx: Vec<usize> = (0..v.len()).collect();
        idx.sort_by(|&a, &b| v[b].total_cmp(&v[a]));
        idx
    };
    assert_eq!(rank(&s.weights[0]), rank(&s.weights[1]));
    for w in &s.weights {
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}

#[test]
fn padding_weights_are_zero_and_empty_rows_are_explained() {
    let seqs = padding::compute([4, 3, 2], MaskFill::NegInf);
    assert_eq!(seqs[1].tokens, ["Learn", "to", "code", "<pad>"]);
    for s in &seqs {
        for row in &s.weights {
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(row[s.valid..].iter().all(|&w| w == 0.0));
        }
    }
    let inf = padding::compute([0, 3, 2], MaskFill::NegInf);
    assert!(inf[0].defined.iter().all(|&d| !d), "0/0 with −∞");
    let big = padding::compute([0, 3, 2], MaskFill::Value(-1e6));
    assert!(big[0].weights.iter().flatten().all(|&w| (w - 0.25).abs() < 1e-12), "uniform 1/4 with −10⁶");
    // with at least one visible key, both fills give the same weights
    let a = padding::compute([4, 3, 2], MaskFill::NegInf);
    let b = padding::compute([4, 3, 2], MaskFill::Value(-1e6));
    assert_eq!(
        a.iter().map(|s| s.weights.clone()).collect::<Vec<_>>(),
        b.iter().map(|s| s.weights.clone()).collect::<Vec<_>>()
    );
}

#[test]
fn causal_demo_hides_the_future() {
    let c = causal::compute(6, true);
    for (i, row) in c.weights.iter().enumerate() {
        assert!(row[i + 1..].iter().all(|&w| w == 0.0));
        assert!(c.masked[i][i + 1..].iter().all(|&s| s == f64::NEG_INFINITY));
    }
    assert_eq!(c.weights[0][0], 1.0);
    let open = causal::compute(6, false);
    assert!(open.weights[0][5] > 0.0);
}

#[test]
fn self_attention_stages_and_the_permutation_check() {
    for stage in [Stage::Xx, Stage::Qkv] {
        let s = self_attention::compute(stage, 5, 4, 1, &[], 2, false, true, false);
        assert!(s.equivariance_gap < 1e-9, "{stage:?}: {}", s.equivariance_gap);
        assert!(
            self_attention::compute(stage, 5, 4, 1, &[], 2, false, false, true).equivariance_gap > 1e-3,
            "{stage:?} + PE"
        );
        assert!(
            self_attention::compute(stage, 5, 4, 1, &[], 2, true, false, false).equivariance_gap > 1e-3,
            "{stage:?} + causal"
        );
    }
    assert!(
        self_attention::compute(Stage::Fixed, 5, 4, 1, &[], 2, false, false, false).equivariance_gap > 1e-3,
        "fixed A is tied to positions"
    );
    let s = self_attention::compute(Stage::Qkv, 3, 4, 1, &[], 2, false, false, false);
    let names: Vec<&str> = s.matrices.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names[0], "X (input)");
    assert!(names.contains(&"Q = X W_Q") && names.contains(&"weights softmax(·)"));
    let scores = s.matrices.iter().find(|m| m.name == "scores Q Kᵀ").unwrap();
    assert_eq!(scores.shape, "(3, 4) × (4, 3) → (3, 3)");
    let w = s.matrices.iter().find(|m| m.weights && m.name.starts_with("weights")).unwrap();
    for row in &w.rows {
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
    // shuffling reverses the token labels
    assert_eq!(self_attention::compute(Stage::Qkv, 3, 4, 1, &[], 2, false, true, false).tokens, ["t₂", "t₁", "t₀"]);
    // With n = d every matrix is square, yet only a token axis is labelled by tokens: W_Q is
    // dimensions by dimensions, X and Q tokens by dimensions, the weights tokens by tokens.
    let s = self_attention::compute(Stage::Qkv, 4, 4, 1, &[], 2, false, false, false);
    let labels = |name: &str| s.matrices.iter().find(|m| m.name == name).unwrap().labels(&s.tokens);
    let (dims, toks): (Vec<String>, Vec<String>) =
        ((0..4).map(|j| j.to_string()).collect(), ["t₀", "t₁", "t₂", "t₃"].map(String::from).to_vec());
    for w in ["W_Q", "W_K", "W_V"] {
        assert_eq!(labels(w), (dims.clone(), dims.clone()), "{w}");
    }
    for m in ["X (input)", "Q = X W_Q", "V = X W_V", "output weights · V"] {
        assert_eq!(labels(m), (toks.clone(), dims.clone()), "{m}");
    }
    assert_eq!(labels("weights softmax(·)"), (toks.clone(), toks.clone()));
    let s = self_attention::compute(Stage::Xx, 4, 4, 1, &[], 2, false, false, false);
    let x = s.matrices.iter().find(|m| m.name == "X (input)").unwrap().labels(&s.tokens);
    assert_eq!(x, (toks, dims));
}

#[test]
fn multi_head_cost_is_constant_in_h() {
    for h in [1, 2, 4, 8] {
        let m = multi_head::compute(h, 6, 1, false);
        assert_eq!(m.heads.len(), h);
        assert_eq!(m.d_head * h, 16);
        // n = 6, d_model = 16: 2 · 36 · 16 = 1152 multiply-adds in total
        assert_eq!(m.flops_total, 1152);
        assert_eq!(m.flops_per_head, 1152 / h);
        assert_eq!((m.concat.len(), m.concat[0].len()), (6, 16));
        // the output shown is Concat · W_O with the W_O shown
        for i in 0..6 {
            for j in 0..16 {
                let v: f64 = (0..16).map(|k| m.concat[i][k] * m.w_o[k][j]).sum();
                assert!((v - m.output[i][j]).abs() < 1e-12);
            }
        }
    }
}

#[test]
fn hand_built_heads_find_their_relations() {
    let e6 = 6f64.exp();
    let t = two_heads::compute(6.0, true);
    // previous-token head: position i ≥ 1 puts e⁶ / (e⁶ + i) on position i − 1 ("cat": 0.9975)
    for i in 1..6 {
        assert!((t.previous_token[i][i - 1] - e6 / (e6 + i as f64)).abs() < 1e-12);
    }
    assert!((t.previous_token[1][0] - 0.9975).abs() < 5e-5);
    assert_eq!(t.previous_token[0][0], 1.0);
    // same-word head: the second "the" (position 4) splits between both "the"s: e⁶ / (2e⁶ + 3) ≈ 0.4981
    assert!((t.same_word[4][0] - e6 / (2.0 * e6 + 3.0)).abs() < 1e-12);
    assert!((t.same_word[4][4] - t.same_word[4][0]).abs() < 1e-12);
    assert!((t.same_word[4][0] - 0.4981).abs() < 5e-5);
    // numbers quoted in chapters/multi-head.md
    assert!((t.previous_token[5][4] - 0.988).abs() < 5e-4, "mat -> the");
    assert!((t.same_word[1][1] - 0.9975).abs() < 5e-5, "cat -> cat");
    let flat = two_heads::compute(0.0, true);
    for i in 0..6 {
        assert!(flat.previous_token[i][..=i].iter().all(|&w| (w - 1.0 / (i as f64 + 1.0)).abs() < 1e-12));
    }
    let open = two_heads::compute(6.0, false);
    assert!(open.previous_token[0].iter().all(|&w| (w - 1.0 / 6.0).abs() < 1e-12));
    assert!(
        (open.same_word[0][0] - e6 / (2.0 * e6 + 4.0)).abs() < 1e-12 && (open.same_word[0][0] - 0.4975).abs() < 5e-5
    );
}

/// Claims made in chapters/scoring.md and chapters/masking.md.
#[test]
fn numbers_quoted_in_scoring_and_masking() {
    // gauss-dot defaults: the dot product ranks k₁ = (2, 0.5) first, the Gaussian ranks k₂ = (0.5, 1.5) first;
    // dot ≈ 2.78 and 2.02, scores after the key penalty ≈ 0.65 and 0.77.
    let g = gauss_dot::compute(40.0, 1.5, false);
    let argmax = |v: &Vec<f64>| (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap();
    assert_eq!((argmax(&g.dot), argmax(&g.gauss)), (0, 1));
    assert!((g.dot[0] - 2.78).abs() < 0.01 && (g.dot[1] - 2.02).abs() < 0.01);
    assert!((g.dot[0] + g.key_term[0] - 0.65).abs() < 0.01 && (g.dot[1] + g.key_term[1] - 0.77).abs() < 0.01);
    assert!((g.query_term + 1.125).abs() < 1e-12);
    // padding: a <pad> query (the zero vector) scores 0 everywhere: uniform over the visible keys
    let seqs = padding::compute([4, 3, 2], MaskFill::NegInf);
    assert!(seqs[1].weights[3][..3].iter().all(|&w| (w - 1.0 / 3.0).abs() < 1e-12));
    assert!(seqs[2].weights[2][..2].iter().all(|&w| (w - 0.5).abs() < 1e-12));
    // causal: without the mask the two "the" rows are identical; with it they differ. 15 of 36 hidden.
    let open = causal::compute(6, false);
    assert_eq!(open.weights[0], open.weights[4]);
    let closed = causal::compute(6, true);
    assert_ne!(closed.weights[0], closed.weights[4]);
    assert_eq!(closed.masked.iter().flatten().filter(|s| **s == f64::NEG_INFINITY).count(), 15);
}

/// X typed into the page: a typed cell replaces the seed's; the "xx" stage's first score is
/// then the typed row's squared length (hand arithmetic: X = [[1, 2], [0, 0.5]]:
/// (X Xᵀ)₀₀ = 1² + 2² = 5, (X Xᵀ)₀₁ = 1·0 + 2·0.5 = 1); cells outside n × d are kept out.
#[test]
fn typed_x_replaces_the_drawn_cells() {
    let typed = vec![vec![1.0, 2.0], vec![0.0, 0.5]];
    let s = self_attention::compute(Stage::Xx, 2, 2, 1, &typed, 2, false, false, false);
    assert!(s.typed);
    assert_eq!(s.x, typed);
    let scores = s.matrices.iter().find(|m| m.name == "X Xᵀ").unwrap();
    assert_eq!(scores.rows[0][..2], [5.0, 1.0]);
    // Growing n and d keeps the typed cells and draws the rest from the seed.
    let drawn = self_attention::input(3, 3, 1, &[]);
    let grown = self_attention::input(3, 3, 1, &typed);
    assert_eq!((grown[[0, 0]], grown[[0, 1]], grown[[1, 1]]), (1.0, 2.0, 0.5));
    assert_eq!((grown[[0, 2]], grown[[2, 2]]), (drawn[[0, 2]], drawn[[2, 2]]));
    // Shrinking keeps what fits.
    assert_eq!(self_attention::input(1, 1, 1, &typed)[[0, 0]], 1.0);
}

/// Growing n or d adds rows or columns to the drawn X and weights and keeps the rest: X at
/// (3, 4) is the top-left block of X at (5, 6), and the same for the fixed stage's logits,
/// seen through A = softmax(logits): at n = 2 versus n = 3 the first row's two logits are the
/// same, so the ratio A₀₀ / A₀₁ (= e^(l₀₀ − l₀₁)) is too.
#[test]
fn growing_n_or_d_keeps_the_drawn_cells() {
    let small = self_attention::input(3, 4, 1, &[]);
    let big = self_attention::input(5, 6, 1, &[]);
    assert_eq!(small, big.slice(ndarray::s![..3, ..4]));
    let a = |n| {
        let s = self_attention::compute(Stage::Fixed, n, 4, 1, &[], 2, false, false, false);
        s.matrices.iter().find(|m| m.name == "A (fixed)").unwrap().rows.clone()
    };
    let (a2, a3) = (a(2), a(3));
    assert!((a2[0][0] / a2[0][1] - a3[0][0] / a3[0][1]).abs() < 1e-12);
    // W_Q at d = 4 is the top-left block of W_Q at d = 6 drawn with the same seed, rescaled
    // from 1/√6 to 1/√4 (the entries are N(0, 1/d)).
    let w = |d: usize| {
        let s = self_attention::compute(Stage::Qkv, 3, d, 1, &[], 2, false, false, false);
        s.matrices.iter().find(|m| m.name == "W_Q").unwrap().rows.clone()
    };
    let (w4, w6) = (w(4), w(6));
    for i in 0..4 {
        for j in 0..4 {
            assert!((w4[i][j] - w6[i][j] * (6.0f64 / 4.0).sqrt()).abs() < 1e-12, "W_Q[{i}][{j}]");
        }
    }
}

/// The URL form of a typed matrix: read back as written, refused with a reason otherwise.
#[test]
fn cells_parse_and_refuse_with_reasons() {
    use attention_live::state::{format_cells, parse_cells};
    let m = vec![vec![1.0, -0.25], vec![3.5, 0.0]];
    assert_eq!(parse_cells(&format_cells(&m), 8, 8, 99.0).unwrap(), m);
    assert_eq!(parse_cells("", 8, 8, 99.0).unwrap(), Vec::<Vec<f64>>::new());
    for (raw, why) in [
        ("1,2;3", "row 2 has 1 cells, row 1 has 2"),
        ("1,x", "not a number"),
        ("1,200", "outside"),
        ("1,NaN", "outside"),
        ("1;2;3", "more than 2"),
    ] {
        let e = parse_cells(raw, 2, 2, 99.0).unwrap_err();
        assert!(e.contains(why), "{raw}: {e}");
    }
}

/// scoring.md's worked default: q = 1.5 (cos 40°, sin 40°) ≈ (1.15, 0.96); key penalties
/// −½(4 + 0.25) = −2.125 and −½(0.25 + 2.25) = −1.25. At the default d = 64 the raw weights
/// usually pile onto one or two keys (over 20 draws) while the scaled top weight stays well
/// under one half.
#[test]
fn scoring_worked_example_and_the_default_pile_up() {
    let g = gauss_dot::compute(40.0, 1.5, false);
    assert!((g.q[0] - 1.15).abs() < 0.005 && (g.q[1] - 0.96).abs() < 0.005, "{:?}", g.q);
    assert!((g.key_term[0] + 2.125).abs() < 1e-12 && (g.key_term[1] + 1.25).abs() < 1e-12);
    let (mut piled, mut tapered) = (0, 0);
    for seed in 1..=20 {
        let s = scaling::compute(64, 16, seed);
        piled += usize::from(s.w_raw[0] + s.w_raw[1] > 0.9);
        tapered += usize::from(s.w_scaled[0] < 0.5);
    }
    assert!(piled > 10 && tapered > 15, "piled {piled}, tapered {tapered} of 20");
}
