//! The training engine natively: steps per second on the benchmark configuration (2 layers,
//! 4 heads, width 64, T = 32, batch 32, MLP, learned positions), and the steps and time until
//! the lab's default run (repeated strings) is solved, as its induction circuit forms.
//!
//! `cargo run --profile native --example train_bench [steps] [threads]`

use std::time::Instant;

use attention_live::numerics::par;
use attention_live::train::{Positions, Task, TrainConfig, Trainer};

fn main() {
    let arg = |i: usize| std::env::args().nth(i).and_then(|s| s.parse::<usize>().ok());
    let steps = arg(1).unwrap_or(50);
    let threads = arg(2).unwrap_or(1).max(1);
    #[cfg(not(target_arch = "wasm32"))]
    if threads > 1 {
        // The asking thread takes parts too: a pool of threads − 1 besides it.
        par::spin::start_native(threads - 1);
    }
    par::set_threads(threads);
    let runs0 = par::split_runs();
    let bench = TrainConfig {
        task: Task::Copy,
        length: 16,
        n_layer: 2,
        n_head: 4,
        n_embd: 64,
        mlp: true,
        positions: Positions::Learned,
        lr: 1e-3,
        batch: 32,
        steps: steps + 5,
        seed: 1,
    };
    let mut t = Trainer::new(bench).expect("the benchmark configuration fits");
    for _ in 0..5 {
        t.step().expect("a finite step");
    }
    // Each step timed too: on a shared machine the fastest window of 10 steps is the steadier
    // figure for comparing two builds (the mean takes every pause of the machine).
    let mut times = Vec::with_capacity(steps);
    let start = Instant::now();
    for _ in 0..steps {
        let s = Instant::now();
        t.step().expect("a finite step");
        times.push(s.elapsed().as_secs_f64());
    }
    let s = start.elapsed().as_secs_f64();
    let best = times.windows(10.min(steps)).map(|w| w.iter().sum::<f64>() / w.len() as f64).fold(f64::MAX, f64::min);
    println!(
        "native engine: {:.1} steps/s, fastest 10 steps {:.1} steps/s (L2 H4 C64 T32 B32, {steps} steps, \
         {threads} thread(s), {:.1} split calls a step)",
        steps as f64 / s,
        1.0 / best,
        (par::split_runs() - runs0) as f64 / (steps + 5) as f64
    );

    let cfg = TrainConfig::default();
    let mut t = Trainer::new(cfg.clone()).expect("the default configuration fits");
    let start = Instant::now();
    let mut last = None;
    while !t.done() {
        let st = t.step().expect("a finite step");
        if st.step.is_multiple_of(100) {
            let snap = t.snapshot();
            println!(
                "step {:5}  loss {:.3}  acc {:.2}  probe loss {:.3}  induction {:.2}  previous {:.2}  {:.1} s",
                st.step,
                st.loss,
                st.accuracy,
                snap.probe_loss,
                snap.induction.iter().cloned().fold(0.0, f32::max),
                snap.previous.iter().cloned().fold(0.0, f32::max),
                start.elapsed().as_secs_f64()
            );
        }
        last = Some(st);
    }
    println!("{cfg:?}\nlast {last:?} after {:.1} s", start.elapsed().as_secs_f64());
}
