//! How low-rank is an attention matrix? The singular value decomposition (one-sided Jacobi),
//! the error of the best rank-k approximation (Eckart–Young), and the Linformer form, which
//! attends over k projected keys and values: softmax(Q (E K)ᵀ/√d) (F V) with E, F of shape (k, n).

use ndarray::{Array1, Array2, ArrayView2, Axis};

/// A = U diag(σ) Vᵀ with σ sorted from largest to smallest: U (m, r), σ (r), V (n, r), r = n.
pub struct Svd {
    pub u: Array2<f64>,
    pub sigma: Array1<f64>,
    pub v: Array2<f64>,
}

/// One-sided Jacobi (Hestenes): rotate pairs of columns of A until all are orthogonal; the
/// column norms are then the singular values. Simple and accurate for the ≤ 128 × 128
/// matrices of the demos. Needs m ≥ n (attention matrices are square).
pub fn svd(a: ArrayView2<f64>) -> Svd {
    let (m, n) = a.dim();
    let mut u = a.to_owned();
    let mut v = Array2::<f64>::eye(n);
    for _sweep in 0..60 {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (up, uq) = (u.column(p), u.column(q));
                let (alpha, beta, gamma) = (up.dot(&up), uq.dot(&uq), up.dot(&uq));
                if gamma.abs() <= 1e-15 * (alpha * beta).sqrt() || gamma == 0.0 {
                    continue;
                }
                rotated = true;
                // The rotation that makes columns p and q orthogonal (the smaller root of
                // t² + 2ζt − 1 = 0, for stability).
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for mat in [&mut u, &mut v] {
                    for r in 0..mat.nrows() {
                        let (x, y) = (mat[[r, p]], mat[[r, q]]);
                        mat[[r, p]] = c * x - s * y;
                        mat[[r, q]] = s * x + c * y;
                    }
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let norms: Vec<f64> = u.columns().into_iter().map(|c| c.dot(&c).sqrt()).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| norms[j].total_cmp(&norms[i]));
    let sigma = Array1::from_iter(order.iter().map(|&i| norms[i]));
    let u = Array2::from_shape_fn(
        (m, n),
        |(r, k)| if norms[order[k]] > 0.0 { u[[r, order[k]]] / norms[order[k]] } else { 0.0 },
    );
    let v = v.select(Axis(1), &order);
    Svd { u, sigma, v }
}

/// ‖A − A_k‖_F / ‖A‖_F for k = 0 ..= r: by Eckart–Young the best rank-k approximation keeps
/// the k largest singular values, and its error is √(Σ_{i>k} σᵢ²). Non-increasing in k.
pub fn truncation_errors(sigma: &[f64]) -> Vec<f64> {
    let total: f64 = sigma.iter().map(|s| s * s).sum();
    let mut tail = total;
    let mut out = vec![1.0];
    for s in sigma {
        tail = (tail - s * s).max(0.0);
        out.push(if total > 0.0 { (tail / total).sqrt() } else { 0.0 });
    }
    out
}

/// ‖(P − P_k) V‖_F / ‖P V‖_F for k = 0 ..= r: the error in the attention *output* when P is
/// replaced by its best rank-k approximation. It has Linformer's shape: weights over k
/// columns (P V_k, n × k) times k projected values (F V with F = V_kᵀ, k × d).
/// Non-increasing in k: each step removes a term σᵢ² ‖vᵢᵀ V‖² ≥ 0 from the squared error.
/// `s` is P's SVD (`svd(p)`), which callers need for the singular values anyway.
pub fn output_errors(p: ArrayView2<f64>, s: &Svd, values: ArrayView2<f64>) -> Vec<f64> {
    // (n, n) x (n, d) -> (n, d)
    let exact = p.dot(&values);
    let norm = exact.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut residual = exact;
    let mut out = vec![if norm > 0.0 { 1.0 } else { 0.0 }];
    for i in 0..s.sigma.len() {
        // Remove σᵢ uᵢ (vᵢᵀ V): (n, 1) x (1, d)
        let vt_v = s.v.column(i).dot(&values);
        for (mut row, &ui) in residual.rows_mut().into_iter().zip(s.u.column(i)) {
            row.scaled_add(-s.sigma[i] * ui, &vt_v);
        }
        let err = residual.iter().map(|x| x * x).sum::<f64>().sqrt();
        out.push(if norm > 0.0 { err / norm } else { 0.0 });
    }
    out
}

/// softmax(Q Kᵀ/√d) V without a mask, the all-pairs attention of an encoder: (weights, output).
/// (`numerics::attention::attention`, which subtracts each row's maximum before exp.)
pub fn full_attention(q: ArrayView2<f64>, k: ArrayView2<f64>, v: ArrayView2<f64>) -> (Array2<f64>, Array2<f64>) {
    let a = super::attention::attention(q, k, v, None, super::attention::MaskFill::NegInf, true);
    (a.weights, a.output)
}

/// The (k, n) projection that averages k contiguous segments of the n positions (segment
/// lengths differ by at most one): an untrained E = F. At k = n it is the identity.
pub fn segment_means(k: usize, n: usize) -> Array2<f64> {
    let k = k.clamp(1, n.max(1));
    let mut e = Array2::zeros((k, n));
    for r in 0..k {
        let (a, b) = (r * n / k, ((r + 1) * n / k).max(r * n / k + 1));
        for j in a..b.min(n) {
            e[[r, j]] = 1.0 / (b - a) as f64;
        }
    }
    e
}

/// The Linformer output softmax(Q (E K)ᵀ/√d) (F V) with E = F = `proj` (k, n): attention over
/// k projected keys and values. (n, d) x (d, k) -> (n, k) weights; (n, k) x (k, d) -> (n, d).
pub fn linformer(q: ArrayView2<f64>, k: ArrayView2<f64>, v: ArrayView2<f64>, proj: ArrayView2<f64>) -> Array2<f64> {
    // (k, n) x (n, d) -> (k, d), for keys and for values
    let (ek, fv) = (proj.dot(&k), proj.dot(&v));
    full_attention(q, ek.view(), fv.view()).1
}

/// ‖linformer − exact‖_F / ‖exact‖_F for k = 1 ..= n with segment-mean projections.
pub fn linformer_errors(q: ArrayView2<f64>, k: ArrayView2<f64>, v: ArrayView2<f64>) -> Vec<f64> {
    let n = k.nrows();
    let exact = full_attention(q, k, v).1;
    let norm = exact.iter().map(|x| x * x).sum::<f64>().sqrt().max(f64::MIN_POSITIVE);
    (1..=n)
        .map(|r| {
            let approx = linformer(q, k, v, segment_means(r, n).view());
            (&approx - &exact).iter().map(|x| x * x).sum::<f64>().sqrt() / norm
        })
        .collect()
}
