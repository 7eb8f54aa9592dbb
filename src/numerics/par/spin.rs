//! A hand-made pool, measured against rayon's (docs/performance.md, "Every core"): its threads
//! spin for a while after each job before they sleep, so the next job of a forward pass (GPT-2
//! small runs about 60 in a row) finds them awake, where rayon's pool puts them to sleep and
//! wakes each with an `Atomics.notify`. The thread that asks takes parts of the job too.
//!
//! One job at a time: `JOB` points at the asking thread's `Job` (on its stack), `NEXT` hands out
//! its parts, `DONE` counts the finished ones. A pool thread that sees a new `EPOCH` counts itself
//! in `ACTIVE` before it reads `JOB`; the asking thread returns only after every part is done,
//! `JOB` is cleared and `ACTIVE` is 0, so no pool thread can read a job whose frame is gone (one
//! that comes late reads a cleared `JOB`, or a newer job that waits for it in turn). All the
//! atomics are sequentially consistent: the argument above needs their single order, and a job
//! costs a handful of them.

use std::cell::Cell;
use std::ops::Range;
use std::ptr::null_mut;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize};
use std::sync::Mutex;

struct Job<'a> {
    f: &'a (dyn Fn(Range<usize>) + Sync),
    ranges: &'a [Range<usize>],
}

static JOB: AtomicPtr<Job<'static>> = AtomicPtr::new(null_mut());
static EPOCH: AtomicU32 = AtomicU32::new(0);
static NEXT: AtomicUsize = AtomicUsize::new(0);
static DONE: AtomicUsize = AtomicUsize::new(0);
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// Pool threads started.
static WORKERS: AtomicUsize = AtomicUsize::new(0);
/// Held by the thread whose job runs: another thread that asks meanwhile runs its parts itself.
static CALLER: Mutex<()> = Mutex::new(());

/// Checks of `EPOCH` before a pool thread sleeps: about a millisecond, longer than the gap
/// between two products of a forward pass.
const SPINS: u32 = 1 << 20;

thread_local! {
    /// This thread is a pool thread, or is running its parts of a job.
    static IN_POOL: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is inside the pool (its kernels then run where they are).
pub fn in_pool() -> bool {
    IN_POOL.with(Cell::get)
}

/// Pool threads started so far.
pub fn workers() -> usize {
    WORKERS.load(SeqCst)
}

/// Runs `f` on every range, on the pool's threads and this one; returns when all are done.
/// Returns `false`, having run nothing, when another thread's job holds the pool.
pub fn run(ranges: &[Range<usize>], f: &(dyn Fn(Range<usize>) + Sync)) -> bool {
    let Ok(_turn) = CALLER.try_lock() else { return false };
    let job = Job { f, ranges };
    NEXT.store(0, SeqCst);
    DONE.store(0, SeqCst);
    // SAFETY (of the lifetime's erasure): `job` outlives every read of `JOB`, as the module doc says.
    JOB.store(&job as *const Job<'_> as *mut Job<'static>, SeqCst);
    EPOCH.fetch_add(1, SeqCst);
    wake_all();
    IN_POOL.with(|p| p.set(true));
    work(&job);
    IN_POOL.with(|p| p.set(false));
    while DONE.load(SeqCst) < ranges.len() {
        std::hint::spin_loop();
    }
    JOB.store(null_mut(), SeqCst);
    while ACTIVE.load(SeqCst) > 0 {
        std::hint::spin_loop();
    }
    true
}

/// Takes the job's parts until none is left.
fn work(job: &Job) {
    loop {
        let i = NEXT.fetch_add(1, SeqCst);
        let Some(r) = job.ranges.get(i) else { return };
        (job.f)(r.clone());
        DONE.fetch_add(1, SeqCst);
    }
}

/// A pool thread's life: waits for jobs and takes their parts, forever.
pub fn worker_loop() -> ! {
    IN_POOL.with(|p| p.set(true));
    WORKERS.fetch_add(1, SeqCst);
    let mut seen = EPOCH.load(SeqCst);
    loop {
        let mut spins = 0;
        while EPOCH.load(SeqCst) == seen {
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                sleep(seen);
            }
        }
        seen = EPOCH.load(SeqCst);
        ACTIVE.fetch_add(1, SeqCst);
        let job = JOB.load(SeqCst);
        if !job.is_null() {
            // SAFETY: counted in ACTIVE before the read, so the job's frame is alive (module doc).
            work(unsafe { &*job });
        }
        ACTIVE.fetch_sub(1, SeqCst);
    }
}

/// Sleeps until `EPOCH` may have moved from `seen`.
#[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
fn sleep(seen: u32) {
    // SAFETY: EPOCH is a live, aligned 32-bit atomic in the shared memory. Wakes on `wake_all`
    // or at once if EPOCH already differs.
    unsafe { core::arch::wasm32::memory_atomic_wait32(EPOCH.as_ptr() as *mut i32, seen as i32, -1) };
}

#[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
fn wake_all() {
    // SAFETY: as in `sleep`.
    unsafe { core::arch::wasm32::memory_atomic_notify(EPOCH.as_ptr() as *mut i32, u32::MAX) };
}

/// Natively (tests): a short nap and a look again.
#[cfg(not(all(target_arch = "wasm32", target_feature = "atomics")))]
fn sleep(_seen: u32) {
    #[cfg(not(target_arch = "wasm32"))]
    std::thread::sleep(std::time::Duration::from_micros(100));
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "atomics")))]
fn wake_all() {}

/// Natively: starts pool threads (std threads) until there are `n`.
#[cfg(not(target_arch = "wasm32"))]
pub fn start_native(n: usize) {
    static STARTING: Mutex<()> = Mutex::new(());
    let _one = STARTING.lock().unwrap_or_else(|e| e.into_inner());
    let started = workers();
    for _ in started..n {
        std::thread::spawn(|| worker_loop());
    }
    while workers() < n {
        std::thread::yield_now();
    }
}
