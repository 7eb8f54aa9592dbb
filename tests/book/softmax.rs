use attention_live::numerics::softmax::{masked_softmax, softmax};
use ndarray::arr1;

#[test]
fn softmax_matches_hand_values() {
    // softmax(0, ln 3) = (1, 3) / 4 = (0.25, 0.75)
    let w = softmax(arr1(&[0.0, 3f64.ln()]).view());
    assert!((w[0] - 0.25).abs() < 1e-12 && (w[1] - 0.75).abs() < 1e-12, "{w}");
}

#[test]
fn max_subtract_prevents_overflow() {
    // exp(1000) overflows f64; softmax(1000, 1000) is still (0.5, 0.5) because only
    // differences matter: softmax(s) = softmax(s − max s).
    let w = softmax(arr1(&[1000.0, 1000.0]).view());
    assert_eq!(w.to_vec(), vec![0.5, 0.5]);
    // and tiny scores cannot underflow to 0/0: exp(−1e6) = 0, but after the shift the largest is exp(0).
    let w = softmax(arr1(&[-1e6, -1e6 - 1.0]).view());
    assert!((w[0] - 1.0 / (1.0 + (-1f64).exp())).abs() < 1e-12);
}

#[test]
fn masked_positions_are_exactly_zero_and_rows_sum_to_one() {
    let ninf = f64::NEG_INFINITY;
    let w = masked_softmax(arr1(&[1.0, ninf, 2.0, ninf]).view()).unwrap();
    assert_eq!(w[1], 0.0);
    assert_eq!(w[3], 0.0);
    assert!((w.sum() - 1.0).abs() < 1e-15);
    // e / (e + e²) = 1 / (1 + e)
    assert!((w[0] - 1.0 / (1.0 + std::f64::consts::E)).abs() < 1e-12);
}

#[test]
fn fully_masked_row_is_none_not_nan() {
    assert!(masked_softmax(arr1(&[f64::NEG_INFINITY; 3]).view()).is_none());
    assert!(masked_softmax(arr1(&[0.0, f64::NAN]).view()).is_none());
    assert!(masked_softmax(arr1::<f64>(&[]).view()).is_none());
}

#[test]
fn infinite_scores_split_the_weight() {
    let w = masked_softmax(arr1(&[f64::INFINITY, 0.0, f64::INFINITY]).view()).unwrap();
    assert_eq!(w.to_vec(), vec![0.5, 0.0, 0.5]);
}
