//! Writes a random-init Marian translation checkpoint of `Helsinki-NLP/opus-mt-en-de`'s shape
//! (`config.json`, F32 `model.safetensors` under the checkpoint's names, about 300 MB) with a
//! tokenizer that fits it, for testing the page's loading paths without the hub. Never committed:
//!
//!     cargo run --example write_random_marian -- /tmp/random-opus-mt-en-de
//!
//! The tokenizer is `tests/fixtures/marian/tokenizer` (OPUS-MT's configuration: two SentencePiece
//! unigram models and `vocab.json`, 439 ids, written by `scripts/marian/make_tokenizer_fixture.py`)
//! with `<pad>` moved to the model's pad and start token, 58,100, as in the real checkpoint.

use attention_live::formats::safetensors::{write, Dtype};
use attention_live::marian::weights::Weights;
use attention_live::marian::Config;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "/tmp/random-opus-mt-en-de".into());
    std::fs::create_dir_all(&dir).expect("can create the folder");
    let cfg = Config::opus_mt_en_de();
    let config = serde_json::json!({
        "architectures": ["MarianMTModel"],
        "model_type": "marian",
        "activation_function": "swish",
        "d_model": cfg.d_model,
        "encoder_layers": cfg.encoder_layers,
        "decoder_layers": cfg.decoder_layers,
        "encoder_attention_heads": cfg.encoder_attention_heads,
        "decoder_attention_heads": cfg.decoder_attention_heads,
        "encoder_ffn_dim": cfg.encoder_ffn_dim,
        "decoder_ffn_dim": cfg.decoder_ffn_dim,
        "max_position_embeddings": cfg.max_position_embeddings,
        "scale_embedding": cfg.scale_embedding,
        "static_position_embeddings": true,
        "share_encoder_decoder_embeddings": true,
        "tie_word_embeddings": cfg.tie_word_embeddings,
        "vocab_size": cfg.vocab_size,
        "decoder_vocab_size": cfg.vocab_size,
        "pad_token_id": cfg.pad_token_id,
        "decoder_start_token_id": cfg.decoder_start_token_id,
        "eos_token_id": cfg.eos_token_id,
        "forced_eos_token_id": cfg.eos_token_id,
    });
    std::fs::write(format!("{dir}/config.json"), serde_json::to_string_pretty(&config).unwrap())
        .expect("writes config.json");
    let bytes = write(&Weights::random(&cfg, 58).named(), Dtype::F32, &[("format", "pt")]);
    std::fs::write(format!("{dir}/model.safetensors"), &bytes).expect("writes model.safetensors");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/marian/tokenizer");
    for file in ["source.spm", "target.spm"] {
        std::fs::copy(format!("{fixture}/{file}"), format!("{dir}/{file}")).expect("copies the tokenizer");
    }
    let vocab = std::fs::read_to_string(format!("{fixture}/vocab.json")).expect("reads vocab.json");
    let mut vocab: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&vocab).unwrap();
    vocab.insert("<pad>".into(), cfg.pad_token_id.into());
    std::fs::write(format!("{dir}/vocab.json"), serde_json::Value::Object(vocab).to_string())
        .expect("writes vocab.json");
    println!("wrote {dir}: {} parameters, {} bytes", cfg.n_params(), bytes.len());
}
