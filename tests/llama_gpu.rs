//! The Llama-family engine on the GPU backend (Mesa's lavapipe here and in CI) against Hugging
//! Face transformers: the fixtures of `tests/llama.rs` (`scripts/llama/make_fixtures.py`: `gqa`,
//! 6 heads sharing 2 KV heads, tied output layer; `mqa`, one KV head, head_dim apart from the
//! width, its own output layer; `gqa_bf16`), to the same tolerance as the CPU.
//!
//! Without an adapter each test says "skipped: no adapter" (CI installs lavapipe, so there it
//! runs).
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

use std::rc::Rc;

use attention_live::gpu::Gpu;
use attention_live::llama::gpu::GpuLlama;
use attention_live::llama::{Capture, ForwardOptions, Llama};
use serde_json::Value;

/// As `tests/llama.rs`: the kernels sum in f32 in another order than PyTorch (a few ulps, about
/// 1e-6 on logits of size up to 5) and the fixture keeps 7 significant digits; 1e-4 leaves room
/// for both while a real mistake (a wrong RoPE pairing, a head reading the wrong KV head, ε in
/// the wrong place) moves the numbers by 1e-2 or more.
const TOL: f32 = 1e-4;

const NAMES: [&str; 3] = ["gqa", "mqa", "gqa_bf16"];

fn folder(name: &str) -> String {
    format!("{}/tests/fixtures/llama/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn model(name: &str) -> Llama {
    let d = folder(name);
    let config = std::fs::read_to_string(format!("{d}/config.json")).unwrap();
    Llama::load(&config, &std::fs::read(format!("{d}/model.safetensors")).unwrap()).unwrap()
}

fn reference(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{}/reference.json", folder(name))).unwrap()).unwrap()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

fn max_err<'a>(ours: impl IntoIterator<Item = &'a f32>, theirs: &[f32]) -> f32 {
    let ours: Vec<f32> = ours.into_iter().copied().collect();
    assert_eq!(ours.len(), theirs.len(), "sizes differ");
    ours.iter().zip(theirs).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max)
}

/// The fixture's model on the GPU, or None (and "skipped: no adapter") without one.
fn on_gpu(name: &str) -> Option<(Llama, GpuLlama)> {
    let gpu = match pollster::block_on(Gpu::new()) {
        Ok(g) => Rc::new(g),
        Err(e) => {
            eprintln!("skipped: no adapter ({e})");
            return None;
        }
    };
    let cpu = model(name);
    let on = pollster::block_on(GpuLlama::upload(gpu, &cpu)).expect("upload to the GPU");
    Some((cpu, on))
}

#[test]
fn logits_attentions_and_hidden_states_match_transformers_on_the_gpu() {
    for name in NAMES {
        let Some((cpu, model)) = on_gpu(name) else { return };
        let r = reference(name);
        let tokens = ids(&r["tokens"]);
        let opts =
            ForwardOptions { capture: Capture::All, all_logits: true, hidden_states: true, ..Default::default() };
        let mut cache = model.new_cache(tokens.len());
        let out = pollster::block_on(model.forward(&tokens, &mut cache, &opts)).unwrap();
        let e = max_err(&out.logits, &floats(&r["logits"]));
        eprintln!("{name} on {}: logits differ by at most {e:.1e}", model.gpu.name);
        assert!(e < TOL, "{name}: logits differ by {e}");
        assert_eq!(out.attentions.len(), cpu.config.num_hidden_layers);
        for (l, a) in out.attentions.iter().enumerate() {
            let a = a.as_ref().unwrap();
            assert_eq!(a.dim(), (cpu.config.num_attention_heads, tokens.len(), tokens.len()));
            let e = max_err(a, &floats(&r["attentions"][l]));
            assert!(e < TOL, "{name}: layer {l}'s attention differs by {e}");
        }
        let hidden = r["hidden_states"].as_array().unwrap();
        assert_eq!(out.hidden_states.len(), hidden.len());
        for (l, (ours, theirs)) in out.hidden_states.iter().zip(hidden).enumerate() {
            let e = max_err(ours, &floats(theirs));
            assert!(e < TOL, "{name}: hidden state {l} differs by {e}");
        }
    }
}

#[test]
fn knocked_out_heads_match_transformers_on_the_gpu() {
    for name in NAMES {
        let Some((_, model)) = on_gpu(name) else { return };
        let r = reference(name);
        let ablate: Vec<(usize, usize)> = r["ablate"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize))
            .collect();
        let tokens = ids(&r["tokens"]);
        let opts = ForwardOptions { ablate: ablate.clone(), all_logits: true, ..Default::default() };
        let out = pollster::block_on(model.forward(&tokens, &mut model.new_cache(tokens.len()), &opts)).unwrap();
        let e = max_err(&out.logits, &floats(&r["ablated_logits"]));
        assert!(e < TOL, "{name}: logits with heads {ablate:?} knocked out differ by {e}");
        assert!(max_err(&out.logits, &floats(&r["logits"])) > 1e-3, "{name}: knocking out changed nothing");
    }
}

#[test]
fn decoding_with_the_gpu_cache_matches_transformers() {
    for name in NAMES {
        let Some((cpu, model)) = on_gpu(name) else { return };
        let r = reference(name);
        let prompt = ids(&r["tokens"]);
        let steps = r["decode"].as_array().unwrap();
        let mut cache = model.new_cache(prompt.len() + steps.len());
        let opts = ForwardOptions::default();
        let mut logits = pollster::block_on(model.forward(&prompt, &mut cache, &opts)).unwrap().logits;
        let mut tokens = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let token = step["token"].as_u64().unwrap() as u32;
            assert_eq!(attention_live::numerics::softmax::argmax(logits.row(0)), token, "{name}: step {i}");
            logits = pollster::block_on(model.forward(&[token], &mut cache, &opts)).unwrap().logits;
            tokens.push(token);
            let e = max_err(&logits, &floats(&step["logits"]));
            assert!(e < TOL, "{name}: decoding step {i}'s logits differ from transformers' by {e}");
        }
        // The cache holds K and V per KV head: H / KV times less than one per query head.
        let cfg = &cpu.config;
        let positions = prompt.len() + steps.len();
        assert_eq!(cache.len(), positions);
        assert_eq!(cache.bytes(), 2 * cfg.num_hidden_layers * positions * cfg.num_key_value_heads * cfg.head_dim * 4);
        let mut cpu_cache = cpu.new_cache();
        cpu.forward(&[prompt.clone(), tokens.clone()].concat(), &mut cpu_cache, &opts).unwrap();
        assert_eq!(cache.bytes(), cpu_cache.bytes(), "{name}: the same cache as the CPU's");
        // Greedy decoding on the GPU continues as transformers does.
        let greedy = pollster::block_on(model.greedy(&prompt, tokens.len())).unwrap();
        assert_eq!(greedy, tokens, "{name}: greedy continuation");
    }
}
