//! Numbers the chapters quote, computed with the book's own functions, and the quoted text
//! checked against them, so a change to either shows up here.

use attention_live::numerics::kv_cache::MODELS;

mod common;

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

/// efficient.md: a 32,768-token window costs a thousand times a 1,024-token one (32² = 1,024);
/// the naive way stores 268 MB of f32 weights at n = 8,192 (4 · 8192² = 268,435,456 bytes);
/// Mistral's 32 layers of window 4,096 reach 32 · 4,095 + 1 = 131,041 tokens back.
#[test]
fn attention_costs_quoted_in_efficient() {
    use attention_live::demos::attention_cost::full;
    use attention_live::numerics::flash::extra_bytes;
    use attention_live::numerics::window::receptive_field;
    let text = chapter("efficient");
    assert_eq!(full(32_768, 64).flops / full(1024, 64).flops, 1024.0);
    says(&text, "a model that reads 32,768 tokens does a thousand times more");
    assert_eq!(extra_bytes(8192, 8192, 64, 64).0, 268_435_456);
    says(&text, "268 MB at $n = 8192$");
    assert_eq!(receptive_field(4096, 32), 131_041);
    says(&text, "about 131,000 tokens back");
}

fn stories_and_induction() -> Vec<(&'static str, attention_live::gpt2::session::Session)> {
    ["stories", "induction"]
        .into_iter()
        .map(|m| {
            let (cfg, bytes) = common::checkpoint(&format!("static/models/{m}"));
            (m, attention_live::gpt2::session::Session::new(&cfg, &bytes).unwrap())
        })
        .collect()
}

/// efficient.md's Linformer paragraph, on the bundled models and texts the demo uses. Pet
/// stories, 16 heads over 53 tokens: the rank that keeps the output within 1% is 11 to 21 without
/// the mask and 34 to 43 with it; σ₀/σ₁ runs from 1.1 to 3.4, 1.8 at the median. Induction
/// model, layer 1, head 3: an induction head (on the period-9 text every row i ≥ 9 looks at a token
/// that followed an earlier occurrence of its own), with by far the flattest spectrum.
#[test]
fn low_rank_numbers_quoted_in_efficient() {
    use attention_live::demos::linformer::{analyze, text_for};
    let text = chapter("efficient");
    let (mut open_ranks, mut closed_ranks, mut ratios, mut flatness) = (vec![], vec![], vec![], vec![]);
    for (name, s) in stories_and_induction() {
        for layer in 0..s.config().n_layer {
            for head in 0..s.config().n_head {
                let h = s.head_qkv(1, text_for(name), layer, head).unwrap();
                let (open, closed) = (analyze(&h, false).unwrap(), analyze(&h, true).unwrap());
                let n = open.sigma.len();
                // σ at the middle of the spectrum against the largest: 1 for a permutation.
                flatness.push(((name, layer, head), open.sigma[n / 2] / open.sigma[0]));
                if name == "stories" {
                    assert_eq!(n, 53);
                    open_ranks.push(open.rank_for(0.01));
                    closed_ranks.push(closed.rank_for(0.01));
                    ratios.push(open.sigma[0] / open.sigma[1]);
                }
                if (name, layer, head) == ("induction", 1, 3) {
                    // Every row from the second period on looks at a token that followed an
                    // earlier occurrence of its own token (i − 8, i − 17, ...).
                    let hits = (9..n).filter(|&i| {
                        let row = &closed.weights[i];
                        let j = (0..n).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap();
                        j >= 1 && j < i && h.tokens[j - 1].text.trim() == h.tokens[i].text.trim()
                    });
                    assert_eq!(hits.count(), n - 9, "layer 1, head 3 is an induction head");
                }
            }
        }
    }
    let span = |v: &[usize]| (*v.iter().min().unwrap(), *v.iter().max().unwrap());
    assert_eq!(span(&open_ranks), (11, 21));
    says(&text, "need a rank of roughly 11 to 21, of 53, to keep the output within 1%");
    assert_eq!(span(&closed_ranks), (34, 43));
    says(&text, "the same heads now need ranks of 34 to 43");
    ratios.sort_by(f64::total_cmp);
    let median = (ratios[7] + ratios[8]) / 2.0;
    assert_eq!(format!("{:.1} to {:.1}", ratios[0], ratios[15]), "1.1 to 3.4");
    assert_eq!(format!("{median:.1}"), "1.8");
    says(&text, "1.1 to 3.4 times the second, 1.8 for the median head");
    flatness.sort_by(|a, b| b.1.total_cmp(&a.1));
    assert_eq!(flatness[0].0, ("induction", 1, 3), "{flatness:?}");
    assert!(flatness[0].1 > 5.0 * flatness[1].1, "{flatness:?}");
    says(&text, "look at layer 1, head 3, its induction head");
}
