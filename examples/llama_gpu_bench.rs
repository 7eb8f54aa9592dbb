//! Native benchmark of the Llama family on the GPU backend (wgpu: Vulkan, Mesa's lavapipe on a
//! machine without a GPU, or a real GPU's driver) against the CPU path, for a random-init model
//! of SmolLM2-135M's shape (30 layers, 9 heads sharing 3 KV heads):
//!
//!     cargo run --profile native --example llama_gpu_bench
//!
//! Prompt latency at 16 and 128 tokens, greedy decoding tokens/s with the KV cache (32 tokens
//! after a prompt of 112), and on the GPU the work each decoded token asks of the device
//! (`gpu::Counts`). Figures from lavapipe are a CPU's speed through Vulkan: a regression figure
//! for the GPU code path, not a GPU's.

use std::rc::Rc;
use std::time::Instant;

use attention_live::gpu::{Counts, Gpu};
use attention_live::llama::engine::Engine;
use attention_live::llama::gpu::GpuLlama;
use attention_live::llama::weights::Weights;
use attention_live::llama::{Config, ForwardOptions, Llama};
use pollster::block_on;

#[path = "common/measure.rs"]
mod measure;
use measure::median;

fn counts(engine: &Engine) -> Counts {
    match engine {
        Engine::Gpu(m) => m.gpu.counts(),
        Engine::Cpu(_) => Counts::default(),
    }
}

fn main() {
    let config = Config::smollm2_135m();
    let cpu = Rc::new(Llama { weights: Weights::random(&config, 1).with_layout(false), config });
    let mut engines = vec![Engine::Cpu(cpu.clone())];
    match block_on(Gpu::new()) {
        Ok(gpu) => {
            println!("GPU: {}", gpu.name);
            engines.push(Engine::Gpu(Rc::new(block_on(GpuLlama::upload(Rc::new(gpu), &cpu)).expect("uploads"))));
        }
        Err(e) => println!("no GPU: {e}"),
    }
    let opts = ForwardOptions::default();
    println!("| model | backend | prompt 16 tok | prompt 128 tok | generate tok/s (KV cache) |");
    println!("|---|---|---|---|---|");
    let mut notes = Vec::new();
    for e in &engines {
        let mut row = format!("| random SmolLM2-135M shape (F32) | {} |", e.backend());
        for t_len in [16usize, 128] {
            let tokens: Vec<u32> = (0..t_len as u32).map(|i| (i * 7919) % 49152).collect();
            let runs: Vec<f64> = (0..3)
                .map(|_| {
                    let t = Instant::now();
                    block_on(e.forward(&cpu, &tokens, &mut e.new_cache(t_len), &opts)).unwrap();
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            row += &format!(" {:.0} ms |", median(runs));
        }
        let (steps, prompt) = (32, (0..112u32).map(|i| (i * 7919) % 49152).collect::<Vec<_>>());
        let mut cache = e.new_cache(prompt.len() + steps);
        let mut next = argmax(&block_on(e.forward(&cpu, &prompt, &mut cache, &opts)).unwrap().logits);
        let (t, before) = (Instant::now(), counts(e));
        for _ in 0..steps {
            let out = block_on(e.forward(&cpu, &[next], &mut cache, &opts)).unwrap();
            next = argmax(&out.logits);
        }
        let tps = steps as f64 / t.elapsed().as_secs_f64();
        row += &format!(" {tps:.1} |");
        println!("{row}");
        if let Engine::Gpu(_) = e {
            let c = counts(e).since(&before);
            notes.push(format!(
                "{} per decoded token: {:.0} dispatches, {} submits, {:.1} KB read back",
                e.backend(),
                c.dispatches as f64 / steps as f64,
                c.submits / steps as u64,
                c.readback_bytes as f64 / 1e3 / steps as f64
            ));
        }
    }
    for n in notes {
        println!("{n}");
    }
}

/// The greedy choice from a row of logits (1, vocab).
fn argmax(logits: &ndarray::Array2<f32>) -> u32 {
    attention_live::numerics::softmax::argmax(logits.row(0))
}
