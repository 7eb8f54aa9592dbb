//! What the native benchmarks measure with: the median of runs, a call's time, and the process's
//! peak memory.

/// The middle of `v` (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Milliseconds per call of `f`, the median of 5 timings of `reps` calls.
#[allow(dead_code)] // the profiles time kernels with it
pub fn ms(reps: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..5)
            .map(|_| {
                let t = std::time::Instant::now();
                (0..reps).for_each(|_| f());
                t.elapsed().as_secs_f64() * 1e3 / reps as f64
            })
            .collect(),
    )
}

/// A profile's table: each kernel's calls per pass, time per call and per pass, and their sum.
#[allow(dead_code)] // the profiles print it
pub fn print_kernels(rows: &[(&str, usize, f64)]) {
    println!("| kernel | calls per pass | ms per call | ms per pass |");
    println!("|---|---|---|---|");
    let mut sum = 0.0;
    for (name, calls, each) in rows {
        sum += *calls as f64 * each;
        println!("| {name} | {calls} | {each:.3} | {:.1} |", *calls as f64 * each);
    }
    println!("| sum of the kernels | | | {sum:.1} |");
}

/// The process's peak resident memory in MB (`VmHWM`; NaN where /proc is not there).
#[allow(dead_code)] // not every benchmark reports it
pub fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM")).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}
