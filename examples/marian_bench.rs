//! Native benchmark of the Marian engine's CPU path (the code the browser will run, compiled
//! natively), beside `bench/pytorch_marian.py` (the same shape in PyTorch) for the ratios:
//!
//!     cargo run --profile native --example marian_bench
//!     /tmp/ref/bin/python bench/pytorch_marian.py
//!
//! Model: random weights of `Helsinki-NLP/opus-mt-en-de`'s shape (6 + 6 layers of 8 heads, width
//! 512, 58,101 tokens), written as an F32 safetensors file first, so loading parses real bytes.
//! The source is 27 tokens (a 20-word sentence is about that in OPUS-MT's pieces), `</s>` last.
//! Greedy: 20 target tokens; beam search: 4 beams, 20 tokens at most.

use std::time::Instant;

use attention_live::formats::safetensors::{write, Dtype};
use attention_live::marian::weights::Weights;
use attention_live::marian::{BeamSettings, Config, Marian, Options};

#[path = "common/measure.rs"]
mod measure;
use measure::{median, peak_rss_mb};

const OPUS_MT_EN_DE: &str = r#"{"model_type": "marian", "vocab_size": 58101, "d_model": 512, "encoder_layers": 6,
  "decoder_layers": 6, "encoder_attention_heads": 8, "decoder_attention_heads": 8, "encoder_ffn_dim": 2048,
  "decoder_ffn_dim": 2048, "activation_function": "swish", "scale_embedding": true, "max_position_embeddings": 512,
  "pad_token_id": 58100, "decoder_start_token_id": 58100, "eos_token_id": 0, "static_position_embeddings": true,
  "share_encoder_decoder_embeddings": true, "tie_word_embeddings": true}"#;

fn main() {
    let cfg = Config::opus_mt_en_de();
    let bytes = write(&Weights::random(&cfg, 1).named(), Dtype::F32, &[("format", "pt")]);
    let t = Instant::now();
    let model = Marian::load(OPUS_MT_EN_DE, &bytes).expect("loads");
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    drop(bytes);
    let mut source: Vec<u32> = (0..26u32).map(|i| 100 + (i * 7919) % 58000).collect();
    source.push(0);
    let opts = Options::default();
    let time = |f: &mut dyn FnMut()| {
        let runs: Vec<f64> = (0..5)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        median(runs)
    };
    let encode_ms = time(&mut || {
        model.encode(&source, &opts).unwrap();
    });
    let first_ms = time(&mut || {
        let enc = model.encode(&source, &opts).unwrap();
        model.decode(&[cfg.decoder_start_token_id], &mut model.new_cache(&enc), &opts).unwrap();
    });
    // Greedy: 20 steps, whatever is written (a random model may write `</s>` early).
    let steps = 20;
    let greedy_ms = time(&mut || {
        let enc = model.encode(&source, &opts).unwrap();
        let mut cache = model.new_cache(&enc);
        let mut next = cfg.decoder_start_token_id;
        for _ in 0..steps {
            let out = model.decode(&[next], &mut cache, &opts).unwrap();
            next = attention_live::numerics::softmax::argmax(out.logits.row(0)).max(1);
        }
    });
    let set = BeamSettings { beams: 4, max_new: steps, length_penalty: 1.0 };
    let mut beam_steps = 0;
    let beam_ms = time(&mut || {
        beam_steps = model.beam_search(&source, set).unwrap().1.len();
    });
    println!(
        "| model | load + parse | encode 27 tok | first target token | greedy 20 tok/s | beam 4: steps, tok/s | \
         peak RSS |"
    );
    println!("|---|---|---|---|---|---|---|");
    println!(
        "| random opus-mt-en-de shape (F32) | {load_ms:.0} ms | {encode_ms:.1} ms | {first_ms:.1} ms | {:.1} | \
         {beam_steps}, {:.1} | {:.0} MB |",
        steps as f64 / (greedy_ms / 1e3),
        beam_steps as f64 / (beam_ms / 1e3),
        peak_rss_mb()
    );
}
