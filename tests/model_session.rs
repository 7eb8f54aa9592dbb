//! A session of either family (`gpt2::model_session`): a Llama-family checkpoint answers the
//! page's questions with what its engine computes (tokens, attention per query head, next-token
//! probabilities, knock-outs, generation with the KV cache), in the replies GPT-2's session
//! sends; the family comes from config.json, and what cannot load is refused with a message.
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

use std::rc::Rc;

use attention_live::gpt2::model_session::{family, ModelSession};
use attention_live::gpt2::protocol::{Family, Query, Reply, Source};
use attention_live::gpu::Gpu;
use attention_live::llama::{Capture, ForwardOptions, Llama, Tokenizer};
use pollster::block_on;

mod common;

fn fixture(name: &str) -> (String, Vec<u8>) {
    common::checkpoint(&format!("tests/fixtures/llama/{name}"))
}

fn tokenizer300() -> String {
    let path = format!("{}/tests/fixtures/llama/tokenizer300/tokenizer.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

fn llama(name: &str) -> ModelSession {
    let (cfg, bytes) = fixture(name);
    ModelSession::new(&cfg, &bytes, Some(&tokenizer300())).expect("the fixture and its tokenizer load")
}

fn query(prompt: &str) -> Query {
    Query { id: 7, prompt: prompt.into(), top: 5, temperature: 1.0, top_p: 1.0, ..Default::default() }
}

fn softmax(row: &[f32]) -> Vec<f64> {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) as f64;
    let e: Vec<f64> = row.iter().map(|&v| (v as f64 - max).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|v| v / sum).collect()
}

#[test]
fn the_family_comes_from_config_json() {
    assert_eq!(family(r#"{"model_type": "llama"}"#).unwrap(), Family::Llama);
    assert_eq!(family(r#"{"architectures": ["LlamaForCausalLM"]}"#).unwrap(), Family::Llama);
    assert_eq!(family(r#"{"model_type": "gpt2"}"#).unwrap(), Family::Gpt2);
    assert_eq!(family(r#"{"n_layer": 2}"#).unwrap(), Family::Gpt2, "the book's own checkpoints say nothing");
    let e = family(r#"{"model_type": "mistral"}"#).unwrap_err().to_string();
    assert!(e.contains("\"mistral\"") && e.contains("GPT-2") && e.contains("llama"), "{e}");
    let e = family(r#"{"architectures": ["BertModel"]}"#).unwrap_err().to_string();
    assert!(e.contains("BertModel") && e.contains("LlamaForCausalLM"), "{e}");
}

#[test]
fn a_llama_session_gives_the_engines_tokens_attention_and_probabilities() {
    let (cfg, bytes) = fixture("gqa");
    let model = Llama::load(&cfg, &bytes).unwrap();
    let tok = Tokenizer::from_json(&tokenizer300()).unwrap();
    let s = llama("gqa");
    assert_eq!(s.family(), Family::Llama);
    let prompt = "the cat sat on the mat";
    let (a, att) = block_on(s.analyze(&query(prompt))).unwrap();
    let ids = tok.encode(prompt);
    assert_eq!(a.tokens.iter().map(|t| t.id).collect::<Vec<_>>(), ids);
    assert_eq!((a.n_layer, a.n_head), (2, 6), "one matrix per query head, 6 heads over 2 KV heads");

    let opts = ForwardOptions { capture: Capture::All, ..Default::default() };
    let out = model.forward(&ids, &mut model.new_cache(), &opts).unwrap();
    for l in 0..2 {
        let want = out.attentions[l].as_ref().unwrap();
        for h in 0..6 {
            let got = att.full(l, h).expect("every layer is sent for a short prompt");
            let diff = (&got - &want.index_axis(ndarray::Axis(0), h)).iter().fold(0f32, |m, d| m.max(d.abs()));
            assert!(diff < 1e-6, "layer {l} head {h}: {diff}");
        }
    }
    let probs = softmax(out.logits.row(0).as_slice().unwrap());
    let best = probs.iter().enumerate().fold((0, 0.0), |b, (i, &p)| if p > b.1 { (i, p) } else { b });
    assert_eq!(a.next[0].id as usize, best.0);
    assert!((a.next[0].prob - best.1).abs() < 1e-6, "{} against {}", a.next[0].prob, best.1);
    assert_eq!(a.next[0].text, tok.token_text(best.0 as u32));
}

#[test]
fn a_knocked_out_head_changes_the_next_token_and_keeps_a_baseline() {
    let s = llama("mqa");
    let plain = block_on(s.analyze(&query("the cat"))).unwrap().0;
    assert!(plain.baseline.is_none());
    let mut q = query("the cat");
    q.ablate = (0..6).map(|h| (1, h)).collect();
    let (knocked, _) = block_on(s.analyze(&q)).unwrap();
    assert_eq!(knocked.baseline.as_ref(), Some(&plain.next), "the baseline is the plain run");
    assert_ne!(knocked.next, plain.next, "knocking out a layer's heads changes the prediction");
}

#[test]
fn greedy_generation_with_the_cache_is_the_engines_greedy_decoding() {
    let (cfg, bytes) = fixture("gqa");
    let model = Llama::load(&cfg, &bytes).unwrap();
    let tok = Tokenizer::from_json(&tokenizer300()).unwrap();
    let s = llama("gqa");
    let q = Query { temperature: 0.0, ..query("the cat") };
    let mut got = Vec::new();
    let mut last = String::new();
    block_on(s.generate(&q, 8, |t, text| {
        got.push(t.id);
        last = text;
    }))
    .unwrap();
    assert_eq!(got, model.greedy(&tok.encode("the cat"), 8).unwrap());
    assert_eq!(last, tok.decode(&got));
}

#[test]
fn generation_past_the_window_slides_instead_of_failing() {
    let s = llama("gqa"); // a window of 64 positions
    let q = Query { temperature: 1.0, seed: 3, ..query("the cat") };
    let mut n = 0;
    block_on(s.generate(&q, 80, |_, _| n += 1)).expect("the window slides");
    assert_eq!(n, 80);
}

#[test]
fn the_loaded_reply_names_the_family_and_the_kv_heads() {
    let r = llama("gqa").loaded("tiny", Source::File);
    let json: serde_json::Value = serde_json::from_str(&r.encode()).unwrap();
    assert_eq!(json["family"], "llama");
    assert_eq!(json["n_kv_head"], 2);
    assert_eq!(json["n_head"], 6);
    let Reply::Loaded { family, n_kv_head, .. } = Reply::decode(&r.encode()).unwrap() else { panic!("{r:?}") };
    assert_eq!((family, n_kv_head), (Family::Llama, Some(2)));

    let (cfg, bytes) = common::checkpoint("static/models/induction");
    let gpt2 = ModelSession::new(&cfg, &bytes, None).unwrap();
    let json: serde_json::Value = serde_json::from_str(&gpt2.loaded("induction", Source::Cache).encode()).unwrap();
    assert_eq!(json["family"], "gpt2");
    assert!(json.get("n_kv_head").is_none(), "GPT-2's reply has no KV heads of its own");
    // A reply written before families existed reads as GPT-2.
    let mut old = json.clone();
    old.as_object_mut().unwrap().remove("family");
    let Reply::Loaded { family, .. } = Reply::decode(&old.to_string()).unwrap() else { panic!() };
    assert_eq!(family, Family::Gpt2);
}

#[test]
fn what_cannot_load_is_refused_with_a_message() {
    let (cfg, bytes) = fixture("gqa");
    let err = |r: Result<ModelSession, _>| r.err().map(|e: attention_live::formats::LoadError| e.to_string()).unwrap();
    let e = err(ModelSession::new(&cfg, &bytes, None));
    assert!(e.starts_with("tokenizer.json is missing"), "{e}");
    let big = std::fs::read_to_string(format!(
        "{}/tests/fixtures/llama/tokenizer/tokenizer.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let e = err(ModelSession::new(&cfg, &bytes, Some(&big)));
    assert!(e.contains("1200 tokens") && e.contains("300 rows"), "{e}");
    let e = err(ModelSession::new(&cfg, &bytes, Some("[]")));
    assert!(e.starts_with("tokenizer.json is not a valid tokenizer"), "{e}");
    let e = err(ModelSession::new(&cfg, &bytes, Some(r#"{"decoder": {"type": "Metaspace"}}"#)));
    assert!(e.starts_with("tokenizer.json: decoder Metaspace is not supported"), "{e}");
    let mistral = cfg.replace("\"llama\"", "\"mistral\"");
    let e = err(ModelSession::new(&mistral, &bytes, Some(&tokenizer300())));
    assert!(e.contains("mistral") && e.contains("Llama family"), "{e}");
}

#[test]
fn a_llama_session_on_the_gpu_answers_as_on_the_cpu() {
    let gpu = match block_on(Gpu::new()) {
        Ok(g) => Rc::new(g),
        Err(e) => return eprintln!("GPU run skipped: no adapter ({e})"),
    };
    let (cpu, on_gpu) = (llama("gqa"), llama("gqa"));
    block_on(on_gpu.attach_gpu_with(gpu, false)).expect("the self-test passes");
    assert_eq!(on_gpu.backend(), "webgpu");
    let q = query("the cat sat");
    let (a, att_a) = block_on(cpu.analyze(&q)).unwrap();
    let (b, att_b) = block_on(on_gpu.analyze(&q)).unwrap();
    assert_eq!(a.tokens, b.tokens);
    for (x, y) in a.next.iter().zip(&b.next) {
        assert_eq!(x.id, y.id);
        assert!((x.prob - y.prob).abs() < 1e-4);
    }
    let diff = att_a.data().iter().zip(att_b.data()).fold(0f32, |m, (x, y)| m.max((x - y).abs()));
    assert!(diff < 1e-4, "attention differs by {diff}");
    // A GPU failure moves the session to the CPU with a notice, and the run is still answered.
    on_gpu.inject_gpu_fault();
    let (c, _) = block_on(on_gpu.analyze(&q)).expect("the CPU answers");
    assert_eq!(c.next[0].id, a.next[0].id);
    assert_eq!(on_gpu.backend(), "cpu");
    assert!(on_gpu.take_notice().is_some_and(|n| n.contains("now runs on the CPU")));
}
