//! The GPT-2 engine against Hugging Face transformers: fixtures made by
//! `scripts/gpt2/make_fixtures.py` (versions and seeds in that file) from two small random
//! models, one F32 with the `transformer.` prefix, one F16 laid out like the public checkpoint.

//!
//! Every test body runs on each backend (`common::engines`): the CPU with row-major weights and
//! with the browser's packed ones, and the GPU when an adapter exists.

use std::rc::Rc;

use attention_live::gpt2::tokenizer::Tokenizer;
use attention_live::gpt2::{Capture, ForwardOptions, Gpt2};
use serde_json::Value;

use crate::common::{self, floats, ids, max_err};

/// Absolute tolerance on logits, attention weights and hidden states (f32 sums in a different
/// order than PyTorch's, plus the fixture's 6 significant digits).
const TOL: f32 = 1e-4;

fn dir(name: &str) -> String {
    format!("{}/tests/fixtures/gpt2/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn load(name: &str) -> (Rc<Gpt2>, Value) {
    let d = dir(name);
    let (cfg, bytes) = common::checkpoint(&format!("tests/fixtures/gpt2/{name}"));
    let reference: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{d}/reference.json")).unwrap()).unwrap();
    (Rc::new(Gpt2::load(&cfg, &bytes).unwrap()), reference)
}

fn full_pass_matches(name: &str) {
    let (model, r) = load(name);
    let tokens = ids(&r["tokens"]);
    let opts = ForwardOptions { capture: Capture::All, all_logits: true, hidden_states: true, ..Default::default() };
    for engine in common::engines(&model) {
        let b = common::label(&engine);
        let out = common::forward(&engine, &model, &tokens, &mut engine.new_cache(tokens.len()), &opts);
        let e = max_err(&out.logits, &floats(&r["logits"]));
        assert!(e < TOL, "{b} {name}: logits differ by {e}");
        for (l, a) in out.attentions.iter().enumerate() {
            let e = max_err(a.as_ref().unwrap(), &floats(&r["attentions"][l]));
            assert!(e < TOL, "{b} {name}: layer {l} attention differs by {e}");
        }
        assert_eq!(out.hidden_states.len(), model.config.n_layer + 1);
        for (l, h) in out.hidden_states.iter().enumerate() {
            let e = max_err(h, &floats(&r["hidden_states"][l]));
            assert!(e < TOL, "{b} {name}: hidden state {l} differs by {e}");
        }
    }
}

#[test]
fn f32_prefixed_checkpoint_matches_transformers() {
    full_pass_matches("a");
}

#[test]
fn f16_public_layout_checkpoint_matches_transformers() {
    full_pass_matches("b");
}

/// Running the prompt one token at a time through the KV cache gives, at every step, the same
/// last-position logits and attention row as the full pass.
#[test]
fn kv_cache_steps_equal_the_full_pass() {
    for name in ["a", "b"] {
        let (model, r) = load(name);
        let tokens = ids(&r["tokens"]);
        let vocab = model.config.vocab_size;
        let logits = floats(&r["logits"]);
        let opts = ForwardOptions { capture: Capture::Layer(1), ..Default::default() };
        let t = tokens.len();
        for engine in common::engines(&model) {
            let b = common::label(&engine);
            let mut cache = engine.new_cache(t);
            for (i, &tok) in tokens.iter().enumerate() {
                let out = common::forward(&engine, &model, &[tok], &mut cache, &opts);
                assert_eq!(cache.len(), i + 1);
                let e = max_err(&out.logits, &logits[i * vocab..(i + 1) * vocab]);
                assert!(e < TOL, "{b} {name} step {i}: logits differ by {e}");
                // Layer 1's weights for this query: (H, 1, i+1) against row i of the reference (H, T, T).
                let att = out.attentions[1].as_ref().unwrap();
                assert!(out.attentions[0].is_none(), "only the asked-for layer is captured");
                let reference = floats(&r["attentions"][1]);
                for h in 0..model.config.n_head {
                    let row = &reference[(h * t + i) * t..(h * t + i) * t + i + 1];
                    let e = max_err(att.slice(ndarray::s![h, 0, ..]), row);
                    assert!(e < TOL, "{b} {name} step {i} head {h}: attention differs by {e}");
                }
            }
        }
    }
}

#[test]
fn head_ablation_matches_zeroing_the_heads_in_transformers() {
    for name in ["a", "b"] {
        let (model, r) = load(name);
        let ablate: Vec<(usize, usize)> = r["ablate"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize))
            .collect();
        let opts = ForwardOptions { ablate, all_logits: true, ..Default::default() };
        let tokens = ids(&r["tokens"]);
        for engine in common::engines(&model) {
            let b = common::label(&engine);
            let out = common::forward(&engine, &model, &tokens, &mut engine.new_cache(tokens.len()), &opts);
            let e = max_err(&out.logits, &floats(&r["ablated_logits"]));
            assert!(e < TOL, "{b} {name}: ablated logits differ by {e}");
            // And the ablation changed something (the test could fail).
            let plain = floats(&r["logits"]);
            assert!(max_err(&out.logits, &plain) > 1e-3, "{b} {name}: ablation had no effect");
        }
    }
}

#[test]
fn greedy_continuation_with_the_cache_matches_generate() {
    for name in ["a", "b"] {
        let (model, r) = load(name);
        let want = ids(&r["greedy"]);
        assert_eq!(model.greedy(&ids(&r["tokens"]), want.len()).unwrap(), want, "{name}");
        // The same loop on each backend: the prompt once, then one token per step.
        for engine in common::engines(&model) {
            let mut cache = engine.new_cache(model.config.n_positions);
            let opts = ForwardOptions::default();
            let mut logits = common::forward(&engine, &model, &ids(&r["tokens"]), &mut cache, &opts).logits;
            let mut got = Vec::new();
            for _ in 0..want.len() {
                let next = attention_live::model::sample::argmax(logits.row(0));
                got.push(next);
                logits = common::forward(&engine, &model, &[next], &mut cache, &opts).logits;
            }
            assert_eq!(got, want, "{} {name}", common::label(&engine));
        }
    }
}

#[test]
fn tokenizer_ids_match_hugging_face() {
    let tok = Tokenizer::gpt2();
    let cases: Value = serde_json::from_str(&std::fs::read_to_string(dir("tokenizer.json")).unwrap()).unwrap();
    for case in cases.as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let want = ids(&case["ids"]);
        assert_eq!(tok.encode(text), want, "{text:?}");
        assert_eq!(tok.decode(&want), text, "decode of {text:?}");
    }
    // The book's running example (ids from ../shared/notes/gpt2-data.md, checked there against HF).
    let cat = tok.encode("My cat is small, cute, and fluffy. She likes belly rubs.");
    assert_eq!(tok.token_text(cat[1]), " cat");
    assert_eq!(tok.token_text(cat[10]), " She");
}
