//! The CPU kernels of GPT-2's forward pass, in f32. Each is the CPU twin of a GPU kernel.

use ndarray::{s, Array2, ArrayView2, Axis};

use super::weights::{LayerNorm, Linear};

/// y = x W + b: (T, in) x (in, out) -> (T, out).
///
/// For a few rows (decoding with the KV cache has T = 1) a general matrix product would first
/// copy ("pack") all of W, doubling the memory traffic of a step that is bound by it. Instead
/// each output row is accumulated as b + Σᵢ xᵢ W[i, :], reading W once, row by row.
pub fn linear(x: ArrayView2<f32>, lin: &Linear) -> Array2<f32> {
    if x.nrows() > 4 || cfg!(target_arch = "wasm32") {
        return matmul(x, lin.weight.view()) + &lin.bias;
    }
    let mut y = Array2::zeros((x.nrows(), lin.weight.ncols()));
    for (xr, mut yr) in x.rows().into_iter().zip(y.rows_mut()) {
        yr.assign(&lin.bias);
        for (&xi, wr) in xr.iter().zip(lin.weight.rows()) {
            yr.scaled_add(xi, &wr);
        }
    }
    y
}

/// (T, k) x (k, n) -> (T, n). Natively this is ndarray's (matrixmultiply's) kernel. In the
/// browser that kernel runs without its hand-written SIMD and was measured 7× slower than
/// natively, so wasm uses `matmul_blocked` compiled with WebAssembly SIMD (see there).
pub fn matmul(x: ArrayView2<f32>, w: ArrayView2<f32>) -> Array2<f32> {
    #[cfg(target_arch = "wasm32")]
    return matmul_blocked(x, w);
    #[cfg(not(target_arch = "wasm32"))]
    x.dot(&w)
}

/// Rows of x in blocks of 8, columns of W in chunks of 512: for each block and chunk,
/// y[i, j0..j1] += x[i, k] · W[k, j0..j1] over k. The inner loop is a contiguous multiply-add
/// the compiler vectorises; W is read once per block of 8 rows, and the 8 × 512 block of y
/// stays in the L1 cache.
pub fn matmul_blocked(x: ArrayView2<f32>, w: ArrayView2<f32>) -> Array2<f32> {
    let (t, k, n) = (x.nrows(), x.ncols(), w.ncols());
    let w = w.as_standard_layout();
    let x = x.as_standard_layout();
    let mut y = vec![0.0f32; t * n];
    #[allow(unused_unsafe)]
    // SAFETY (wasm): a module using SIMD128 fails validation where SIMD is missing, so the
    // function can never run on a machine without it.
    unsafe {
        blocked_kernel(x.as_slice().expect("standard layout"), w.as_slice().expect("standard layout"), &mut y, t, k, n)
    };
    Array2::from_shape_vec((t, n), y).expect("t × n values")
}

/// The loop nest of `matmul_blocked`. On wasm it is compiled with SIMD128 (only the worker's
/// kernels are, so the book's main module still loads in browsers without SIMD).
///
/// A 6 × 8 micro-kernel: 6 rows of y and 8 columns (two 4-lane vectors) are accumulated in 12
/// registers over all of k (12 accumulators, 2 weight vectors and 1 broadcast fit the 16 vector
/// registers of x86-64), then stored once. W is packed into contiguous (k, 8) column panels and
/// x into (k, 6) row panels so every load in the inner loop is sequential. The rows are padded
/// with zeros to a multiple of 6 (a leftover row on the one-row path would read all of W once
/// more); a single row (decoding) takes the one-row `axpy` path, which reads W once anyway.
#[cfg_attr(target_arch = "wasm32", target_feature(enable = "simd128"))]
fn blocked_kernel(x: &[f32], w: &[f32], y: &mut [f32], t: usize, k: usize, n: usize) {
    use f4::F4;
    const R: usize = 6;
    let (tr, n8) = (if t > 1 { t.div_ceil(R) * R } else { 0 }, n / 8 * 8);
    if tr > 0 {
        // x packed per block of R rows, zero rows past t: xp[b][kk * R + r] = x[b * R + r, kk].
        let mut xp = vec![0.0f32; tr * k];
        for b in 0..tr / R {
            for kk in 0..k {
                for r in (0..R).filter(|r| b * R + r < t) {
                    xp[b * R * k + kk * R + r] = x[(b * R + r) * k + kk];
                }
            }
        }
        let mut panel = vec![0.0f32; k * 8];
        for j0 in (0..n8).step_by(8) {
            // Pack W[:, j0 .. j0 + 8] into a contiguous (k, 8) panel, read by every block of rows.
            for kk in 0..k {
                panel[kk * 8..kk * 8 + 8].copy_from_slice(&w[kk * n + j0..kk * n + j0 + 8]);
            }
            for b in 0..tr / R {
                let xb = &xp[b * R * k..(b + 1) * R * k];
                // Twelve named accumulators, row r and columns j0 + 4c in a{r}{c}, written out
                // rather than looped: at opt-level "z" LLVM does not unroll loops, and an array
                // indexed in a loop would live in memory instead of registers.
                let z = F4::zero();
                let (mut a00, mut a01, mut a10, mut a11, mut a20, mut a21) = (z, z, z, z, z, z);
                let (mut a30, mut a31, mut a40, mut a41, mut a50, mut a51) = (z, z, z, z, z, z);
                let (pp, xp) = (panel.as_ptr(), xb.as_ptr());
                for kk in 0..k {
                    // SAFETY: kk * 8 + 8 ≤ k * 8 (the panel) and kk * R + R ≤ k * R (the block).
                    unsafe {
                        let (w0, w1) = (F4::load(pp.add(kk * 8)), F4::load(pp.add(kk * 8 + 4)));
                        let x6 = xp.add(kk * R);
                        let a = F4::load_splat(x6);
                        (a00, a01) = (a00.mul_add(a, w0), a01.mul_add(a, w1));
                        let a = F4::load_splat(x6.add(1));
                        (a10, a11) = (a10.mul_add(a, w0), a11.mul_add(a, w1));
                        let a = F4::load_splat(x6.add(2));
                        (a20, a21) = (a20.mul_add(a, w0), a21.mul_add(a, w1));
                        let a = F4::load_splat(x6.add(3));
                        (a30, a31) = (a30.mul_add(a, w0), a31.mul_add(a, w1));
                        let a = F4::load_splat(x6.add(4));
                        (a40, a41) = (a40.mul_add(a, w0), a41.mul_add(a, w1));
                        let a = F4::load_splat(x6.add(5));
                        (a50, a51) = (a50.mul_add(a, w0), a51.mul_add(a, w1));
                    }
                }
                let rows = [(a00, a01), (a10, a11), (a20, a21), (a30, a31), (a40, a41), (a50, a51)];
                for (r, (c0, c1)) in rows.into_iter().enumerate().filter(|(r, _)| b * R + r < t) {
                    // SAFETY: j0 + 8 ≤ n8 ≤ n: both stores stay inside row b·R + r < t of y.
                    unsafe {
                        c0.store(y.as_mut_ptr().add((b * R + r) * n + j0));
                        c1.store(y.as_mut_ptr().add((b * R + r) * n + j0 + 4));
                    }
                }
            }
        }
        // The last n − n8 columns of these rows.
        for i in 0..t {
            for j in n8..n {
                y[i * n + j] = (0..k).map(|kk| x[i * k + kk] * w[kk * n + j]).sum();
            }
        }
    }
    // A single row (or none): y = Σ_k x[k] W[k, :].
    if tr == 0 {
        for i in 0..t {
            for kk in 0..k {
                axpy(x[i * k + kk], &w[kk * n..(kk + 1) * n], &mut y[i * n..(i + 1) * n]);
            }
        }
    }
}

/// Four f32 lanes: a WebAssembly SIMD vector in the browser, a plain array natively (where
/// only the tests run this code, to check it).
mod f4 {
    #[cfg(target_arch = "wasm32")]
    use core::arch::wasm32::{f32x4_add, f32x4_mul, f32x4_splat, v128, v128_load, v128_load32_splat, v128_store};

    #[derive(Clone, Copy)]
    #[cfg(target_arch = "wasm32")]
    pub struct F4(v128);
    #[derive(Clone, Copy)]
    #[cfg(not(target_arch = "wasm32"))]
    pub struct F4([f32; 4]);

    #[cfg(target_arch = "wasm32")]
    impl F4 {
        #[inline]
        #[target_feature(enable = "simd128")]
        pub fn zero() -> F4 {
            F4(f32x4_splat(0.0))
        }
        /// # Safety: `p .. p + 4` must be readable.
        #[inline]
        #[target_feature(enable = "simd128")]
        pub unsafe fn load(p: *const f32) -> F4 {
            F4(unsafe { v128_load(p as *const v128) })
        }
        /// # Safety: `p` must be readable. One load that fills all four lanes.
        #[inline]
        #[target_feature(enable = "simd128")]
        pub unsafe fn load_splat(p: *const f32) -> F4 {
            F4(unsafe { v128_load32_splat(p as *const u32) })
        }
        /// self + a · b
        #[inline]
        #[target_feature(enable = "simd128")]
        pub fn mul_add(self, a: F4, b: F4) -> F4 {
            F4(f32x4_add(self.0, f32x4_mul(a.0, b.0)))
        }
        /// # Safety: `p .. p + 4` must be writable.
        #[inline]
        #[target_feature(enable = "simd128")]
        pub unsafe fn store(self, p: *mut f32) {
            unsafe { v128_store(p as *mut v128, self.0) }
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    impl F4 {
        pub fn zero() -> F4 {
            F4([0.0; 4])
        }
        /// # Safety: `p .. p + 4` must be readable.
        pub unsafe fn load(p: *const f32) -> F4 {
            F4(unsafe { [*p, *p.add(1), *p.add(2), *p.add(3)] })
        }
        /// # Safety: `p` must be readable.
        pub unsafe fn load_splat(p: *const f32) -> F4 {
            F4([unsafe { *p }; 4])
        }
        pub fn mul_add(self, a: F4, b: F4) -> F4 {
            F4(std::array::from_fn(|l| self.0[l] + a.0[l] * b.0[l]))
        }
        /// # Safety: `p .. p + 4` must be writable.
        pub unsafe fn store(self, p: *mut f32) {
            for (l, v) in self.0.iter().enumerate() {
                unsafe { *p.add(l) = *v };
            }
        }
    }
}

/// y += a · x. With SIMD128, four lanes at a time (explicitly: the release build optimises
/// for size, which turns the compiler's own vectorisation off).
#[cfg(target_arch = "wasm32")]
#[target_feature(enable = "simd128")]
fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    use core::arch::wasm32::{f32x4_add, f32x4_mul, f32x4_splat, v128_load, v128_store, v128};
    let n = y.len().min(x.len());
    let n4 = n / 4 * 4;
    let av = f32x4_splat(a);
    for i in (0..n4).step_by(4) {
        // SAFETY: i + 4 ≤ n4 ≤ the length of both slices; v128 loads need no alignment.
        unsafe {
            let xv = v128_load(x.as_ptr().add(i) as *const v128);
            let yv = v128_load(y.as_ptr().add(i) as *const v128);
            v128_store(y.as_mut_ptr().add(i) as *mut v128, f32x4_add(yv, f32x4_mul(av, xv)));
        }
    }
    for i in n4..n {
        y[i] += a * x[i];
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    for (yv, &xv) in y.iter_mut().zip(x) {
        *yv += a * xv;
    }
}

/// x · y, four lanes at a time with SIMD128.
#[cfg(target_arch = "wasm32")]
#[target_feature(enable = "simd128")]
fn dot(x: &[f32], y: &[f32]) -> f32 {
    use core::arch::wasm32::{f32x4_add, f32x4_extract_lane, f32x4_mul, f32x4_splat, v128_load, v128};
    let n = x.len().min(y.len());
    let n4 = n / 4 * 4;
    let mut acc = f32x4_splat(0.0);
    for i in (0..n4).step_by(4) {
        // SAFETY: i + 4 ≤ n4 ≤ the length of both slices; v128 loads need no alignment.
        unsafe {
            acc = f32x4_add(acc, f32x4_mul(v128_load(x.as_ptr().add(i) as *const v128), v128_load(y.as_ptr().add(i) as *const v128)));
        }
    }
    let lanes = f32x4_extract_lane::<0>(acc) + f32x4_extract_lane::<1>(acc) + f32x4_extract_lane::<2>(acc) + f32x4_extract_lane::<3>(acc);
    lanes + x[n4..n].iter().zip(&y[n4..n]).map(|(a, b)| a * b).sum::<f32>()
}

/// out[r] = table[r, :] · h for every row r.
#[cfg(target_arch = "wasm32")]
#[target_feature(enable = "simd128")]
fn dot_kernel(table: &[f32], h: &[f32], out: &mut [f32]) {
    let c = h.len();
    for (r, o) in out.iter_mut().enumerate() {
        *o = dot(&table[r * c..(r + 1) * c], h);
    }
}

/// Logits against the tied embedding table: (T, C) x (C, vocab) -> (T, vocab), computed as one
/// dot product per vocabulary row so the (vocab, C) table is read in place, never transposed
/// or packed.
pub fn tied_logits(h: ArrayView2<f32>, wte: &Array2<f32>) -> Array2<f32> {
    if h.nrows() > 4 {
        return h.dot(&wte.t());
    }
    let mut out = Array2::zeros((h.nrows(), wte.nrows()));
    for (hr, mut or) in h.rows().into_iter().zip(out.rows_mut()) {
        // (vocab, C) x (C,) -> (vocab,)
        #[cfg(not(target_arch = "wasm32"))]
        or.assign(&wte.dot(&hr));
        #[cfg(target_arch = "wasm32")]
        {
            let table = wte.as_slice().expect("wte is in standard layout");
            let hr = hr.to_vec();
            // (On wasm, SIMD functions are safe to call: see `matmul_blocked`.)
            dot_kernel(table, &hr, or.as_slice_mut().expect("a fresh row is contiguous"));
        }
    }
    out
}

/// Layer norm of each row with GPT-2's affine parameters: γ ⊙ (x − μ) / √(σ² + ε) + β.
/// Mean and variance are accumulated in f64 so that wide rows lose no precision.
pub fn layer_norm(x: ArrayView2<f32>, ln: &LayerNorm, eps: f32) -> Array2<f32> {
    let mut out = x.to_owned();
    for mut row in out.rows_mut() {
        let n = row.len() as f64;
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / n;
        let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n; // biased, as PyTorch
        let inv = 1.0 / (var + eps as f64).sqrt();
        for ((v, &g), &b) in row.iter_mut().zip(&ln.weight).zip(&ln.bias) {
            *v = ((*v as f64 - mean) * inv) as f32 * g + b;
        }
    }
    out
}

/// GPT-2's GELU ("gelu_new"), the tanh approximation:
/// 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))).
pub fn gelu_new(x: f32) -> f32 {
    const SQRT_2_OVER_PI: f32 = 0.797_884_6;
    0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)).tanh())
}

/// Causal attention of one head.
///
/// `q` holds the T new queries, whose absolute positions are `past .. past + T`; `k` and `v`
/// hold every key and value so far (S = past + T rows). Query i may attend to keys 0 ..= past + i.
/// Returns the head's output (T, d) and its weights (T, S), where masked entries are exactly 0.
pub fn causal_attention(q: ArrayView2<f32>, k: ArrayView2<f32>, v: ArrayView2<f32>, past: usize) -> (Array2<f32>, Array2<f32>) {
    let d = q.ncols();
    let scale = 1.0 / (d as f32).sqrt();
    // (T, d) x (d, S) -> (T, S)
    let mut w = q.dot(&k.t()) * scale;
    for (i, mut row) in w.axis_iter_mut(Axis(0)).enumerate() {
        let visible = past + i + 1;
        // Masking: future keys get weight exactly 0. Setting them to −∞ before exp does the same;
        // here we simply skip them. The row max is subtracted before exp so no score overflows.
        let max = row.slice(s![..visible]).fold(f32::NEG_INFINITY, |m, &x| m.max(x));
        let mut sum = 0.0f32;
        for x in row.slice_mut(s![..visible]).iter_mut() {
            *x = (*x - max).exp();
            sum += *x;
        }
        row.slice_mut(s![..visible]).mapv_inplace(|x| x / sum);
        row.slice_mut(s![visible..]).fill(0.0);
    }
    // (T, S) x (S, d) -> (T, d)
    (w.dot(&v), w)
}
