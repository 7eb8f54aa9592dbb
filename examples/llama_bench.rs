//! Native benchmark of the Llama-family engine's CPU path (the code the browser will run,
//! compiled natively): load-and-parse time, prompt latency at 16 and 128 tokens, generation
//! tokens/s with the KV cache, the cache's size, and peak memory:
//!
//!     cargo run --profile native --example llama_bench
//!
//! Model: a random-init model of SmolLM2-135M's shape (30 layers, 9 heads, 3 KV heads), made in
//! memory and written as an F32 safetensors file first, so loading parses real bytes.

use std::time::Instant;

use attention_live::formats::safetensors::{write, Dtype};
use attention_live::llama::weights::Weights;
use attention_live::llama::{Config, ForwardOptions, Llama};

#[path = "common/measure.rs"]
mod measure;
use measure::{median, peak_rss_mb};

const SMOLLM2: &str = r#"{"model_type": "llama", "hidden_size": 576, "intermediate_size": 1536,
  "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3, "rms_norm_eps": 1e-05,
  "rope_theta": 100000, "rope_scaling": null, "tie_word_embeddings": true, "max_position_embeddings": 8192,
  "vocab_size": 49152, "hidden_act": "silu"}"#;

fn main() {
    let cfg = Config::smollm2_135m();
    let bytes = write(&Weights::random(&cfg, 1).named(), Dtype::F32, &[("format", "pt")]);
    let t = Instant::now();
    let model = Llama::load(SMOLLM2, &bytes).expect("loads");
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let opts = ForwardOptions::default();
    println!(
        "| model | file | load + parse | prompt 16 tok | prompt 128 tok | generate tok/s (KV cache) | \
         KV cache at 144 positions | peak RSS |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut row = format!("| random SmolLM2-135M shape (F32) | {:.0} MB | {load_ms:.0} ms |", bytes.len() as f64 / 1e6);
    for t_len in [16usize, 128] {
        let tokens: Vec<u32> = (0..t_len as u32).map(|i| (i * 7919) % 49152).collect();
        let runs: Vec<f64> = (0..5)
            .map(|_| {
                let t = Instant::now();
                model.forward(&tokens, &mut model.new_cache(), &opts).unwrap();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        row += &format!(" {:.1} ms |", median(runs));
    }
    let steps = 32;
    let mut cache = model.new_cache();
    let prompt: Vec<u32> = (0..112u32).map(|i| (i * 7919) % 49152).collect();
    model.forward(&prompt, &mut cache, &opts).unwrap();
    let t = Instant::now();
    let mut next = 464u32;
    for _ in 0..steps {
        let out = model.forward(&[next], &mut cache, &opts).unwrap();
        next = attention_live::numerics::softmax::argmax(out.logits.row(0));
    }
    let tps = steps as f64 / t.elapsed().as_secs_f64();
    row += &format!(" {tps:.1} | {:.2} MB | {:.0} MB |", cache.bytes() as f64 / 1e6, peak_rss_mb());
    println!("{row}");
}
