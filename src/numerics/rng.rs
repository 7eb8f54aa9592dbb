//! A small seeded random number generator (SplitMix64), so a seed in a link reproduces the
//! same data in every browser. Not for cryptography.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The state: `Rng::new(state)` goes on with the same numbers.
    pub fn state(&self) -> u64 {
        self.0
    }

    pub fn next_u64(&mut self) -> u64 {
        // SplitMix64 (Steele, Lea, Flood 2014): a Weyl sequence through a mixing function.
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform on [0, 1), from the top 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal N(0, 1) by the Box–Muller transform.
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // in (0, 1]: ln(u1) is finite
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// A (rows, cols) matrix of independent N(0, scale²) entries from `seed`.
pub fn normal_matrix(rows: usize, cols: usize, seed: u64, scale: f64) -> ndarray::Array2<f64> {
    let mut rng = Rng::new(seed);
    ndarray::Array2::from_shape_simple_fn((rows, cols), || scale * rng.normal())
}

/// A seed derived from a word (FNV-1a), so the same word always gets the same embedding.
pub fn word_seed(word: &str) -> u64 {
    word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}
