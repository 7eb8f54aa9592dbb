//! Writes a random-init Llama-family checkpoint (`config.json`, F32 `model.safetensors` in the
//! public checkpoint's layout, and a `tokenizer.json` that fits it) for testing the page's
//! loading paths without the hub. Never committed:
//!
//!     cargo run --example write_random_llama -- /tmp/random-llama
//!
//! The shape is small (2 layers, 6 query heads sharing 2 KV heads, 1,200 tokens) so the browser
//! test stays quick; the tokenizer is `tests/fixtures/llama/tokenizer/tokenizer.json` (SmolLM2's
//! configuration, 1,200 ids, written by `scripts/llama/make_tokenizer_fixture.py`).

use attention_live::formats::safetensors::{write, Dtype};
use attention_live::llama::weights::Weights;
use attention_live::llama::Config;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "/tmp/random-llama".into());
    std::fs::create_dir_all(&dir).expect("can create the folder");
    let cfg = Config {
        num_key_value_heads: 2,
        tie_word_embeddings: true,
        max_position_embeddings: 256,
        rope_theta: 100_000.0,
        rms_norm_eps: 1e-5,
        ..Config::new(1200, 96, 192, 2, 6)
    };
    let config = serde_json::json!({
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.hidden_size,
        "intermediate_size": cfg.intermediate_size,
        "num_hidden_layers": cfg.num_hidden_layers,
        "num_attention_heads": cfg.num_attention_heads,
        "num_key_value_heads": cfg.num_key_value_heads,
        "head_dim": cfg.head_dim,
        "hidden_act": "silu",
        "max_position_embeddings": cfg.max_position_embeddings,
        "rms_norm_eps": cfg.rms_norm_eps,
        "rope_theta": cfg.rope_theta,
        "tie_word_embeddings": cfg.tie_word_embeddings,
        "bos_token_id": 0,
        "eos_token_id": 0,
    });
    std::fs::write(format!("{dir}/config.json"), serde_json::to_string_pretty(&config).unwrap())
        .expect("writes config.json");
    let bytes = write(&Weights::random(&cfg, 135).named(), Dtype::F32, &[("format", "pt")]);
    std::fs::write(format!("{dir}/model.safetensors"), &bytes).expect("writes model.safetensors");
    let tokenizer = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/llama/tokenizer/tokenizer.json");
    std::fs::copy(tokenizer, format!("{dir}/tokenizer.json")).expect("copies tokenizer.json");
    println!("wrote {dir}: {} parameters, {} bytes", cfg.n_params(), bytes.len());
}
