//! Numbers the chapters quote, computed with the book's own functions, and the quoted text
//! checked against them, so a change to either shows up here.

use attention_live::numerics::kv_cache::MODELS;

fn chapter(name: &str) -> String {
    std::fs::read_to_string(format!("{}/chapters/{name}.md", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn says(text: &str, quote: &str) {
    assert!(text.contains(quote), "the chapter should say “{quote}”");
}

const GIB: f64 = (1u64 << 30) as f64;

/// efficient.md: Llama 2 7B's full-context cache against its weights. Cache: 2 · 32 · 32 · 128 ·
/// 4096 · 2 bytes = 2 GiB. Weights: 2 · 6,738,415,616 bytes = 12.55 GiB, so the cache is
/// 1/6.27 of them (about a sixth, not a quarter); 16 sequences' caches, 32 GiB, are 2.55 times
/// the weights.
#[test]
fn the_kv_cache_is_a_sixth_of_llama_2s_weights() {
    let text = chapter("efficient");
    let llama = MODELS.iter().find(|m| m.name.starts_with("Llama 2 7B")).unwrap();
    let cache = llama.shape().bytes() as f64;
    let weights = llama.weight_bytes().expect("Llama 2 7B's parameter count") as f64;
    assert_eq!(cache / GIB, 2.0);
    says(&text, "that is 2 GiB per sequence");
    assert_eq!(format!("{:.1} GiB", weights / GIB), "12.6 GiB");
    assert_eq!(format!("{:.2} billion", llama.params.unwrap() as f64 / 1e9), "6.74 billion");
    says(&text, "about a sixth of the 12.6 GiB its 6.74 billion weights take");
    let ratio = weights / cache;
    assert!((ratio - 6.0).abs() < 0.5, "weights / cache = {ratio}");
    let batch = 16.0 * cache;
    assert_eq!(batch / GIB, 32.0);
    assert!((batch / weights - 2.5).abs() < 0.1, "{}", batch / weights);
    says(&text, "16 such sequences needs 32 GiB for the caches, two and a half times as much as for the model");
}
