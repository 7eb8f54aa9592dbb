//! Splitting a kernel's work across threads, where the build has them.
//!
//! A kernel hands [`for_each`] the number of independent pieces of its output (a matrix
//! product's column panels, attention's heads) and a function that computes
//! a contiguous range of them. With one thread the function is called once, on the whole range,
//! exactly as the single-threaded kernel always ran. With several, the range is cut into one
//! part per thread ([`split`]) and the parts run at once on a pool: the hand-made one in
//! [`spin`] (the default) or rayon's ([`Pool`]; docs/performance.md measures both). Natively its
//! threads are std threads; in the browser's threaded build, Web Workers sharing the wasm memory
//! (the compute worker starts them when the page is cross-origin isolated: `worker::pool`).
//!
//! Every piece is computed by the same instructions in the same order whichever thread runs it,
//! so the outputs are bit-for-bit those of one thread (tests/threads.rs checks it).

use std::cell::Cell;
use std::ops::Range;
use std::sync::Mutex;

pub mod spin;

/// Which pool runs the parts of split work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pool {
    /// The hand-made pool ([`spin`]): its threads stay awake between the products of a pass.
    Spin,
    /// rayon's global pool.
    Rayon,
}

/// Chooses the pool this thread's kernels use (the hand-made one unless told otherwise).
pub fn set_pool(pool: Pool) {
    RAYON.with(|r| r.set(pool == Pool::Rayon));
}

pub fn pool() -> Pool {
    if RAYON.with(Cell::get) {
        Pool::Rayon
    } else {
        Pool::Spin
    }
}

thread_local! {
    /// The threads this thread's kernels split their work across: 1 until a pool is started and
    /// [`set_threads`] says how many it has. (Per thread: in the browser the compute worker's
    /// thread runs the kernels; natively, tests side by side each choose their own.)
    static THREADS: Cell<usize> = const { Cell::new(1) };
    /// rayon's pool rather than the hand-made one.
    static RAYON: Cell<bool> = const { Cell::new(false) };
    /// How many calls of [`for_each`] and [`map`] made on this thread have split their work (tests
    /// check that a model's kernels do; per thread, so tests running side by side do not mix).
    static SPLIT_RUNS: Cell<usize> = const { Cell::new(0) };
}

/// Below this many multiply-adds a kernel runs on one thread. Waking another and waiting for it
/// costs tens of microseconds in the browser (an `Atomics.notify`, a wait).
pub const MIN_PARALLEL_WORK: usize = 1 << 20;

/// What one multiply-add of a product of one row (a decoding step) counts for, in a prompt's
/// multiply-adds: it streams each weight from memory for a single use, where a prompt's kernel
/// uses each loaded weight four times (its blocks of 4 rows). So a decoding step splits its
/// products from 256 K multiply-adds up, each thread reading its own part of W: in the page on
/// two threads (bench/gpt2.mjs, docs/performance.md), GPT-2 small and SmolLM2-135M's shape
/// decoded 1.1–1.6× as fast as on one, where with one-row products kept on one thread they had
/// decoded 0.87–1.12× as fast: no steady gain.
pub const ONE_ROW_WORK: usize = 4;

/// The work, in the products' multiply-adds, that one value of a pass row by row counts for
/// (a norm in f64, an activation's exponential): a few scalar operations each, where a product
/// does four fused multiply-adds per instruction. With [`MIN_PARALLEL_WORK`] a GPT-2 small
/// layer norm splits from 86 tokens up.
pub const ROW_PASS_WORK: usize = 16;

/// Whether this build can run kernels on several threads.
pub const AVAILABLE: bool = cfg!(any(not(target_arch = "wasm32"), feature = "threads"));

/// The threads this thread's kernels use now.
pub fn threads() -> usize {
    THREADS.with(Cell::get)
}

/// Sets how many threads kernels use (at least 1; 1 where the build has no threads). Natively
/// rayon's pool serves any number; in the browser the compute worker sets it to the size of the
/// pool it started.
pub fn set_threads(n: usize) {
    THREADS.with(|t| t.set(if AVAILABLE { n.max(1) } else { 1 }));
}

/// `0 .. n` cut into at most `parts` contiguous, non-empty ranges whose lengths differ by at most one.
pub fn split(n: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.clamp(1, n.max(1));
    let (base, extra) = (n / parts, n % parts);
    let mut start = 0;
    (0..parts)
        .map(|i| {
            let len = base + usize::from(i < extra);
            let r = start..start + len;
            start += len;
            r
        })
        .filter(|r| !r.is_empty())
        .collect()
}

/// Calls `f` on ranges that together cover `0 .. n` once each: on one thread when there is one
/// or when the work (`work`, in multiply-adds) is too small to share, else one range per thread
/// at the same time. Returns when every range is done.
pub fn for_each(n: usize, work: usize, f: impl Fn(Range<usize>) + Sync) {
    match parts(n, work) {
        1 => f(0..n),
        parts => run(split(n, parts), &f),
    }
}

/// `f(0), f(1), …, f(n − 1)` in order, computed as [`for_each`] computes ranges: for work split
/// at a coarse grain (attention's heads), whose kernels inside then run on the thread they are on.
pub fn map<T: Send>(n: usize, work: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let parts = parts(n, work);
    if parts == 1 {
        return (0..n).map(f).collect();
    }
    let ranges = split(n, parts);
    // One slot per range, found by the range's start; filled by whichever thread runs it.
    let starts: Vec<usize> = ranges.iter().map(|r| r.start).collect();
    let slots: Vec<Mutex<Vec<T>>> = ranges.iter().map(|_| Mutex::new(Vec::new())).collect();
    run(ranges, &|r: Range<usize>| {
        let slot = starts.binary_search(&r.start).unwrap_or_default();
        let values: Vec<T> = r.map(&f).collect();
        *slots[slot].lock().unwrap_or_else(|e| e.into_inner()) = values;
    });
    slots.into_iter().flat_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner())).collect()
}

/// Calls `f(first_row, rows)` on runs of whole rows of `out` (row-major, `width` values a row)
/// that together cover it once each, split as [`for_each`] splits: for work done row by row
/// (norms, activations), whose rows then do not depend on how many threads there are.
pub fn for_rows(out: &mut [f32], width: usize, work: usize, f: impl Fn(usize, &mut [f32]) + Sync) {
    debug_assert!(out.len().is_multiple_of(width), "out is whole rows (none when the width is 0)");
    if width == 0 {
        return;
    }
    let n = out.len() / width;
    let shared = SharedOut::new(out);
    for_each(n, work, |rows| {
        // SAFETY: the ranges of `for_each` are disjoint and within 0 .. n, so each call gets its
        // own rows of `out`, which outlives this call.
        f(rows.start, unsafe { shared.slice(rows.start * width, rows.len() * width) })
    });
}

/// How many parts to cut work into: 1 when it is small, when there is one thread, or when this
/// already runs on a pool thread (a kernel inside work that was split: splitting again would only
/// add the cost of waking threads that are busy).
fn parts(n: usize, work: usize) -> usize {
    if work < MIN_PARALLEL_WORK || on_pool_thread() {
        return 1;
    }
    let parts = threads().min(n).max(1);
    if parts > 1 {
        SPLIT_RUNS.with(|n| n.set(n.get() + 1));
    }
    parts
}

/// How many calls of [`for_each`] and [`map`] made on this thread split their work so far.
pub fn split_runs() -> usize {
    SPLIT_RUNS.with(Cell::get)
}

fn on_pool_thread() -> bool {
    spin::in_pool() || rayon_thread()
}

#[cfg(any(not(target_arch = "wasm32"), feature = "threads"))]
fn rayon_thread() -> bool {
    rayon::current_thread_index().is_some()
}

#[cfg(not(any(not(target_arch = "wasm32"), feature = "threads")))]
fn rayon_thread() -> bool {
    false
}

fn run(ranges: Vec<Range<usize>>, f: &(impl Fn(Range<usize>) + Sync)) {
    match pool() {
        Pool::Rayon => run_rayon(ranges, f),
        // The pool is another thread's (natively, tests side by side): this thread does it all.
        Pool::Spin => {
            if !spin::run(&ranges, f) {
                ranges.into_iter().for_each(f);
            }
        }
    }
}

#[cfg(any(not(target_arch = "wasm32"), feature = "threads"))]
fn run_rayon(ranges: Vec<Range<usize>>, f: &(impl Fn(Range<usize>) + Sync)) {
    rayon::scope(|s| {
        for r in ranges {
            s.spawn(move |_| f(r));
        }
    });
}

#[cfg(not(any(not(target_arch = "wasm32"), feature = "threads")))]
fn run_rayon(ranges: Vec<Range<usize>>, f: &(impl Fn(Range<usize>) + Sync)) {
    ranges.into_iter().for_each(f);
}

/// A pointer to an output that several threads write, each to its own disjoint elements (a
/// `&mut` slice cannot be shared; splitting it would not follow a matrix's column ranges).
#[derive(Clone, Copy)]
pub struct SharedOut(*mut f32);

// SAFETY: users write disjoint elements only, and `for_each` returns after every writer is done.
unsafe impl Send for SharedOut {}
unsafe impl Sync for SharedOut {}

impl SharedOut {
    pub fn new(out: &mut [f32]) -> SharedOut {
        SharedOut(out.as_mut_ptr())
    }

    /// The elements `at .. at + len`.
    ///
    /// # Safety
    /// In bounds of the slice given to `new`, which must outlive the use, and written by no
    /// other thread at the same time.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice(&self, at: usize, len: usize) -> &mut [f32] {
        unsafe { std::slice::from_raw_parts_mut(self.0.add(at), len) }
    }
}
