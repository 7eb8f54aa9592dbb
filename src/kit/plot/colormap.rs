//! The viridis colour map (perceptually uniform, readable in grey and by most colour-blind
//! readers), by linear interpolation between five of its published anchor colours.

const ANCHORS: [(f64, [f64; 3]); 5] = [
    (0.0, [68.0, 1.0, 84.0]),
    (0.25, [59.0, 82.0, 139.0]),
    (0.5, [33.0, 145.0, 140.0]),
    (0.75, [94.0, 201.0, 98.0]),
    (1.0, [253.0, 231.0, 37.0]),
];

/// The colour of t ∈ [0, 1] (clamped).
pub fn viridis(t: f64) -> [u8; 3] {
    let [r, g, b, _] = viridis_table()[level_index(t * 255.0)];
    [r, g, b]
}

/// `viridis_exact` at t = i / 255, opaque RGBA: heatmaps colour tens of thousands of cells per
/// frame, and a table lookup costs a fraction of the interpolation (256 levels are more than the
/// eye tells apart, and more than 8-bit colour channels hold between neighbouring anchors).
/// Loops fetch the table once and index it with `level_index`.
pub fn viridis_table() -> &'static [[u8; 4]; 256] {
    static TABLE: std::sync::LazyLock<[[u8; 4]; 256]> = std::sync::LazyLock::new(|| {
        std::array::from_fn(|i| {
            let [r, g, b] = viridis_exact(i as f64 / 255.0);
            [r, g, b, 255]
        })
    });
    &TABLE
}

/// The table index of a level on the 0..=255 scale: rounded to nearest and clamped; NaN and ±∞
/// give 0. (Adding ½ and truncating rounds a non-negative number without `f64::round`, which
/// WebAssembly has no instruction for: it is a library call per cell.)
pub fn level_index(level: f64) -> usize {
    if level.is_finite() && level > 0.0 {
        (level + 0.5).min(255.0) as usize
    } else {
        0
    }
}

/// The interpolated colour of t ∈ [0, 1] (clamped).
pub fn viridis_exact(t: f64) -> [u8; 3] {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let i = ANCHORS.iter().position(|(p, _)| *p >= t).unwrap_or(4).max(1);
    let (p0, c0) = ANCHORS[i - 1];
    let (p1, c1) = ANCHORS[i];
    let u = (t - p0) / (p1 - p0);
    [0, 1, 2].map(|k| (c0[k] + u * (c1[k] - c0[k])).round() as u8)
}
