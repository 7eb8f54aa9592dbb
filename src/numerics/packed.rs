//! A linear layer's weight packed, once at load time, for the browser's CPU matrix product.
//!
//! A fast matrix product reads W in narrow column panels: each step of its inner loop wants
//! W[kk, j0 .. j0 + 8] for kk = 0, 1, 2, … In W's row-major (in, out) layout those 8 values
//! lie a whole row apart from the next 8 (9 KB in GPT-2's `c_attn`), so every step lands on a
//! new memory page and nothing prefetches them. The usual cure is to copy ("pack") each panel
//! into contiguous memory before using it, but packing on every call reads and writes all of
//! W once more: in the browser that was nearly half the time of a 16-token prompt. Here the
//! panels are packed once, when the model loads, and replace the row-major copy (no extra
//! memory): panel p holds rows kk = 0 .. in of columns 8p .. 8p + 8, zero past the last column.
//!
//! Measured in V8 (a wasm micro-benchmark of GPT-2 small's four weight shapes at 16 rows):
//! packing per call 7.6 GFLOP/s; pre-packed with a 6 × 8 micro-kernel 13.9; with 4 × 8, 16–22.

use ndarray::{Array2, ArrayView2};

use std::ops::Range;

use super::f4::F4;
use super::par::{self, SharedOut};

/// Columns per panel: two 4-lane vectors.
pub const PANEL: usize = 8;
/// Rows of the output per micro-kernel call.
const ROWS: usize = 4;

#[derive(Debug, Clone, PartialEq)]
pub struct PackedMatrix {
    rows: usize,
    cols: usize,
    /// ⌈cols / 8⌉ panels of (rows, 8): panels[(p · rows + kk) · 8 + c] = W[kk, 8p + c].
    panels: Vec<f32>,
}

impl PackedMatrix {
    /// Packs W (in, out).
    pub fn pack(w: ArrayView2<f32>) -> PackedMatrix {
        let (rows, cols) = w.dim();
        match w.as_slice() {
            // Row-major already (a product's right operand on every call in the browser, such as
            // the gradient dy of a weight's dW = xᵀ dy): its rows are read in place, not copied
            // out one allocation per row.
            Some(all) if cols > 0 => PackedMatrix::from_rows(rows, cols, |f| all.chunks_exact(cols).for_each(f)),
            _ => PackedMatrix::from_rows(rows, cols, |f| w.rows().into_iter().for_each(|r| f(&r.to_vec()))),
        }
    }

    /// Packs W (in, out) from its rows in order, which `each` hands to the callback it is given
    /// (the model loader passes the checkpoint's rows straight from the file, so no row-major
    /// copy of the matrix is ever allocated). Rows past `rows` and values past `cols` are ignored.
    pub fn from_rows(rows: usize, cols: usize, each: impl FnOnce(&mut dyn FnMut(&[f32]))) -> PackedMatrix {
        let mut panels = vec![0.0f32; cols.div_ceil(PANEL) * rows * PANEL];
        let mut kk = 0;
        each(&mut |row| {
            if kk < rows {
                // Row kk's columns 8p .. 8p + 8 go to row kk of panel p.
                for (p, chunk) in row[..cols.min(row.len())].chunks(PANEL).enumerate() {
                    let at = (p * rows + kk) * PANEL;
                    panels[at..at + chunk.len()].copy_from_slice(chunk);
                }
                kk += 1;
            }
        });
        PackedMatrix { rows, cols, panels }
    }

    /// A matrix of zeros, to be filled by [`PackedMatrix::write`] as W's values arrive.
    pub fn zeros(rows: usize, cols: usize) -> PackedMatrix {
        PackedMatrix { rows, cols, panels: vec![0.0f32; cols.div_ceil(PANEL) * rows * PANEL] }
    }

    /// Writes `values` at W's row-major flat indices `at ..` (rows need not be whole: a loader
    /// writes each piece of the file as it arrives); values past W's end are dropped.
    pub fn write(&mut self, at: usize, values: &[f32]) {
        let (rows, cols) = (self.rows, self.cols);
        if cols == 0 {
            return;
        }
        let (mut kk, mut j, mut rest) = (at / cols, at % cols, values);
        while !rest.is_empty() && kk < rows {
            // Up to the end of column j's panel (or of the row): contiguous in the panel.
            let n = (PANEL - j % PANEL).min(cols - j).min(rest.len());
            let to = ((j / PANEL) * rows + kk) * PANEL + j % PANEL;
            self.panels[to..to + n].copy_from_slice(&rest[..n]);
            rest = &rest[n..];
            j += n;
            if j == cols {
                (kk, j) = (kk + 1, 0);
            }
        }
    }

    /// Writes `values` at the row-major flat indices `at ..` of Wᵀ (out, in), the layout
    /// nn.Linear stores (a loader writes each piece of the file as it arrives); values past its
    /// end are dropped.
    pub fn write_transposed(&mut self, at: usize, values: &[f32]) {
        let (rows, cols) = (self.rows, self.cols);
        if rows == 0 {
            return;
        }
        // Wᵀ[j, kk] = W[kk, j]: each value lands in column j's panel, row kk.
        let (mut j, mut kk) = (at / rows, at % rows);
        for &x in values {
            if j >= cols {
                break;
            }
            self.panels[((j / PANEL) * rows + kk) * PANEL + j % PANEL] = x;
            kk += 1;
            if kk == rows {
                (j, kk) = (j + 1, 0);
            }
        }
    }

    /// (in, out)
    pub fn dim(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// W back in its row-major (in, out) layout.
    pub fn unpack(&self) -> Array2<f32> {
        Array2::from_shape_fn((self.rows, self.cols), |(kk, j)| {
            self.panels[((j / PANEL) * self.rows + kk) * PANEL + j % PANEL]
        })
    }

    /// Every stored value: W's, in panel order, and the zeros that pad the last panel.
    pub fn stored(&self) -> &[f32] {
        &self.panels
    }

    /// x W: (T, in) x (in, out) -> (T, out).
    pub fn matmul(&self, x: ArrayView2<f32>) -> Array2<f32> {
        self.matmul_then(x, Then::Nothing)
    }

    /// x W, then `then` on every output: by the thread that summed it, on its own columns,
    /// so a bias and an activation cost no second pass over y and split like the product.
    pub fn matmul_then(&self, x: ArrayView2<f32>, then: Then) -> Array2<f32> {
        assert_eq!(x.ncols(), self.rows, "x has {} columns for a weight of {} rows", x.ncols(), self.rows);
        let mut y = vec![0.0f32; x.nrows() * self.cols];
        #[allow(unused_unsafe)]
        // SAFETY (wasm): a module using SIMD128 fails validation where SIMD is missing, so the
        // kernel can never run on a machine without it.
        unsafe {
            kernel(x, &self.panels, &mut y, (x.nrows(), self.rows, self.cols), then)
        };
        Array2::from_shape_vec((x.nrows(), self.cols), y).expect("T × out values")
    }
}

/// What a product does to each output once summed ([`PackedMatrix::matmul_then`]): the
/// column's bias added, then GPT-2's GELU for its MLP. The same operations, in the same order,
/// as adding the bias to the whole product and then running `gelu_in_place` on it.
#[derive(Clone, Copy, Debug)]
pub enum Then<'a> {
    Nothing,
    /// + b (out,)
    Bias(&'a [f32]),
    /// gelu_new(· + b)
    BiasGelu(&'a [f32]),
}

impl Then<'_> {
    fn check(self, n: usize) {
        if let Then::Bias(b) | Then::BiasGelu(b) = self {
            assert_eq!(b.len(), n, "a bias of {} for {n} outputs", b.len());
        }
    }

    /// On a block of outputs, `rows` rows of [`PANEL`] (`out`, row-major), the first `width` of
    /// each the outputs of columns j0 .. j0 + width: one call per block of the micro-kernel, so
    /// its cost is the arithmetic's, not a call's per row. (Past `width` a panel is padding:
    /// zeros, whose GELU is 0 and is never stored.)
    #[inline]
    fn apply(self, out: &mut [f32], j0: usize, width: usize) {
        let b = match self {
            Then::Nothing => return,
            Then::Bias(b) | Then::BiasGelu(b) => &b[j0..j0 + width],
        };
        for row in out.chunks_mut(PANEL) {
            row.iter_mut().zip(b).for_each(|(v, b)| *v += b);
        }
        if let Then::BiasGelu(_) = self {
            crate::numerics::gelu::gelu_in_place(out);
        }
    }
}

/// The loop nest of `matmul`, compiled with SIMD128 on wasm (only this worker-side code is, so
/// the book's main module still loads in browsers without SIMD).
///
/// Rows of x go in blocks of 4 through a 4 × 8 micro-kernel: 4 rows and one panel's 8 columns
/// are accumulated in 8 vector registers over all of `k`, then stored once. (4 × 8 beat 6 × 8
/// and 8 × 8: with 12 or 16 accumulators V8 runs out of the 16 vector registers of x86-64 and
/// spills; and 16-token prompts need no padding rows.) x is packed per block into (k, 4) so its
/// loads are sequential too. A last partial block is padded with zero rows, except a lone row
/// (and decoding's single row), which takes a one-row kernel: padding it would quadruple the
/// arithmetic of a step that only needs to read W once.
///
/// x may be row-major or the transpose of a row-major array (the xᵀ of a weight's gradient
/// xᵀ dy): packing reads either where it lies; any other layout is copied to row-major first.
#[cfg_attr(target_arch = "wasm32", target_feature(enable = "simd128"))]
fn kernel(x: ArrayView2<f32>, panels: &[f32], y: &mut [f32], (t, k, n): (usize, usize, usize), then: Then) {
    then.check(n);
    let lone = t % ROWS == 1;
    let blocks = if lone { t / ROWS } else { t.div_ceil(ROWS) };
    // x per block of 4 rows, zero rows past t: xp[b][kk * 4 + r] = x[4b + r, kk]. Read from
    // slices (ndarray's iterators cost several times a slice's at the worker's opt-level "z").
    let mut xp = vec![0.0f32; blocks * ROWS * k];
    let copy;
    let (xs, transposed) = match (x.to_slice(), x.reversed_axes().to_slice()) {
        (Some(xs), _) => (xs, false),
        // xᵀ is row-major: x[i, kk] = xs[kk · t + i], four rows of a block side by side.
        (None, Some(xs)) => (xs, true),
        (None, None) => {
            copy = x.as_standard_layout();
            (copy.as_slice().expect("standard layout"), false)
        }
    };
    // (With k = 0 there is nothing to pack.)
    for (b, block) in xp.chunks_exact_mut((ROWS * k).max(1)).enumerate() {
        let rows = ROWS.min(t - b * ROWS);
        if transposed {
            // Four adjacent values of each of x's columns (a fixed-size copy, no call per column).
            for (kk, to) in block.chunks_exact_mut(ROWS).enumerate() {
                let from = &xs[kk * t + b * ROWS..];
                match rows {
                    ROWS => to.copy_from_slice(&from[..ROWS]),
                    _ => to[..rows].copy_from_slice(&from[..rows]),
                }
            }
        } else {
            // Row r of the block into lane r of every group of four.
            for r in 0..rows {
                let row = &xs[(b * ROWS + r) * k..][..k];
                block.chunks_exact_mut(ROWS).zip(row).for_each(|(to, v)| to[r] = *v);
            }
        }
    }
    // The last row, for the one-row kernel.
    let last: Vec<f32> = if lone { x.row(t - 1).to_vec() } else { Vec::new() };
    let last = &last[..];
    // The panels (8 output columns each) are independent: on several threads each takes a
    // contiguous run of them (`par`), writing its own columns of every row of y.
    let y = SharedOut::new(y);
    let xp = &xp[..];
    // A row of decoding too: each thread then reads its own panels of W (`par::ONE_ROW_WORK`).
    let work = t * k * n * if t == 1 { par::ONE_ROW_WORK } else { 1 };
    par::for_each(n.div_ceil(PANEL), work, |ps| {
        #[allow(unused_unsafe)]
        // SAFETY: y holds t × n values and each call writes only columns 8p .. 8p + 8 of its panels p.
        unsafe {
            panels_kernel(last, xp, panels, y, (t, k, n), ps, then)
        }
    });
}

/// Columns 8p .. 8p + 8 of y for the panels p in `ps` (see `kernel`; `xp` is x packed per block,
/// `last` x's last row when it is left over for the one-row kernel, else empty).
///
/// # Safety
/// y must hold t × n values, and no other thread may write these panels' columns meanwhile.
#[cfg_attr(target_arch = "wasm32", target_feature(enable = "simd128"))]
unsafe fn panels_kernel(
    last: &[f32],
    xp: &[f32],
    panels: &[f32],
    y: SharedOut,
    dims: (usize, usize, usize),
    ps: Range<usize>,
    then: Then,
) {
    let (t, k, n) = dims;
    let lone = t % ROWS == 1;
    let blocks = if lone { t / ROWS } else { t.div_ceil(ROWS) };
    let mut out = [0.0f32; ROWS * PANEL];
    for p in ps {
        let panel = &panels[p * k * PANEL..(p + 1) * k * PANEL];
        let (j0, width) = (p * PANEL, PANEL.min(n - p * PANEL));
        for b in 0..blocks {
            let z = F4::zero();
            let (mut a00, mut a01, mut a10, mut a11, mut a20, mut a21, mut a30, mut a31) = (z, z, z, z, z, z, z, z);
            let (pp, xq) = (panel.as_ptr(), xp[b * k * ROWS..].as_ptr());
            for kk in 0..k {
                // SAFETY: kk * 8 + 8 ≤ k * 8 (the panel) and b·k·4 + kk * 4 + 4 ≤ blocks·k·4 (xp).
                // Accumulators are named, not an indexed array: at opt-level "z" LLVM does not
                // unroll loops, and an array indexed in a loop would live in memory.
                unsafe {
                    let (w0, w1) = (F4::load(pp.add(kk * PANEL)), F4::load(pp.add(kk * PANEL + 4)));
                    let xr = xq.add(kk * ROWS);
                    let a = F4::load_splat(xr);
                    (a00, a01) = (a00.mul_add(a, w0), a01.mul_add(a, w1));
                    let a = F4::load_splat(xr.add(1));
                    (a10, a11) = (a10.mul_add(a, w0), a11.mul_add(a, w1));
                    let a = F4::load_splat(xr.add(2));
                    (a20, a21) = (a20.mul_add(a, w0), a21.mul_add(a, w1));
                    let a = F4::load_splat(xr.add(3));
                    (a30, a31) = (a30.mul_add(a, w0), a31.mul_add(a, w1));
                }
            }
            for (r, (c0, c1)) in [(a00, a01), (a10, a11), (a20, a21), (a30, a31)].into_iter().enumerate() {
                // SAFETY: r * 8 + 8 ≤ out's 32 values.
                unsafe {
                    c0.store(out.as_mut_ptr().add(r * PANEL));
                    c1.store(out.as_mut_ptr().add(r * PANEL + 4));
                }
            }
            then.apply(&mut out, j0, width);
            for r in (0..ROWS).filter(|r| b * ROWS + r < t) {
                let i = b * ROWS + r;
                // SAFETY: row i's columns j0 .. j0 + width are this panel's (see the function's contract).
                unsafe { y.slice(i * n + j0, width) }.copy_from_slice(&out[r * PANEL..r * PANEL + width]);
            }
        }
        if lone {
            // y[t − 1, j0 ..] = Σ_kk x[t − 1, kk] · panel[kk]: two pairs of accumulators (even and
            // odd kk) so consecutive additions do not wait on each other.
            let xr = &last[..k];
            let z = F4::zero();
            let (mut e0, mut e1, mut o0, mut o1) = (z, z, z, z);
            let pp = panel.as_ptr();
            for kk in (0..k).step_by(2) {
                // SAFETY: kk < k, so kk * 8 + 8 ≤ k * 8; the odd step is taken only if kk + 1 < k.
                unsafe {
                    let a = F4::load_splat(xr.as_ptr().add(kk));
                    (e0, e1) =
                        (e0.mul_add(a, F4::load(pp.add(kk * PANEL))), e1.mul_add(a, F4::load(pp.add(kk * PANEL + 4))));
                    if kk + 1 < k {
                        let a = F4::load_splat(xr.as_ptr().add(kk + 1));
                        (o0, o1) = (
                            o0.mul_add(a, F4::load(pp.add((kk + 1) * PANEL))),
                            o1.mul_add(a, F4::load(pp.add((kk + 1) * PANEL + 4))),
                        );
                    }
                }
            }
            // SAFETY: out holds 32 values.
            unsafe {
                e0.add(o0).store(out.as_mut_ptr());
                e1.add(o1).store(out.as_mut_ptr().add(4));
            }
            // SAFETY: as above, for the last row.
            then.apply(&mut out[..PANEL], j0, width);
            unsafe { y.slice((t - 1) * n + j0, width) }.copy_from_slice(&out[..width]);
        }
    }
}

/// a b: (m, k) x (k, n) -> (m, n). Natively ndarray's product. In the browser, where ndarray's
/// has no SIMD, the packed kernel, with b packed on the spot: packing costs O(k n) against the
/// product's O(m k n) (for attention, 128-token prompts of GPT-2 small spent 190 ms here).
pub fn matmul(a: ArrayView2<f32>, b: ArrayView2<f32>) -> Array2<f32> {
    #[cfg(target_arch = "wasm32")]
    return PackedMatrix::pack(b).matmul(a);
    #[cfg(not(target_arch = "wasm32"))]
    a.dot(&b)
}

/// a b, then `then` on every output ([`Then`]): in the browser in the packed kernel, by the
/// thread that summed each output; natively after ndarray's product, the same operations.
pub fn matmul_then(a: ArrayView2<f32>, b: ArrayView2<f32>, then: Then) -> Array2<f32> {
    #[cfg(target_arch = "wasm32")]
    return PackedMatrix::pack(b).matmul_then(a, then);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut y = a.dot(&b);
        then.check(y.ncols());
        if let Then::Bias(bias) | Then::BiasGelu(bias) = then {
            y.rows_mut().into_iter().for_each(|mut row| row.iter_mut().zip(bias).for_each(|(v, b)| *v += b));
        }
        if let Then::BiasGelu(_) = then {
            crate::numerics::gelu::gelu_in_place(y.as_slice_mut().expect("a fresh product is contiguous"));
        }
        y
    }
}

/// x · y, four lanes at a time with SIMD128.
#[cfg(target_arch = "wasm32")]
#[target_feature(enable = "simd128")]
fn dot(x: &[f32], y: &[f32]) -> f32 {
    use core::arch::wasm32::{f32x4_add, f32x4_extract_lane, f32x4_mul, f32x4_splat, v128, v128_load};
    let n = x.len().min(y.len());
    let n4 = n / 4 * 4;
    // Two accumulators (even and odd groups of four) so each addition need not wait for the last.
    let (mut acc, mut odd) = (f32x4_splat(0.0), f32x4_splat(0.0));
    let load = |i: usize| {
        // SAFETY: callers pass i + 4 ≤ n4 ≤ the length of both slices; v128 loads need no alignment.
        unsafe { f32x4_mul(v128_load(x.as_ptr().add(i) as *const v128), v128_load(y.as_ptr().add(i) as *const v128)) }
    };
    let n8 = n / 8 * 8;
    for i in (0..n8).step_by(8) {
        (acc, odd) = (f32x4_add(acc, load(i)), f32x4_add(odd, load(i + 4)));
    }
    if n4 > n8 {
        acc = f32x4_add(acc, load(n8));
    }
    let acc = f32x4_add(acc, odd);
    let lanes = f32x4_extract_lane::<0>(acc)
        + f32x4_extract_lane::<1>(acc)
        + f32x4_extract_lane::<2>(acc)
        + f32x4_extract_lane::<3>(acc);
    lanes + x[n4..n].iter().zip(&y[n4..n]).map(|(a, b)| a * b).sum::<f32>()
}

/// out[i, r] = table[r, :] · h[i] for every row r of the table and each of a few rows h[i]: the
/// table is read once, each of its rows dotted with every h[i] while it is in the cache. On
/// several threads each takes a run of the table's rows (`par`), so each reads its own part of
/// the table. `out` is (rows of h, vocab), row-major.
#[cfg(target_arch = "wasm32")]
fn dot_kernel(table: &[f32], hs: &[Vec<f32>], out: &mut [f32]) {
    // (Rows of no values: every logit is an empty sum, the zeros out holds.)
    let Some(c) = hs.first().map(Vec::len).filter(|&c| c > 0) else { return };
    let vocab = table.len() / c;
    // What makes every write of `dot_rows` land inside out.
    assert!(hs.iter().all(|h| h.len() == c) && out.len() == hs.len() * vocab, "out is (rows of h, vocab)");
    let out = SharedOut::new(out);
    par::for_each(vocab, hs.len().saturating_mul(vocab).saturating_mul(c), |rows| {
        #[allow(unused_unsafe)]
        // SAFETY: out holds hs.len() × vocab values and each call writes only its rows' columns.
        unsafe {
            dot_rows(table, hs, out, rows)
        }
    });
}

/// Columns `rows` of every row of out (see `dot_kernel`).
///
/// # Safety
/// out must hold hs.len() × vocab values, and no other thread may write these columns meanwhile.
#[cfg(target_arch = "wasm32")]
#[target_feature(enable = "simd128")]
unsafe fn dot_rows(table: &[f32], hs: &[Vec<f32>], out: SharedOut, rows: Range<usize>) {
    let c = hs[0].len();
    let vocab = table.len() / c;
    for r in rows {
        let row = &table[r * c..(r + 1) * c];
        for (i, h) in hs.iter().enumerate() {
            // SAFETY: i < hs.len() and r < vocab: in bounds, and column r is this call's.
            unsafe { out.slice(i * vocab + r, 1)[0] = dot(row, h) };
        }
    }
}

/// An output layer against a table of (vocab, C) rows, GPT-2's tied embeddings or the Llama
/// family's `lm_head` (or its tied embeddings): (T, C) x (C, vocab) -> (T, vocab). The table is
/// read in place, never transposed or packed. Natively one product; in the browser, for up to 16
/// rows (a decoding step, or beam search's beams), one pass over the table, four lanes at a time
/// (wasm's matrix product has no SIMD), its rows split across threads.
pub fn table_logits(h: ArrayView2<f32>, wte: &Array2<f32>) -> Array2<f32> {
    assert_eq!(h.ncols(), wte.ncols(), "rows of {} values against a table of {} columns", h.ncols(), wte.ncols());
    #[cfg(not(target_arch = "wasm32"))]
    {
        if h.nrows() == 1 {
            // (vocab, C) x (C,) -> (vocab,)
            return wte.dot(&h.row(0)).insert_axis(ndarray::Axis(0));
        }
        h.dot(&wte.t())
    }
    #[cfg(target_arch = "wasm32")]
    {
        if h.nrows() > 16 {
            return h.dot(&wte.t());
        }
        let mut out = Array2::zeros((h.nrows(), wte.nrows()));
        let table = wte.as_slice().expect("the table is in standard layout");
        let hs: Vec<Vec<f32>> = h.rows().into_iter().map(|r| r.to_vec()).collect();
        dot_kernel(table, &hs, out.as_slice_mut().expect("a fresh array is contiguous"));
        out
    }
}
