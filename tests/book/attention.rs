use attention_live::numerics::attention::*;
use attention_live::numerics::rng::Rng;
use ndarray::{arr1, arr2, Array2};

fn random(rows: usize, cols: usize, rng: &mut Rng) -> Array2<f64> {
    Array2::from_shape_simple_fn((rows, cols), || rng.normal())
}

#[test]
fn worked_example_scaled_and_unscaled() {
    // q = (2, 1, 0, 1), k₁ = (1, 0, 1, 1), k₂ = (0, 1, 2, 0):
    // q·k₁ = 2 + 0 + 0 + 1 = 3, q·k₂ = 0 + 1 + 0 + 0 = 1.
    // unscaled: softmax(3, 1) = (1, e⁻²) / (1 + e⁻²) = (0.8808, 0.1192)
    // scaled by √4 = 2: softmax(1.5, 0.5) = (1, e⁻¹) / (1 + e⁻¹) = (0.7311, 0.2689)
    let q = arr2(&[[2.0, 1.0, 0.0, 1.0]]);
    let k = arr2(&[[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 2.0, 0.0]]);
    let v = Array2::eye(2);
    let raw = attention(q.view(), k.view(), v.view(), None, MaskFill::NegInf, false);
    assert_eq!(raw.scores, arr2(&[[3.0, 1.0]]));
    assert!((raw.weights[[0, 0]] - 0.8808).abs() < 5e-5 && (raw.weights[[0, 1]] - 0.1192).abs() < 5e-5);
    let scaled = attention(q.view(), k.view(), v.view(), None, MaskFill::NegInf, true);
    assert_eq!(scaled.scaled, arr2(&[[1.5, 0.5]]));
    assert!((scaled.weights[[0, 0]] - 0.7311).abs() < 5e-5 && (scaled.weights[[0, 1]] - 0.2689).abs() < 5e-5);
    // with V = I the output rows are the weights themselves
    assert_eq!(scaled.output, scaled.weights);
}

#[test]
fn gaussian_score_expands_into_dot_product_terms() {
    // −½‖q − k‖² = qᵀk − ½‖k‖² − ½‖q‖²
    let mut rng = Rng::new(3);
    for _ in 0..100 {
        let q = arr1(&[rng.normal(), rng.normal(), rng.normal()]);
        let k = arr1(&[rng.normal(), rng.normal(), rng.normal()]);
        let lhs = -0.5 * (&q - &k).mapv(|x| x * x).sum();
        let rhs = q.dot(&k) - 0.5 * k.dot(&k) - 0.5 * q.dot(&q);
        assert!((lhs - rhs).abs() < 1e-12);
    }
}

#[test]
fn valid_length_masking_gives_exact_zeros_and_rows_summing_to_one() {
    let mut rng = Rng::new(1);
    let s = random(4, 4, &mut rng);
    for valid in 1..=4 {
        let m = valid_length_mask(4, 4, valid);
        for fill in [MaskFill::NegInf, MaskFill::Value(-1e6)] {
            let (_, w, defined) = masked_softmax_rows(s.view(), m.view(), fill);
            assert!(defined.iter().all(|&d| d));
            for row in w.rows() {
                assert!((row.sum() - 1.0).abs() < 1e-12);
                assert!(row.iter().skip(valid).all(|&x| x == 0.0), "padding weight must be exactly 0: {row}");
            }
        }
    }
}

#[test]
fn fully_masked_rows_differ_between_neg_inf_and_a_large_negative() {
    let s = arr2(&[[0.3, -1.2, 2.0]]);
    let m = valid_length_mask(1, 3, 0);
    // −∞: 0/0, no softmax; the row is reported undefined (drawn as a gap, never NaN).
    let (_, w, defined) = masked_softmax_rows(s.view(), m.view(), MaskFill::NegInf);
    assert_eq!(defined, vec![false]);
    assert!(w.iter().all(|&x| x == 0.0));
    // −10⁶: every entry is the same −10⁶, so the softmax is uniform over the padding.
    let (_, w, defined) = masked_softmax_rows(s.view(), m.view(), MaskFill::Value(-1e6));
    assert_eq!(defined, vec![true]);
    assert!(w.iter().all(|&x| (x - 1.0 / 3.0).abs() < 1e-12));
}

#[test]
fn causal_mask_hides_the_future() {
    let mut rng = Rng::new(2);
    let x = random(5, 4, &mut rng);
    let mask = causal_mask(5);
    let a = attention(x.view(), x.view(), x.view(), Some(mask.view()), MaskFill::NegInf, true);
    for i in 0..5 {
        for j in 0..5 {
            if j > i {
                assert_eq!(a.weights[[i, j]], 0.0);
            }
        }
        assert!((a.weights.row(i).sum() - 1.0).abs() < 1e-12);
    }
    assert_eq!(a.weights[[0, 0]], 1.0, "the first token can only see itself");
}

#[test]
fn self_attention_is_permutation_equivariant() {
    let mut rng = Rng::new(5);
    let (x, wq, wk, wv) =
        (random(6, 4, &mut rng), random(4, 4, &mut rng), random(4, 4, &mut rng), random(4, 4, &mut rng));
    let perm = [3, 0, 5, 1, 4, 2];
    let px = Array2::from_shape_fn(x.dim(), |(i, j)| x[[perm[i], j]]);
    let run = |x: &Array2<f64>| {
        attention(x.dot(&wq).view(), x.dot(&wk).view(), x.dot(&wv).view(), None, MaskFill::NegInf, true).output
    };
    let (y, py) = (run(&x), run(&px));
    for i in 0..6 {
        for j in 0..4 {
            assert!((py[[i, j]] - y[[perm[i], j]]).abs() < 1e-6);
        }
    }
}

#[test]
fn one_head_equals_single_head_attention() {
    let mut rng = Rng::new(8);
    let d = 8;
    let (x, wq, wk, wv, wo) = (
        random(5, d, &mut rng),
        random(d, d, &mut rng),
        random(d, d, &mut rng),
        random(d, d, &mut rng),
        random(d, d, &mut rng),
    );
    let mh = multi_head(x.view(), &wq, &wk, &wv, &wo, 1, false);
    let single = attention(x.dot(&wq).view(), x.dot(&wk).view(), x.dot(&wv).view(), None, MaskFill::NegInf, true);
    let want = single.output.dot(&wo);
    assert!((&mh.output - &want).iter().all(|e| e.abs() < 1e-12));
    assert_eq!(mh.head_weights[0], single.weights);
    // With h heads, each head sees d/h dimensions; the total cost stays 2·n²·d_model.
    for h in [1, 2, 4, 8] {
        assert_eq!((0..h).map(|_| attention_flops_per_head(5, d / h)).sum::<usize>(), 2 * 5 * 5 * d);
        assert_eq!(multi_head(x.view(), &wq, &wk, &wv, &wo, h, false).head_weights.len(), h);
    }
}

#[test]
fn additive_and_general_scores_by_hand() {
    // q = (1), k = (1, 0); W_q = [[1], [0]], W_k = [[0, 1], [1, 0]], w_v = (1, 1):
    // W_q q + W_k k = (1, 0) + (0, 1) = (1, 1); tanh -> (0.761594, 0.761594); sum 1.523188
    let s = additive_score(
        &arr1(&[1.0]),
        &arr1(&[1.0, 0.0]),
        &arr2(&[[1.0], [0.0]]),
        &arr2(&[[0.0, 1.0], [1.0, 0.0]]),
        &arr1(&[1.0, 1.0]),
    );
    assert!((s - 2.0 * 1f64.tanh()).abs() < 1e-12 && (s - 1.523188).abs() < 1e-6);
    // q = (1, 2), W = [[1, 0, 1], [0, 1, 0]], k = (1, 1, 1): W k = (2, 1); q · (2, 1) = 4
    assert_eq!(
        general_score(&arr1(&[1.0, 2.0]), &arr1(&[1.0, 1.0, 1.0]), &arr2(&[[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])),
        4.0
    );
}
