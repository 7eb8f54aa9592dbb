//! The book's number format: one style for ticks, readouts and tables.

use attention_live::numerics::format::{num, num_sig, tick};

#[test]
fn whole_numbers_have_no_decimal_point() {
    // Integer axes read "2 … 12", not "2.0 … 12.0".
    for (x, s) in [(2.0, "2"), (12.0, "12"), (20.0, "20"), (-3.0, "−3"), (0.0, "0"), (250000.0, "250000")] {
        assert_eq!(num(x), s, "{x}");
    }
}

#[test]
fn fractions_keep_four_significant_digits_trimmed() {
    for (x, s) in
        [(0.25, "0.25"), (0.1 + 0.2, "0.3"), (8.8, "8.8"), (0.731_058_578, "0.7311"), (-1.5, "−1.5"), (9.99996, "10")]
    {
        assert_eq!(num(x), s, "{x}");
    }
    assert_eq!(num_sig(std::f64::consts::PI, 2), "3.1");
}

#[test]
fn tiny_and_huge_magnitudes_use_powers_of_ten() {
    // Never "8.8e0" or "2.9e-17": the first is 8.8, the second reads as a power.
    assert_eq!(num(2.9e-17), "2.9 × 10⁻¹⁷");
    assert_eq!(num(-4.25e-5), "−4.25 × 10⁻⁵");
    assert_eq!(num(1.0e7), "1 × 10⁷");
    assert_eq!(num(9.99996e-9), "1 × 10⁻⁸", "rounding carries into the exponent");
    assert_eq!(num(2.5e-310), "2.5 × 10⁻³¹⁰", "a subnormal");
    assert_eq!(num(f64::NAN), "undefined");
    assert_eq!(num(f64::NEG_INFINITY), "−∞");
    // Axis ticks: rounding noise around zero is zero.
    assert_eq!(tick(2.220446049250313e-16), "0");
    assert_eq!(tick(0.5), "0.5");
}
