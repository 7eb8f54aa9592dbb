//! Splitting a kernel's work across threads, where the build has them.
//!
//! A kernel hands [`for_each`] the number of independent pieces of its output (a matrix
//! product's column panels, the vocabulary's rows of the logits) and a function that computes
//! a contiguous range of them. With one thread the function is called once, on the whole range,
//! exactly as the single-threaded kernel always ran. With several, the range is cut into one
//! part per thread ([`split`]) and the parts run at once on rayon's pool: natively its own
//! threads; in the browser's threaded build a pool of Web Workers sharing the wasm memory
//! (the compute worker starts it when the page is cross-origin isolated).
//!
//! Every piece is computed by the same instructions in the same order whichever thread runs it,
//! so the outputs are bit-for-bit those of one thread (tests/threads.rs checks it).

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The threads kernels split their work across: 1 until a pool is started and [`set_threads`]
/// says how many it has.
static THREADS: AtomicUsize = AtomicUsize::new(1);

/// How many calls of [`for_each`] have split their work (tests check that a model's kernels do).
static SPLIT_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Below this many multiply-adds a kernel runs on one thread: waking another costs tens of
/// microseconds in the browser (an `Atomics.notify` and a wait), about what 32 K multiply-adds take.
pub const MIN_PARALLEL_WORK: usize = 1 << 15;

/// Whether this build can run kernels on several threads.
pub const AVAILABLE: bool = cfg!(any(not(target_arch = "wasm32"), feature = "threads"));

/// The threads kernels use now.
pub fn threads() -> usize {
    THREADS.load(Ordering::Relaxed)
}

/// Sets how many threads kernels use (at least 1; 1 where the build has no threads). Natively
/// rayon's pool serves any number; in the browser the compute worker sets it to the size of the
/// pool it started.
pub fn set_threads(n: usize) {
    THREADS.store(if AVAILABLE { n.max(1) } else { 1 }, Ordering::Relaxed);
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
    let parts = if work < MIN_PARALLEL_WORK { 1 } else { threads().min(n) };
    if parts <= 1 {
        return f(0..n);
    }
    SPLIT_RUNS.fetch_add(1, Ordering::Relaxed);
    run(split(n, parts), &f);
}

/// How many calls of [`for_each`] split their work across threads so far, in this process.
pub fn split_runs() -> usize {
    SPLIT_RUNS.load(Ordering::Relaxed)
}

#[cfg(any(not(target_arch = "wasm32"), feature = "threads"))]
fn run(ranges: Vec<Range<usize>>, f: &(impl Fn(Range<usize>) + Sync)) {
    rayon::scope(|s| {
        for r in ranges {
            s.spawn(move |_| f(r));
        }
    });
}

#[cfg(not(any(not(target_arch = "wasm32"), feature = "threads")))]
fn run(ranges: Vec<Range<usize>>, f: &(impl Fn(Range<usize>) + Sync)) {
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
