//! Writes a random-init GPT-2 small (124M, `GPT2Config()`'s shape, GPT-2's initialisation) as
//! `config.json` + F32 `model.safetensors` in the public checkpoint's layout (no prefix), for
//! testing the download path without the hub. Never committed (about 500 MB):
//!
//!     cargo run --example write_random_gpt2 -- /tmp/random-gpt2

use attention_live::formats::safetensors::{write, Dtype};
use attention_live::gpt2::weights::Weights;
use attention_live::gpt2::Config;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "/tmp/random-gpt2".into());
    std::fs::create_dir_all(&dir).expect("can create the folder");
    let cfg = Config::gpt2_small();
    let config = concat!(
        r#"{"model_type":"gpt2","vocab_size":50257,"n_positions":1024,"n_ctx":1024,"n_embd":768,"n_layer":12,"#,
        r#""n_head":12,"activation_function":"gelu_new","layer_norm_epsilon":1e-05}"#
    );
    std::fs::write(format!("{dir}/config.json"), config).expect("writes config.json");
    let bytes = write(&Weights::random(&cfg, 124).named(), Dtype::F32, &[("format", "pt")]);
    std::fs::write(format!("{dir}/model.safetensors"), &bytes).expect("writes model.safetensors");
    println!("wrote {dir}: {} parameters, {} bytes", cfg.n_params(), bytes.len());
}
