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
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    VIRIDIS_256[(t * 255.0).round() as usize]
}

/// `viridis_exact` at t = i / 255: heatmaps colour tens of thousands of cells per frame, and a
/// table lookup costs a fraction of the interpolation (256 levels are more than the eye tells
/// apart, and more than 8-bit colour channels hold between neighbouring anchors).
static VIRIDIS_256: std::sync::LazyLock<[[u8; 3]; 256]> = std::sync::LazyLock::new(|| std::array::from_fn(|i| viridis_exact(i as f64 / 255.0)));

/// The interpolated colour of t ∈ [0, 1] (clamped).
pub fn viridis_exact(t: f64) -> [u8; 3] {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let i = ANCHORS.iter().position(|(p, _)| *p >= t).unwrap_or(4).max(1);
    let (p0, c0) = ANCHORS[i - 1];
    let (p1, c1) = ANCHORS[i];
    let u = (t - p0) / (p1 - p0);
    [0, 1, 2].map(|k| (c0[k] + u * (c1[k] - c0[k])).round() as u8)
}
