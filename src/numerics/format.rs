//! The book's one number format, for tick labels, readouts and tables: whole numbers without a
//! decimal point ("20", not "20.0"), others to a few significant digits with trailing zeros
//! trimmed ("0.25"), and very small or very large magnitudes as "2.9 × 10⁻¹⁷" (never "8.8e0").

/// `x` to `sig` significant digits in the book's format.
pub fn num_sig(x: f64, sig: u32) -> String {
    if x.is_nan() {
        return "undefined".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "∞" } else { "−∞" }.into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let sig = sig.clamp(1, 15) as usize;
    // Rust's scientific form rounds to `sig` significant digits at any magnitude, subnormals
    // included ("2.900e-17"): the mantissa and exponent are read back from it.
    let sci = format!("{:.*e}", sig - 1, x);
    let Some((mantissa, exp)) = sci.split_once('e') else { return sci };
    let (exp, r): (i32, f64) = (exp.parse().unwrap_or(0), sci.parse().unwrap_or(x));
    if (1e-3..1e6).contains(&r.abs()) {
        if r == r.trunc() {
            return minus(format!("{}", r as i64));
        }
        let decimals = (sig as i32 - 1 - exp).max(0) as usize;
        let s = format!("{r:.decimals$}");
        return minus(s.trim_end_matches('0').trim_end_matches('.').to_string());
    }
    let m = if mantissa.contains('.') { mantissa.trim_end_matches('0').trim_end_matches('.') } else { mantissa };
    minus(format!("{m} × 10{}", superscript(exp)))
}

/// `x` to 4 significant digits: the default for readouts and axes.
pub fn num(x: f64) -> String {
    num_sig(x, 4)
}

/// A tick label: like `num`, with values within rounding noise of zero (an axis from −1 to 1
/// steps through 2.2 × 10⁻¹⁶) shown as 0.
pub fn tick(x: f64) -> String {
    if x.abs() < 1e-12 {
        "0".into()
    } else {
        num(x)
    }
}

/// A whole number with its thousands grouped: 27648 → "27,648".
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn minus(s: String) -> String {
    match s.strip_prefix('-') {
        Some(rest) => format!("−{rest}"),
        None => s,
    }
}

fn superscript(e: i32) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut s = String::new();
    if e < 0 {
        s.push('⁻');
    }
    for c in e.unsigned_abs().to_string().chars() {
        s.push(DIGITS[c as usize - '0' as usize]);
    }
    s
}

/// A number written with Rust's own formatting (`{:.3}` and the like), its minus sign the
/// typographic one (U+2212) like every other number in the book, and a value that rounds to zero
/// without a sign ("0.000", not "−0.000"): `format!("{:.3}", Signed(x))`.
pub struct Signed<T>(pub T);

impl<T: std::fmt::Display> std::fmt::Display for Signed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match (f.precision(), f.sign_plus()) {
            (Some(p), true) => format!("{:+.*}", p, self.0),
            (Some(p), false) => format!("{:.*}", p, self.0),
            (None, true) => format!("{:+}", self.0),
            (None, false) => self.0.to_string(),
        };
        let zero = s.trim_start_matches(['-', '+']).chars().all(|c| c == '0' || c == '.');
        match s.strip_prefix('-') {
            Some(rest) if zero => f.write_str(rest),
            Some(rest) => write!(f, "−{rest}"),
            None => f.write_str(&s),
        }
    }
}
