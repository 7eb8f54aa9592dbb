//! Native benchmark of the GPU backend (wgpu: Vulkan, e.g. Mesa's lavapipe on a machine without
//! a GPU, or a real GPU's driver) against the CPU path. Documented in the README:
//!
//!     cargo run --profile native --example gpu_bench [-- gpt2|attention]
//!
//! 1. GPT-2: prompt latency (16 and 128 tokens) and greedy decoding tokens/s with the KV cache,
//!    on the CPU and on the GPU, for the bundled "stories" model and a random-init GPT-2 small.
//! 2. Attention alone (one head, d = 64, causal): naive CPU (stores the n × n weights), tiled CPU
//!    (online softmax, `numerics::flash`) and the GPU's fused kernel, n = 128 … 8192: time, the
//!    intermediate memory each needs, and the GPU's largest difference from the naive result.
//!
//! Figures from lavapipe are a CPU's speed through Vulkan: a regression figure, not a GPU's.

use std::rc::Rc;
use std::time::Instant;

use attention_live::gpt2::engine::Engine;
use attention_live::gpt2::weights::Weights;
use attention_live::gpt2::{Config, ForwardOptions, Gpt2};
use attention_live::gpu::gpt2::GpuGpt2;
use attention_live::gpu::{Batch, Gpu, Kernel};
use attention_live::numerics::flash::{extra_bytes, naive_attention, tiled_attention};
use attention_live::numerics::rng::Rng;
use ndarray::{concatenate, Array2, Axis};
use pollster::block_on;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn gpt2_row(name: &str, model: &Rc<Gpt2>, engine: &Engine) {
    let opts = ForwardOptions::default();
    let mut row = format!("| {name} | {} |", if engine.backend() == "cpu" { "CPU" } else { "GPU" });
    for t_len in [16usize, 128] {
        let t_len = t_len.min(model.config.n_positions);
        let tokens: Vec<u32> = (0..t_len as u32).map(|i| (i * 7919) % model.config.vocab_size as u32).collect();
        let runs: Vec<f64> = (0..3)
            .map(|_| {
                let t = Instant::now();
                block_on(engine.forward(model, &tokens, &mut engine.new_cache(t_len), &opts)).unwrap();
                ms(t)
            })
            .collect();
        row += &format!(" {:.1} ms |", median(runs));
    }
    let steps = 32.min(model.config.n_positions - 16);
    let mut cache = engine.new_cache(model.config.n_positions);
    block_on(engine.forward(model, &[464; 16], &mut cache, &opts)).unwrap();
    let t = Instant::now();
    let mut next = 464u32;
    for _ in 0..steps {
        let out = block_on(engine.forward(model, &[next], &mut cache, &opts)).unwrap();
        next = attention_live::gpt2::sample::argmax(out.logits.row(0));
    }
    row += &format!(" {:.1} |", steps as f64 / t.elapsed().as_secs_f64());
    println!("{row}");
}

fn gpt2(gpu: Option<Rc<Gpu>>) {
    println!("| model | backend | prompt 16 | prompt 128 | decode tokens/s |\n|---|---|---|---|---|");
    let dir = format!("{}/static/models/stories", env!("CARGO_MANIFEST_DIR"));
    let stories = Rc::new(Gpt2::load(&std::fs::read_to_string(format!("{dir}/config.json")).unwrap(), &std::fs::read(format!("{dir}/model.safetensors")).unwrap()).unwrap());
    let cfg = Config::gpt2_small();
    let small = Rc::new(Gpt2 { weights: Weights::random(&cfg, 1), config: cfg });
    for (name, model) in [("stories (bundled)", &stories), ("GPT-2 small, random init", &small)] {
        gpt2_row(name, model, &Engine::Cpu(model.clone()));
        if let Some(g) = &gpu {
            let on_gpu = block_on(GpuGpt2::upload(g.clone(), model)).expect("upload");
            gpt2_row(name, model, &Engine::Gpu(Rc::new(on_gpu)));
        }
    }
}

fn attention(gpu: Option<Rc<Gpu>>) {
    const D: usize = 64;
    const TILE: usize = 64;
    println!("| n | naive CPU | tiled CPU | GPU fused | naive extra memory | tiled extra memory | GPU max difference |\n|---|---|---|---|---|---|---|");
    let mut rng = Rng::new(5);
    for n in [128usize, 256, 512, 1024, 2048, 4096, 8192] {
        let mut rand = || Array2::from_shape_fn((n, D), |_| rng.normal() as f32);
        let (q, k, v) = (rand(), rand(), rand());
        let reps = if n <= 1024 { 5 } else { 1 };
        let time = |f: &mut dyn FnMut() -> Array2<f32>| -> (f64, Array2<f32>) {
            let mut out = None;
            let runs = (0..reps)
                .map(|_| {
                    let t = Instant::now();
                    out = Some(f());
                    ms(t)
                })
                .collect();
            (median(runs), out.expect("at least one run"))
        };
        let (t_naive, want) = time(&mut || naive_attention(q.view(), k.view(), v.view(), true));
        let (t_tiled, _) = time(&mut || tiled_attention(q.view(), k.view(), v.view(), true, TILE));
        let gpu_cell = gpu.as_ref().map_or(("no adapter".to_string(), "".to_string()), |g| {
            // The fused kernel reads queries from a (n, 3d) [Q | K | V] buffer and keys and values
            // from (n, d) caches, as in GPT-2. Uploads are outside the timing.
            let qkv = concatenate(Axis(1), &[q.view(), k.view(), v.view()]).unwrap();
            let (qb, kb, vb, yb) = (g.upload("qkv", &qkv.iter().copied().collect::<Vec<f32>>()), g.upload("k", k.as_slice().unwrap()), g.upload("v", v.as_slice().unwrap()), g.buffer("y", n * D));
            let scale = (1.0 / (D as f32).sqrt()).to_bits();
            let run = || {
                let mut b = Batch::new(g);
                b.add(Kernel::Attention, &[n as u32, 0, 1, D as u32, D as u32, 0, scale, 0], &[&qb, &kb, &vb, &yb], [n as u32, 1, 1]);
                b.submit();
                g.poll();
            };
            run(); // warm-up (pipeline caches)
            let runs = (0..reps)
                .map(|_| {
                    let t = Instant::now();
                    run();
                    ms(t)
                })
                .collect();
            let got = block_on(g.read(&yb, 0, n * D)).unwrap();
            let err = got.iter().zip(want.iter()).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
            (format!("{:.1} ms", median(runs)), format!("{err:.1e}"))
        });
        let (naive_b, tiled_b) = extra_bytes(n, n, D, TILE);
        println!("| {n} | {t_naive:.1} ms | {t_tiled:.1} ms | {} | {:.1} MB | {:.1} KB | {} |", gpu_cell.0, naive_b as f64 / 1e6, tiled_b as f64 / 1e3, gpu_cell.1);
    }
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let gpu = match block_on(Gpu::new()) {
        Ok(g) => {
            println!("GPU: {}\n", g.name);
            Some(Rc::new(g))
        }
        Err(e) => {
            println!("GPU: none ({e}); CPU figures only\n");
            None
        }
    };
    if which.is_empty() || which == "gpt2" {
        gpt2(gpu.clone());
        println!();
    }
    if which.is_empty() || which == "attention" {
        attention(gpu);
    }
}
