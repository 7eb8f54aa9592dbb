//! Native benchmark of the GPT-2 engine's CPU path (the code the Web Worker runs, compiled
//! natively): load-and-parse time, prompt latency at 16 and 128 tokens, generation tokens/s
//! with the KV cache, and peak memory. Documented in the README:
//!
//!     cargo run --profile native --example gpt2_bench
//!
//! Models: the bundled "stories" and "induction" files, and a random-init GPT-2 small (124M)
//! made in memory and written as an F32 safetensors file first, so loading parses real bytes.

use std::time::Instant;

use attention_live::formats::safetensors::{write, Dtype};
use attention_live::gpt2::weights::Weights;
use attention_live::gpt2::{Config, ForwardOptions, Gpt2};

#[path = "common/measure.rs"]
mod measure;
use measure::{median, peak_rss_mb};

fn bench(name: &str, config: &str, bytes: &[u8]) {
    let t = Instant::now();
    let model = Gpt2::load(config, bytes).expect("loads");
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let opts = ForwardOptions::default();
    let mut row = format!("| {name} | {:.1} MB | {load_ms:.0} ms |", bytes.len() as f64 / 1e6);
    for t_len in [16usize, 128] {
        let t_len = t_len.min(model.config.n_positions);
        let tokens: Vec<u32> = (0..t_len as u32).map(|i| (i * 7919) % 50000).collect();
        let runs: Vec<f64> = (0..5)
            .map(|_| {
                let t = Instant::now();
                model.forward(&tokens, &mut model.new_cache(), &opts).unwrap();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        row += &format!(" {:.1} ms |", median(runs));
    }
    let steps = 32.min(model.config.n_positions - 16);
    let mut cache = model.new_cache();
    model.forward(&[464; 16], &mut cache, &opts).unwrap();
    let t = Instant::now();
    let mut next = 464u32;
    for _ in 0..steps {
        let out = model.forward(&[next], &mut cache, &opts).unwrap();
        next = attention_live::model::sample::argmax(out.logits.row(0));
    }
    let tps = steps as f64 / t.elapsed().as_secs_f64();
    row += &format!(" {tps:.1} | {:.0} MB |", peak_rss_mb());
    println!("{row}");
}

fn main() {
    println!(
        "| model | file | load + parse | prompt 16 tok | prompt 128 tok | generate tok/s (KV cache) | peak RSS so far |"
    );
    println!("|---|---|---|---|---|---|---|");
    for name in ["induction", "stories"] {
        let d = format!("{}/static/models/{name}", env!("CARGO_MANIFEST_DIR"));
        let cfg = std::fs::read_to_string(format!("{d}/config.json")).unwrap();
        bench(name, &cfg, &std::fs::read(format!("{d}/model.safetensors")).unwrap());
    }
    let cfg = Config::gpt2_small();
    let bytes = write(&Weights::random(&cfg, 1).named(), Dtype::F32, &[("format", "pt")]);
    let json = r#"{"model_type":"gpt2","vocab_size":50257,"n_positions":1024,"n_embd":768,"n_layer":12,"n_head":12}"#;
    bench("random GPT-2 124M (F32)", json, &bytes);
}
