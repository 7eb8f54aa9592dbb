//! Native benchmark of the GPU backend (wgpu: Vulkan, e.g. Mesa's lavapipe on a machine without
//! a GPU, or a real GPU's driver) against the CPU path. Documented in the README:
//!
//!     cargo run --profile native --example gpu_bench [-- gpt2|attention|counts [stories|small]]
//!
//! 1. GPT-2: prompt latency (16 and 128 tokens) and greedy decoding tokens/s with the KV cache,
//!    on the CPU and on the GPU, for the bundled "stories" model and a random-init GPT-2 small.
//! 2. Attention alone (one head, d = 64, causal): the efficient-attention chapter's benchmark
//!    (`gpu::bench`: naive CPU, tiled CPU, the GPU's fused kernel), n = 128 … 8192: time, the
//!    intermediate memory each needs, and the GPU's largest difference from the naive result.
//!
//! 3. `counts` (only when asked): the work each forward pass asks of the GPU (dispatches,
//!    submissions, host writes, readbacks, bind groups; `gpu::Counts`), without timings. The
//!    `gpt2` table prints the same after it.
//!
//! Figures from lavapipe are a CPU's speed through Vulkan: a regression figure, not a GPU's.

use std::rc::Rc;
use std::time::Instant;

use attention_live::gpt2::engine::Engine;
use attention_live::gpt2::gpu::GpuGpt2;
use attention_live::gpt2::weights::Weights;
use attention_live::gpt2::{Config, ForwardOptions, Gpt2};
use attention_live::gpu::bench::{attention_row, AttentionRow};
use attention_live::gpu::{Counts, Gpu, GpuError, Precision};
use pollster::block_on;

#[path = "common/measure.rs"]
mod measure;
use measure::median;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The device's counts so far (zero on the CPU).
fn counts(engine: &Engine) -> Counts {
    match engine {
        Engine::Gpu(m) => m.gpu.counts(),
        Engine::Cpu(_) => Counts::default(),
    }
}

/// One row of the timing table; for the GPU, also the work asked of the device by the prompt
/// of 128 tokens and by each decoded token (`gpu::Counts`), printed after the table.
fn gpt2_row(name: &str, model: &Rc<Gpt2>, engine: &Engine, backend: &str, notes: &mut Vec<String>) {
    let opts = ForwardOptions::default();
    let mut row = format!("| {name} | {backend} |");
    let mut prompt_counts = Counts::default();
    for t_len in [16usize, 128] {
        let t_len = t_len.min(model.config.n_positions);
        let tokens: Vec<u32> = (0..t_len as u32).map(|i| (i * 7919) % model.config.vocab_size as u32).collect();
        let runs: Vec<f64> = (0..3)
            .map(|_| {
                let (t, before) = (Instant::now(), counts(engine));
                block_on(engine.forward(model, &tokens, &mut engine.new_cache(t_len), &opts)).unwrap();
                prompt_counts = counts(engine).since(&before);
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
    let mut token_counts = Vec::new();
    for _ in 0..steps {
        let before = counts(engine);
        let out = block_on(engine.forward(model, &[next], &mut cache, &opts)).unwrap();
        token_counts.push(counts(engine).since(&before));
        next = attention_live::model::sample::argmax(out.logits.row(0));
    }
    row += &format!(" {:.1} |", steps as f64 / t.elapsed().as_secs_f64());
    println!("{row}");
    if let Engine::Gpu(_) = engine {
        // The first token builds its bind groups; the later ones reuse them.
        let (first, later) = (token_counts[0], token_counts.last().copied().unwrap_or_default());
        notes.push(format!(
            "- {name}, {backend}: prompt of 128 tokens: {prompt_counts}; first decoded token: {first}; \
             each later token: {later}"
        ));
    }
}

/// The work asked of the GPU, without timings (quick even on a software adapter): a prompt of
/// 64 tokens, then 3 greedily decoded tokens, for each model and weight precision; with f16
/// weights, also how far they move the prompt's logits from the f32 ones.
fn gpt2_counts(gpu: &Rc<Gpu>) {
    println!("| model | weights | prompt of 64 tokens | first decoded token | each later token | logits vs f32 |");
    println!("|---|---|---|---|---|---|");
    for (name, model) in models() {
        let mut f32_logits = None;
        for precision in [Precision::F32, Precision::F16] {
            let on_gpu = block_on(GpuGpt2::upload_with(gpu.clone(), &model, precision)).expect("upload");
            if on_gpu.precision() != precision {
                continue; // no shader-f16
            }
            let engine = Engine::Gpu(Rc::new(on_gpu));
            let opts = ForwardOptions::default();
            let mut cache = engine.new_cache(model.config.n_positions);
            let tokens: Vec<u32> = (0..64u32).map(|i| (i * 7919) % model.config.vocab_size as u32).collect();
            let mut before = counts(&engine);
            let mut out = block_on(engine.forward(&model, &tokens, &mut cache, &opts)).unwrap();
            let mut row = vec![counts(&engine).since(&before)];
            let change = match &f32_logits {
                None => {
                    f32_logits = Some(out.logits.clone());
                    String::new()
                }
                Some(f) => {
                    let d = (f - &out.logits).iter().fold(0.0f32, |m, e| m.max(e.abs()));
                    let top = f.iter().fold(0.0f32, |m, e| m.max(e.abs()));
                    format!("max change {d:.1e} (largest logit {top:.2})")
                }
            };
            for _ in 0..3 {
                let next = attention_live::model::sample::argmax(out.logits.row(0));
                before = counts(&engine);
                out = block_on(engine.forward(&model, &[next], &mut cache, &opts)).unwrap();
                row.push(counts(&engine).since(&before));
            }
            println!("| {name} | {precision:?} | {} | {} | {} | {change} |", row[0], row[1], row[3]);
        }
    }
}

/// The bundled "stories" model and a random-init GPT-2 small; with a second argument, only
/// those whose name contains it (`-- gpt2 stories`).
fn models() -> Vec<(&'static str, Rc<Gpt2>)> {
    let dir = format!("{}/static/models/stories", env!("CARGO_MANIFEST_DIR"));
    let stories = Rc::new(
        Gpt2::load(
            &std::fs::read_to_string(format!("{dir}/config.json")).unwrap(),
            &std::fs::read(format!("{dir}/model.safetensors")).unwrap(),
        )
        .unwrap(),
    );
    let cfg = Config::gpt2_small();
    let small = Rc::new(Gpt2 { weights: Weights::random(&cfg, 1), config: cfg });
    let only = std::env::args().nth(2).unwrap_or_default();
    let all = [("stories (bundled)", stories), ("GPT-2 small, random init", small)];
    all.into_iter().filter(|(name, _)| name.contains(only.as_str())).collect()
}

fn gpt2(gpu: Option<Rc<Gpu>>) {
    println!("| model | backend | prompt 16 | prompt 128 | decode tokens/s |\n|---|---|---|---|---|");
    let mut notes = Vec::new();
    for (name, model) in &models() {
        gpt2_row(name, model, &Engine::Cpu(model.clone()), "CPU", &mut notes);
        if let Some(g) = &gpu {
            for (precision, label) in [(Precision::F32, "GPU, f32 weights"), (Precision::F16, "GPU, f16 weights")] {
                let on_gpu = block_on(GpuGpt2::upload_with(g.clone(), model, precision)).expect("upload");
                if on_gpu.precision() == precision {
                    gpt2_row(name, model, &Engine::Gpu(Rc::new(on_gpu)), label, &mut notes);
                } else {
                    println!("| {name} | {label} | the adapter has no shader-f16 | | |");
                }
            }
        }
    }
    if !notes.is_empty() {
        println!("\nWork asked of the GPU (dispatches, submissions, host writes, readbacks, bind groups created):\n");
        println!("{}", notes.join("\n"));
    }
}

fn attention(gpu: Result<&Gpu, &GpuError>) {
    const D: usize = 64;
    println!(
        "| n | naive CPU | tiled CPU | GPU fused | naive extra memory | tiled extra memory | GPU max difference |"
    );
    println!("|---|---|---|---|---|---|---|");
    let start = Instant::now();
    let now = || ms(start);
    for n in [128usize, 256, 512, 1024, 2048, 4096, 8192] {
        // The page's benchmark (`gpu::bench`), median of 5 runs up to n = 1024.
        let rows: Vec<AttentionRow> =
            (0..if n <= 1024 { 5 } else { 1 }).map(|_| block_on(attention_row(gpu, n, D, 5, &now))).collect();
        let med =
            |f: &dyn Fn(&AttentionRow) -> Option<f64>| rows.iter().map(f).collect::<Option<Vec<f64>>>().map(median);
        let r = &rows[0];
        let gpu_cell =
            med(&|x| x.gpu_ms).map_or_else(|| r.gpu_note.clone().unwrap_or_default(), |m| format!("{m:.1} ms"));
        let diff = r.gpu_max_diff.map_or(String::new(), |e| format!("{e:.1e}"));
        println!(
            "| {n} | {:.1} ms | {:.1} ms | {gpu_cell} | {:.1} MB | {:.1} KB | {diff} |",
            med(&|x| Some(x.naive_ms)).unwrap_or(f64::NAN),
            med(&|x| Some(x.tiled_ms)).unwrap_or(f64::NAN),
            r.naive_bytes as f64 / 1e6,
            r.tiled_bytes as f64 / 1e3
        );
    }
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let gpu = block_on(Gpu::new()).map(Rc::new);
    match &gpu {
        Ok(g) => println!("GPU: {}\n", g.name),
        Err(e) => println!("GPU: none ({e}); CPU figures only\n"),
    }
    if which.is_empty() || which == "gpt2" {
        gpt2(gpu.as_ref().ok().cloned());
        println!();
    }
    if which.is_empty() || which == "attention" {
        attention(gpu.as_deref());
    }
    if which == "counts" {
        match &gpu {
            Ok(g) => gpt2_counts(g),
            Err(e) => println!("no counts without a GPU: {e}"),
        }
    }
}
