//! The bundled Llama-family model (static/models/stories-llama, trained by
//! `scripts/llama/train_bundled.py` on the same pet stories as the bundled GPT-2), run by our
//! engine and tokenizer: the ids, logits and greedy continuations `transformers` computes on the
//! shipped files (tests/fixtures/llama/stories, written by the same script), and the card's
//! numbers against the files.

use attention_live::formats::safetensors::{Dtype, SafeTensors};
use attention_live::llama::{Capture, ForwardOptions, Llama, Tokenizer};
use serde_json::Value;

use crate::common::{self, ids};

const DIR: &str = "static/models/stories-llama";

/// Absolute tolerance on logits. The weights are F16, but the reference did not run in F16: the
/// script widened the shipped F16 numbers to f32 and `transformers` computed in f32, as the engine
/// does, so no rounding of the weights separates the two; only the order of the sums differs (a
/// few ulps per product: 8e-6 measured on logits up to 11). 1e-4 leaves room for that, while a real
/// mistake (a wrong RoPE pairing, a query head reading another group's KV head, the tokenizer
/// splitting a word differently) moves the logits by far more than 0.1.
const TOL: f32 = 1e-4;

fn read(name: &str) -> String {
    std::fs::read_to_string(format!("{}/{DIR}/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// The shipped model in both CPU layouts (row-major, as natively, and packed, as in the browser),
/// its tokenizer and its card.
fn bundled() -> ([Llama; 2], Tokenizer, Value) {
    let (cfg, bytes) = common::checkpoint(DIR);
    let plain = Llama::load(&cfg, &bytes).unwrap();
    let packed = Llama { config: plain.config.clone(), weights: plain.weights.with_layout(true) };
    let tok = Tokenizer::from_json(&read("tokenizer.json")).unwrap();
    tok.check_vocab(plain.config.vocab_size).unwrap();
    ([plain, packed], tok, json(&read("card.json")))
}

fn reference() -> Vec<Value> {
    let path = format!("{}/tests/fixtures/llama/stories/reference.json", env!("CARGO_MANIFEST_DIR"));
    json(&std::fs::read_to_string(path).unwrap())["cases"].as_array().unwrap().clone()
}

#[test]
fn ids_logits_and_greedy_continuations_match_transformers() {
    let (models, tok, _) = bundled();
    let cases = reference();
    assert_eq!(cases.len(), 2);
    for case in &cases {
        let text = case["text"].as_str().unwrap();
        let prompt = tok.encode(text);
        assert_eq!(prompt, ids(&case["ids"]), "ids of {text:?}");
        let theirs: Vec<f32> =
            case["last_logits"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
        let greedy = ids(&case["greedy"]);
        assert_eq!(greedy.len(), 20);
        for (layout, model) in ["row-major", "packed"].iter().zip(&models) {
            let out = model.forward(&prompt, &mut model.new_cache(), &ForwardOptions::default()).unwrap();
            // (1, vocab): the last position's logits
            assert_eq!(out.logits.len(), theirs.len());
            let e = out.logits.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
            eprintln!("{text:?} {layout}: logits differ by at most {e:.1e}");
            assert!(e < TOL, "{text:?} {layout}: logits differ from transformers' by {e}");
            assert_eq!(model.greedy(&prompt, 20).unwrap(), greedy, "{text:?} {layout}: greedy continuation");
        }
        eprintln!("{text:?} → {:?}", tok.decode(&greedy));
    }
}

#[test]
fn the_card_matches_the_files() {
    let (cfg, bytes) = common::checkpoint(DIR);
    let ([model, _], tok, card) = bundled();
    let c = &model.config;
    let arch = &card["architecture"];
    let field = |k: &str| arch[k].as_u64().unwrap_or_else(|| panic!("card: architecture.{k}")) as usize;
    assert_eq!(arch["model_type"], "llama");
    assert_eq!(json(&cfg)["model_type"], "llama");
    for (k, v) in [
        ("hidden_size", c.hidden_size),
        ("intermediate_size", c.intermediate_size),
        ("num_hidden_layers", c.num_hidden_layers),
        ("num_attention_heads", c.num_attention_heads),
        ("num_key_value_heads", c.num_key_value_heads),
        ("head_dim", c.head_dim),
        ("max_position_embeddings", c.max_position_embeddings),
        ("vocab_size", c.vocab_size),
    ] {
        assert_eq!(field(k), v, "card's {k}");
    }
    assert_eq!(arch["rope_theta"].as_f64().unwrap(), c.rope_theta);
    assert_eq!(arch["tie_word_embeddings"].as_bool(), Some(c.tie_word_embeddings));
    // Grouped-query attention, the thing the book shows on it: fewer KV heads than query heads.
    assert!(c.num_key_value_heads < c.num_attention_heads && c.group_size() >= 2, "{c:?}");
    // The parameter count: the config's formula, the tensors in the file, the card.
    let st = SafeTensors::parse(&bytes).unwrap();
    let in_file: usize = st.tensors.values().map(|i| i.shape.iter().product::<usize>()).sum();
    assert!(st.tensors.values().all(|i| i.dtype == Dtype::F16), "every tensor is F16");
    assert_eq!(in_file, c.n_params());
    assert_eq!(card["parameters"].as_u64(), Some(in_file as u64));
    // Within the size a phone downloads for it, and as the card says.
    assert_eq!(card["file_bytes"].as_u64(), Some(bytes.len() as u64));
    assert!(bytes.len() <= 15_000_000, "{} bytes", bytes.len());
    // The tokenizer's vocabulary fills the embedding exactly; <|endoftext|> is 0, as SmolLM2's.
    assert_eq!(tok.len(), c.vocab_size);
    assert_eq!(tok.added_id("<|endoftext|>"), Some(0));
    assert!(card["val_perplexity"].as_f64().unwrap() > 1.0);
}

#[test]
fn the_cards_greedy_samples_are_the_models() {
    let ([model, _], tok, card) = bundled();
    let eot = tok.added_id("<|endoftext|>").unwrap();
    let samples = card["greedy_samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3);
    let prompts = ["My dog is", "There was a small fox called", "Anna and Tom went to the farm."];
    for (sample, prompt) in samples.iter().zip(prompts) {
        // The card's sample: the prompt and 30 greedy tokens, cut after the first <|endoftext|>.
        let mut ids = tok.encode(prompt);
        let mut out = model.greedy(&ids, 30).unwrap();
        if let Some(end) = out.iter().position(|&t| t == eot) {
            out.truncate(end + 1);
        }
        ids.extend(out);
        assert_eq!(tok.decode(&ids), sample.as_str().unwrap(), "the card's sample for {prompt:?}");
    }
}

#[test]
fn the_cards_she_cat_head_is_the_engines() {
    let ([model, _], tok, card) = bundled();
    let text = "My cat is small, cute, and fluffy. She likes belly rubs.";
    let ids = tok.encode(text);
    let find = |w: &str| {
        let id = tok.encode(w)[0];
        ids.iter().position(|&i| i == id).unwrap_or_else(|| panic!("{w:?} is one token of the prompt"))
    };
    let (she, cat) = (find(" She"), find(" cat"));
    let out =
        model.forward(&ids, &mut model.new_cache(), &ForwardOptions { capture: Capture::All, ..Default::default() });
    let att = out.unwrap().attentions;
    // The card lists every head's weight from "She" on "cat" (from transformers): the engine's agree.
    let listed = card["she_to_cat_weights"].as_array().unwrap();
    assert_eq!(listed.len(), model.config.num_hidden_layers);
    for (l, (a, row)) in att.iter().zip(listed).enumerate() {
        let a = a.as_ref().unwrap(); // (H, T, T)
        for (h, w) in row.as_array().unwrap().iter().enumerate() {
            let w = w.as_f64().unwrap() as f32;
            assert!((a[[h, she, cat]] - w).abs() < 0.002, "layer {l} head {h}: {} vs the card's {w}", a[[h, she, cat]]);
        }
    }
    let Some(head) = card["she_cat_head"].as_object() else {
        eprintln!("the card names no head whose largest weight from She is on cat");
        return;
    };
    let (l, h) = (head["layer"].as_u64().unwrap() as usize, head["head"].as_u64().unwrap() as usize);
    let row = att[l].as_ref().unwrap().slice(ndarray::s![h, she, ..]).to_owned();
    let best = row.iter().enumerate().fold((0, f32::MIN), |b, (j, &w)| if w > b.1 { (j, w) } else { b }).0;
    assert_eq!(best, cat, "layer {l} head {h}: She's largest weight goes to token {best}, not cat");
    let want = head["weight"].as_f64().unwrap() as f32;
    assert!((row[cat] - want).abs() < 0.002, "weight {} vs the card's {want}", row[cat]);
}
