//! Writes a random-init Llama-family checkpoint (`config.json`, F32 `model.safetensors` in the
//! public checkpoint's layout, and a `tokenizer.json` that fits it) for testing the page's
//! loading paths without the hub. Never committed:
//!
//!     cargo run --example write_random_llama -- /tmp/random-llama
//!     cargo run --example write_random_llama -- /tmp/random-smollm2 smollm2
//!
//! The first shape is small (2 layers, 6 query heads sharing 2 KV heads, 1,200 tokens) so the
//! browser test stays quick; the second is SmolLM2-135M's (`Config::smollm2_135m`, BF16 as the
//! hub's file, about 270 MB). The tokenizer is `tests/fixtures/llama/tokenizer/tokenizer.json`
//! (SmolLM2's configuration, 1,200 ids, written by `scripts/llama/make_tokenizer_fixture.py`);
//! for SmolLM2's shape its vocabulary is filled up to 49,152 ids with tokens no merge reaches
//! (`<|filler-N|>`), so it fits the model's embedding rows.

use attention_live::formats::safetensors::{write, Dtype};
use attention_live::llama::weights::Weights;
use attention_live::llama::Config;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "/tmp/random-llama".into());
    let smollm2 = std::env::args().nth(2).as_deref() == Some("smollm2");
    std::fs::create_dir_all(&dir).expect("can create the folder");
    let cfg = if smollm2 {
        Config::smollm2_135m()
    } else {
        Config {
            num_key_value_heads: 2,
            tie_word_embeddings: true,
            max_position_embeddings: 256,
            rope_theta: 100_000.0,
            rms_norm_eps: 1e-5,
            ..Config::new(1200, 96, 192, 2, 6)
        }
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
    let dtype = if smollm2 { Dtype::BF16 } else { Dtype::F32 };
    let bytes = write(&Weights::random(&cfg, 135).named(), dtype, &[("format", "pt")]);
    std::fs::write(format!("{dir}/model.safetensors"), &bytes).expect("writes model.safetensors");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/llama/tokenizer/tokenizer.json");
    let mut tokenizer: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).expect("reads the tokenizer fixture")).unwrap();
    let vocab = tokenizer["model"]["vocab"].as_object_mut().expect("a BPE vocabulary");
    for id in vocab.len()..cfg.vocab_size {
        vocab.insert(format!("<|filler-{id}|>"), id.into());
    }
    std::fs::write(format!("{dir}/tokenizer.json"), tokenizer.to_string()).expect("writes tokenizer.json");
    println!("wrote {dir}: {} parameters, {} bytes", cfg.n_params(), bytes.len());
}
