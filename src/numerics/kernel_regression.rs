//! Nadaraya–Watson kernel regression, written as attention pooling:
//!
//!   f(q) = Σ_i α(q, x_i) y_i,   α(q, x_i) = K(q − x_i) / Σ_j K(q − x_j)
//!        = softmax_i(log K(q − x_i))
//!
//! Queries q, keys x_i, values y_i. The kernel's logarithm is the attention score; where the
//! kernel is 0 the score is −∞ (masked).

use ndarray::{Array1, Array2, ArrayView1};

use super::rng::Rng;
use super::softmax::masked_softmax;

/// The query grid used for plots: 101 points on [0, 5].
pub const X_MAX: f64 = 5.0;
pub const GRID: usize = 101;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// K(d) = exp(−d² / (2σ²))
    Gaussian,
    /// K(d) = 1 if |d| ≤ σ, else 0
    Boxcar,
    /// K(d) = max(0, 1 − (d/σ)²)  (the usual 3/4 factor cancels in the normalisation)
    Epanechnikov,
    /// K(d) = 1
    Constant,
}

impl Kernel {
    pub const ALL: [Kernel; 4] = [Kernel::Gaussian, Kernel::Boxcar, Kernel::Epanechnikov, Kernel::Constant];

    pub fn id(self) -> &'static str {
        match self {
            Kernel::Gaussian => "gaussian",
            Kernel::Boxcar => "boxcar",
            Kernel::Epanechnikov => "epanechnikov",
            Kernel::Constant => "constant",
        }
    }

    pub fn from_id(id: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.id() == id)
    }

    /// K(d) itself.
    pub fn eval(self, d: f64, sigma: f64) -> f64 {
        match self {
            Kernel::Gaussian => (-d * d / (2.0 * sigma * sigma)).exp(),
            Kernel::Boxcar => {
                if d.abs() <= sigma {
                    1.0
                } else {
                    0.0
                }
            }
            Kernel::Epanechnikov => (1.0 - (d / sigma).powi(2)).max(0.0),
            Kernel::Constant => 1.0,
        }
    }

    /// log K(d): the attention score. −∞ where K = 0.
    /// For the Gaussian we never call exp and then log: −d²/(2σ²) stays finite even when
    /// exp of it would underflow to 0 (tiny σ), which is what keeps tiny widths usable.
    pub fn score(self, d: f64, sigma: f64) -> f64 {
        match self {
            Kernel::Gaussian => -d * d / (2.0 * sigma * sigma),
            _ => self.eval(d, sigma).ln(), // ln(0) = −∞: masked
        }
    }

    /// Whether the leave-one-out loss is differentiable in σ (so "fit σ" can work).
    pub fn fittable(self) -> bool {
        matches!(self, Kernel::Gaussian | Kernel::Epanechnikov)
    }
}

/// The true function of the demo: f(x) = 2 sin(x) + x.
pub fn truth(x: f64) -> f64 {
    2.0 * x.sin() + x
}

/// n training points, x ~ U[0, 5] sorted ascending, y = 2 sin(x) + x + ε with ε ~ N(0, 1).
pub fn sample(n: usize, seed: u32) -> (Array1<f64>, Array1<f64>) {
    let mut rng = Rng::new(seed as u64);
    let mut x: Vec<f64> = (0..n).map(|_| rng.uniform() * X_MAX).collect();
    x.sort_by(f64::total_cmp);
    let y: Vec<f64> = x.iter().map(|&xi| truth(xi) + rng.normal()).collect();
    (Array1::from(x), Array1::from(y))
}

/// The query grid: GRID evenly spaced points on [0, X_MAX].
pub fn query_grid() -> Array1<f64> {
    Array1::linspace(0.0, X_MAX, GRID)
}

/// Attention weights of each query over the keys.
pub struct Weights {
    /// (n_queries, n_keys); an undefined row is all zeros.
    pub w: Array2<f64>,
    /// false where every kernel value was 0 (0/0): no estimate exists at that query.
    pub defined: Vec<bool>,
}

/// α(q, x_i) for every query and key: row-wise masked softmax of log-kernel scores.
pub fn weights(queries: ArrayView1<f64>, keys: ArrayView1<f64>, kernel: Kernel, sigma: f64) -> Weights {
    let (nq, nk) = (queries.len(), keys.len());
    let mut w = Array2::zeros((nq, nk)); // (n_q, n_k)
    let mut defined = vec![false; nq];
    for (i, &q) in queries.iter().enumerate() {
        let scores: Array1<f64> = keys.mapv(|k| kernel.score(q - k, sigma)); // (n_k,)
        if let Some(row) = masked_softmax(scores.view()) {
            w.row_mut(i).assign(&row);
            defined[i] = true;
        }
    }
    Weights { w, defined }
}

/// f(q) = Σ_i α(q, x_i) y_i for every query; `None` where the weights are undefined.
pub fn estimate(weights: &Weights, values: ArrayView1<f64>) -> Vec<Option<f64>> {
    let f = weights.w.dot(&values); // (n_q, n_k) x (n_k,) -> (n_q,)
    f.iter().zip(&weights.defined).map(|(&v, &ok)| ok.then_some(v)).collect()
}

/// The leave-one-out squared error and its derivative with respect to s = log σ.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LooLoss {
    /// L = (1/n) Σ_i (y_i − f_{−i}(x_i))².
    pub loss: f64,
    /// dL/d(log σ). Zero for kernels whose loss is flat in σ.
    pub grad: f64,
    /// Points with at least one other point inside the kernel's support. The others (n − used)
    /// are predicted by the mean of the other targets, so that a tiny σ is not rewarded for
    /// leaving points out of the loss.
    pub used: usize,
}

/// Leave-one-out loss at width σ: each point is predicted from all the others.
/// Returns `None` if n < 2.
///
/// Derivative: with K_ij = K(x_i − x_j), f_i = Σ_j K_ij y_j / Σ_j K_ij (j ≠ i), and
/// K'_ij = dK_ij/ds for s = log σ:
///   Gaussian:      K'_ij = K_ij · d²/σ²
///   Epanechnikov:  K'_ij = 2 d²/σ² inside the support, 0 outside
///   df_i/ds = (Σ_j K'_ij y_j − f_i Σ_j K'_ij) / Σ_j K_ij
///   dL/ds = (2/n) Σ_i (f_i − y_i) df_i/ds
pub fn loo_loss(x: ArrayView1<f64>, y: ArrayView1<f64>, kernel: Kernel, sigma: f64) -> Option<LooLoss> {
    let n = x.len();
    if n < 2 {
        return None;
    }
    let y_sum = y.sum();
    let (mut loss, mut grad, mut used) = (0.0, 0.0, 0usize);
    for i in 0..n {
        // The Gaussian is evaluated relative to the nearest neighbour's score (max-subtract),
        // so that tiny σ does not underflow every K_ij to 0; the common factor cancels in f_i
        // and in df_i/ds.
        let shift = match kernel {
            Kernel::Gaussian => {
                (0..n).filter(|&j| j != i).map(|j| kernel.score(x[i] - x[j], sigma)).fold(f64::NEG_INFINITY, f64::max)
            }
            _ => 0.0,
        };
        let (mut z, mut num, mut dz, mut dnum) = (0.0, 0.0, 0.0, 0.0);
        for j in (0..n).filter(|&j| j != i) {
            let d = x[i] - x[j];
            let k = match kernel {
                Kernel::Gaussian => (kernel.score(d, sigma) - shift).exp(),
                _ => kernel.eval(d, sigma),
            };
            let dk = match kernel {
                Kernel::Gaussian => k * d * d / (sigma * sigma),
                Kernel::Epanechnikov if k > 0.0 => 2.0 * d * d / (sigma * sigma),
                _ => 0.0,
            };
            z += k;
            num += k * y[j];
            dz += dk;
            dnum += dk * y[j];
        }
        if z > 0.0 {
            let f = num / z;
            let df = (dnum - f * dz) / z;
            loss += (y[i] - f).powi(2);
            grad += 2.0 * (f - y[i]) * df;
            used += 1;
        } else {
            // Empty support: fall back to the mean of the other targets (no σ dependence).
            let f = (y_sum - y[i]) / (n - 1) as f64;
            loss += (y[i] - f).powi(2);
        }
    }
    Some(LooLoss { loss: loss / n as f64, grad: grad / n as f64, used })
}

/// Gradient descent on log σ, following the sign of dL/d(log σ) with a backtracking step size
/// (as in Rprop): a step that raises the loss is undone and the step halved; an accepted step
/// grows the next one by 1.2×. The sign is used because the loss's scale varies a lot with n,
/// the noise and the kernel, and a fixed learning rate would be wrong for most of them.
#[derive(Debug, Clone, Copy)]
pub struct SigmaFit {
    pub log_sigma: f64,
    pub lr: f64,
    pub current: LooLoss,
}

pub const LOG_SIGMA_MIN: f64 = -2.0 * std::f64::consts::LN_10; // ln 0.01
pub const LOG_SIGMA_MAX: f64 = std::f64::consts::LN_10; // ln 10

impl SigmaFit {
    pub fn start(x: ArrayView1<f64>, y: ArrayView1<f64>, kernel: Kernel, sigma: f64) -> Option<SigmaFit> {
        let current = loo_loss(x, y, kernel, sigma)?;
        Some(SigmaFit { log_sigma: sigma.ln(), lr: 0.5, current })
    }

    pub fn sigma(&self) -> f64 {
        self.log_sigma.exp()
    }

    /// One step. Returns false once converged (tiny gradient or step).
    pub fn step(&mut self, x: ArrayView1<f64>, y: ArrayView1<f64>, kernel: Kernel) -> bool {
        if self.current.grad.abs() < 1e-7 || self.lr < 1e-6 {
            return false;
        }
        let dir = -self.current.grad.signum();
        let trial = (self.log_sigma + dir * self.lr).clamp(LOG_SIGMA_MIN, LOG_SIGMA_MAX);
        match loo_loss(x, y, kernel, trial.exp()) {
            Some(next) if next.loss <= self.current.loss => {
                self.log_sigma = trial;
                self.current = next;
                self.lr *= 1.2;
            }
            _ => self.lr *= 0.5,
        }
        true
    }
}
