//! The Llama-family engine against Hugging Face transformers: fixtures made by
//! `scripts/llama/make_fixtures.py` (versions and seeds in that file) from small random
//! `LlamaForCausalLM` models: `gqa` (6 heads sharing 2 KV heads, tied output layer), `mqa`
//! (one KV head, head_dim set apart from the width, its own output layer) and `gqa_bf16`
//! (`gqa` saved in BF16). Every comparison runs in both CPU weight layouts: row-major, as
//! natively, and packed, as in the browser.

use crate::common::{floats, ids, max_err};
use attention_live::formats::safetensors::{self, Dtype, SafeTensors};
use attention_live::formats::LoadError;
use attention_live::llama::ops::Rope;
use attention_live::llama::{Capture, Config, ForwardOptions, Llama};
use attention_live::numerics::rng::Rng;
use ndarray::{Array2, ShapeBuilder};
use serde_json::Value;

/// Absolute tolerance on logits (of size up to about 5), attention weights and hidden states:
/// the engine sums in f32 in another order than PyTorch (a few ulps, about 1e-6 here) and the
/// fixture keeps 7 significant digits (5e-7 on a logit of 5); 1e-4 leaves room for both while
/// any real mistake (a wrong RoPE pairing, a head reading the wrong KV head, ε in the wrong
/// place) moves the numbers by 1e-2 or more.
const TOL: f32 = 1e-4;

const NAMES: [&str; 3] = ["gqa", "mqa", "gqa_bf16"];

fn folder(name: &str) -> String {
    format!("{}/tests/fixtures/llama/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn files(name: &str) -> (String, Vec<u8>) {
    let d = folder(name);
    (
        std::fs::read_to_string(format!("{d}/config.json")).unwrap(),
        std::fs::read(format!("{d}/model.safetensors")).unwrap(),
    )
}

fn reference(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{}/reference.json", folder(name))).unwrap()).unwrap()
}

/// The fixture's model in both layouts: row-major, then packed.
fn models(name: &str) -> [Llama; 2] {
    let (cfg, bytes) = files(name);
    let plain = Llama::load(&cfg, &bytes).unwrap();
    let packed = Llama { config: plain.config.clone(), weights: plain.weights.with_layout(true) };
    [plain, packed]
}

#[test]
fn logits_attentions_and_hidden_states_match_transformers() {
    for name in NAMES {
        let r = reference(name);
        let tokens = ids(&r["tokens"]);
        let opts =
            ForwardOptions { capture: Capture::All, all_logits: true, hidden_states: true, ..Default::default() };
        for (layout, model) in ["row-major", "packed"].iter().zip(models(name)) {
            let out = model.forward(&tokens, &mut model.new_cache(), &opts).unwrap();
            let e = max_err(&out.logits, &floats(&r["logits"]));
            eprintln!("{name} {layout}: logits differ by at most {e:.1e}");
            assert!(e < TOL, "{name} {layout}: logits differ by {e}");
            assert_eq!(out.attentions.len(), model.config.num_hidden_layers);
            for (l, a) in out.attentions.iter().enumerate() {
                let a = a.as_ref().unwrap();
                assert_eq!(a.dim(), (model.config.num_attention_heads, tokens.len(), tokens.len()));
                let e = max_err(a, &floats(&r["attentions"][l]));
                assert!(e < TOL, "{name} {layout}: layer {l}'s attention differs by {e}");
            }
            let hidden = r["hidden_states"].as_array().unwrap();
            assert_eq!(out.hidden_states.len(), hidden.len());
            for (l, (ours, theirs)) in out.hidden_states.iter().zip(hidden).enumerate() {
                let e = max_err(ours, &floats(theirs));
                assert!(e < TOL, "{name} {layout}: hidden state {l} differs by {e}");
            }
        }
    }
}

#[test]
fn knocked_out_heads_match_transformers() {
    for name in NAMES {
        let r = reference(name);
        let ablate: Vec<(usize, usize)> = r["ablate"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize))
            .collect();
        let tokens = ids(&r["tokens"]);
        for model in models(name) {
            let opts = ForwardOptions { ablate: ablate.clone(), all_logits: true, ..Default::default() };
            let out = model.forward(&tokens, &mut model.new_cache(), &opts).unwrap();
            let e = max_err(&out.logits, &floats(&r["ablated_logits"]));
            assert!(e < TOL, "{name}: logits with heads {ablate:?} knocked out differ by {e}");
            // The knock-out changes something: the test could fail.
            assert!(max_err(&out.logits, &floats(&r["logits"])) > 1e-3, "{name}: knocking out changed nothing");
        }
    }
}

#[test]
fn decoding_with_the_cache_matches_transformers_and_the_full_pass() {
    for name in NAMES {
        let r = reference(name);
        let prompt = ids(&r["tokens"]);
        for model in models(name) {
            let mut cache = model.new_cache();
            let opts = ForwardOptions::default();
            let mut logits = model.forward(&prompt, &mut cache, &opts).unwrap().logits;
            let mut all = prompt.clone();
            for (i, step) in r["decode"].as_array().unwrap().iter().enumerate() {
                let token = step["token"].as_u64().unwrap() as u32;
                assert_eq!(attention_live::numerics::softmax::argmax(logits.row(0)), token, "{name}: step {i}");
                logits = model.forward(&[token], &mut cache, &opts).unwrap().logits;
                all.push(token);
                let e = max_err(&logits, &floats(&step["logits"]));
                assert!(e < TOL, "{name}: decoding step {i}'s logits differ from transformers' by {e}");
                // The same positions run at once, without a cache, give the same last row.
                let full = model
                    .forward(&all, &mut model.new_cache(), &ForwardOptions { all_logits: true, ..Default::default() })
                    .unwrap()
                    .logits;
                let e = max_err(&logits, full.row(all.len() - 1).as_slice().unwrap());
                assert!(e < 1e-5, "{name}: step {i} with the cache differs from the full pass by {e}");
            }
            assert_eq!(cache.len(), prompt.len() + r["decode"].as_array().unwrap().len());
            let tokens: Vec<u32> =
                r["decode"].as_array().unwrap().iter().map(|s| s["token"].as_u64().unwrap() as u32).collect();
            assert_eq!(model.greedy(&prompt, tokens.len()).unwrap(), tokens, "{name}: greedy decoding");
        }
    }
}

#[test]
fn the_cache_holds_keys_and_values_per_kv_head() {
    for name in ["gqa", "mqa"] {
        let [model, _] = models(name);
        let cfg = &model.config;
        let mut cache = model.new_cache();
        assert_eq!(cache.bytes(), 0);
        model.forward(&[1, 2, 3, 4, 5], &mut cache, &ForwardOptions::default()).unwrap();
        model.forward(&[6, 7], &mut cache, &ForwardOptions::default()).unwrap();
        let (layers, kv, d, positions) = (cfg.num_hidden_layers, cfg.num_key_value_heads, cfg.head_dim, 7);
        assert_eq!(cache.bytes(), 2 * layers * kv * d * positions * 4, "{name}");
        // Multi-head attention would cache every query head's keys and values: H / KV times more.
        let heads = cfg.num_attention_heads;
        assert_eq!(2 * layers * heads * d * positions * 4 / cache.bytes(), heads / kv, "{name}");
        cache.clear();
        assert_eq!((cache.len(), cache.bytes()), (0, 0));
    }
    // The fixtures' shapes: 3 query heads per KV head, and a single KV head.
    assert_eq!(models("gqa")[0].config.group_size(), 3);
    assert_eq!(models("mqa")[0].config.num_key_value_heads, 1);
}

#[test]
fn bf16_weights_run_close_to_f32() {
    let r = reference("gqa_bf16");
    let [f32_model, _] = models("gqa");
    let [bf16_model, _] = models("gqa_bf16");
    let tokens = ids(&r["tokens"]);
    let opts = ForwardOptions { all_logits: true, ..Default::default() };
    let a = f32_model.forward(&tokens, &mut f32_model.new_cache(), &opts).unwrap().logits;
    let b = bf16_model.forward(&tokens, &mut bf16_model.new_cache(), &opts).unwrap().logits;
    // Each weight moved by up to 2⁻⁹ of itself (BF16 keeps 8 bits of mantissa): transformers
    // measured 0.089 on logits as large as 4.7.
    let (diff, scale) = (max_err(&b, a.as_slice().unwrap()), a.iter().fold(0.0f32, |m, x| m.max(x.abs())));
    assert!(diff > 0.0 && diff < 0.05 * scale, "BF16 logits differ from F32 by {diff} (logits up to {scale})");
    assert!(max_err(&a, &floats(&r["f32_logits"])) < TOL);
    // Widening is exact, so the BF16 model matches its own reference as closely as F32 does.
    assert!(max_err(&b, &floats(&r["logits"])) < TOL);
}

#[test]
fn f16_weights_load_and_run_close_to_f32() {
    // `gqa` rewritten in F16 by the repository's writer (rounding to nearest even).
    let (cfg, bytes) = files("gqa");
    let st = SafeTensors::parse(&bytes).unwrap();
    let tensors: Vec<_> = st.tensors.iter().map(|(n, i)| (n.clone(), i.shape.clone(), st.to_f32(i))).collect();
    let f16 = safetensors::write(&tensors, Dtype::F16, &[]);
    let half = Llama::load(&cfg, &f16).unwrap();
    let full = Llama::load(&cfg, &bytes).unwrap();
    let tokens = ids(&reference("gqa")["tokens"]);
    let opts = ForwardOptions { all_logits: true, ..Default::default() };
    let a = full.forward(&tokens, &mut full.new_cache(), &opts).unwrap().logits;
    let b = half.forward(&tokens, &mut half.new_cache(), &opts).unwrap().logits;
    // F16 keeps 11 bits of mantissa, 8 times finer than BF16.
    let diff = max_err(&b, a.as_slice().unwrap());
    assert!(diff > 0.0 && diff < 0.02, "F16 logits differ from F32 by {diff}");
}

/// RoPE turns q at position m and k at position n so that q′·k′ depends on m − n only.
#[test]
fn rope_scores_depend_only_on_the_offset() {
    let mut rng = Rng::new(7);
    for (d, theta) in [(8, 10_000.0), (16, 500_000.0), (64, 100_000.0)] {
        let q: Vec<f32> = (0..d).map(|_| rng.normal() as f32).collect();
        let k: Vec<f32> = (0..d).map(|_| rng.normal() as f32).collect();
        let at = |x: &[f32], pos: usize| {
            let mut row = Array2::from_shape_vec((1, d), x.to_vec()).unwrap();
            Rope::new(d, theta, pos, 1).apply(row.view_mut(), d);
            row
        };
        let score = |m: usize, n: usize| at(&q, m).row(0).dot(&at(&k, n).row(0));
        let plain: f32 = q.iter().zip(&k).map(|(a, b)| a * b).sum();
        assert!((score(5, 5) - plain).abs() < 1e-5, "equal positions: the rotations cancel");
        for offset in [0, 1, 3, 17] {
            let first = score(offset, 0);
            for start in [1, 10, 100, 1000] {
                let s = score(start + offset, start);
                assert!((s - first).abs() < 2e-3, "d {d}: offset {offset} from {start}: {s} vs {first}");
            }
        }
        // ...and does depend on the offset (the test could fail).
        assert!((score(3, 0) - score(0, 0)).abs() > 1e-2, "d {d}");
    }
}

/// The rotation angles against `LlamaRotaryEmbedding`'s, up to position 100,000: there an f32
/// angle (about 10⁵ radians) is off from the exact product by a few thousandths, and the engine
/// must be off the same way (angles computed in f64 miss the reference's cos and sin by 3.5e-3).
#[test]
fn rope_angles_match_transformers_at_large_positions() {
    let tables: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}/rope.json", folder(""))).unwrap()).unwrap();
    for t in tables.as_array().unwrap() {
        let (d, theta) = (t["head_dim"].as_u64().unwrap() as usize, t["rope_theta"].as_f64().unwrap());
        let positions = ids(&t["positions"]);
        let (mut cos, mut sin) = (Vec::new(), Vec::new());
        for &p in &positions {
            let rope = Rope::new(d, theta, p as usize, 1);
            cos.extend(rope.cos.iter().copied());
            sin.extend(rope.sin.iter().copied());
        }
        let e = max_err(&cos, &floats(&t["cos"])).max(max_err(&sin, &floats(&t["sin"])));
        assert!(e < 1e-6, "head_dim {d}, θ {theta}: cos and sin differ by {e}");
    }
}

/// The thumbnails pooled during the pass are the captured weights, max-pooled, in both
/// layouts and for new tokens after a cache (where S > T).
#[test]
fn thumbnails_are_the_captured_weights_pooled() {
    use attention_live::numerics::attention::max_pool_into;
    for model in models("gqa") {
        let cfg = &model.config;
        let tokens: Vec<u32> = (0..12).map(|i| (i * 37 % cfg.vocab_size) as u32).collect();
        let mut cache = model.new_cache();
        model.forward(&tokens[..3], &mut cache, &ForwardOptions::default()).unwrap();
        let opts = ForwardOptions { capture: Capture::All, thumbnails: Some(5), ..Default::default() };
        let out = model.forward(&tokens[3..], &mut cache, &opts).unwrap();
        assert_eq!(out.thumbnails.len(), cfg.num_hidden_layers);
        for (th, full) in out.thumbnails.iter().zip(&out.attentions) {
            let full = full.as_ref().unwrap();
            assert_eq!(th.dim(), (cfg.num_attention_heads, 5, 5));
            for h in 0..cfg.num_attention_heads {
                let mut want = Array2::zeros((5, 5));
                max_pool_into(full.index_axis(ndarray::Axis(0), h), want.view_mut());
                assert_eq!(th.index_axis(ndarray::Axis(0), h), want);
            }
        }
    }
}

/// SiLU on GPT-2's polynomial exp (`numerics::silu`, four lanes in the browser) against
/// x / (1 + e⁻ˣ) in f64 on [−80, 80]: within 2e-7 relative (measured 1.6e-7, under two units
/// in the last place); the gated product gives the same values on a slice whose length is not a
/// multiple of four, and the ends are 0 (to f32's tiniest) and x.
#[test]
fn silu_matches_its_formula() {
    use attention_live::llama::ops::{silu, silu_mul_in_place};
    let xs: Vec<f32> = (-80_000..=80_000).map(|i| i as f32 * 1e-3).collect();
    let mut worst = 0.0f64;
    for &x in &xs {
        let want = x as f64 / (1.0 + (-(x as f64)).exp());
        worst = worst.max((silu(x) as f64 - want).abs() / want.abs().max(f64::MIN_POSITIVE));
    }
    eprintln!("silu: worst relative error {worst:e}");
    assert!(worst <= 2e-7, "worst relative error {worst}");
    assert!(silu(-1e4).abs() < 1e-30 && silu(1e4) == 1e4 && silu(0.0) == 0.0);
    let up: Vec<f32> = xs[..2003].iter().map(|x| x.cos()).collect();
    let mut gate = xs[..2003].to_vec();
    silu_mul_in_place(&mut gate, &up);
    assert!(gate.iter().zip(&xs).zip(&up).all(|((&g, &x), &u)| g == silu(x) * u));
}

/// Hugging Face's convention pairs dimension i with i + D/2 (`rotate_half`), not 2i with 2i + 1.
#[test]
fn rope_rotates_the_two_halves_of_a_head() {
    let d = 4;
    let mut x = Array2::from_shape_vec((1, 2 * d), vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
    Rope::new(d, 10_000.0, 1, 1).apply(x.view_mut(), d);
    // Dimension 0 turns by angle 1 (θ⁰ · position 1) into dimension 2; the second head is untouched.
    let want = [1f32.cos(), 0.0, 1f32.sin(), 0.0, 0.0, 0.0, 0.0, 0.0];
    assert!(max_err(&x, &want) < 1e-6, "{x}");
    // Any memory layout rotates alike (here a column-major array of 3 positions).
    let mut rng = Rng::new(3);
    let rows = Array2::from_shape_fn((3, 2 * d), |_| rng.normal() as f32);
    let mut f_order = Array2::zeros((3, 2 * d).f());
    f_order.assign(&rows);
    let mut c_order = rows;
    assert!(!f_order.is_standard_layout());
    Rope::new(d, 10_000.0, 5, 3).apply(c_order.view_mut(), d);
    Rope::new(d, 10_000.0, 5, 3).apply(f_order.view_mut(), d);
    assert_eq!(c_order, f_order);
}

#[test]
fn a_heads_queries_and_keys_make_its_attention() {
    for name in ["gqa", "mqa"] {
        let [model, _] = models(name);
        let tokens = ids(&reference(name)["tokens"]);
        let opts = ForwardOptions { capture: Capture::All, ..Default::default() };
        let out = model.forward(&tokens, &mut model.new_cache(), &opts).unwrap();
        let d = model.config.head_dim as f32;
        for (layer, head) in [(0, 0), (1, 2), (1, 3)] {
            let [q, k, v] = model.head_qkv(&tokens, layer, head).unwrap();
            assert_eq!(v.dim(), (tokens.len(), model.config.head_dim));
            let weights = out.attentions[layer].as_ref().unwrap();
            for i in 0..tokens.len() {
                // softmax over keys 0..=i of q_i·k_j/√D
                let scores: Vec<f32> = (0..=i).map(|j| q.row(i).dot(&k.row(j)) / d.sqrt()).collect();
                let top = scores.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
                let z: f32 = scores.iter().map(|s| (s - top).exp()).sum();
                for (j, s) in scores.iter().enumerate() {
                    let w = (s - top).exp() / z;
                    assert!((w - weights[[head, i, j]]).abs() < 1e-5, "{name} layer {layer} head {head} ({i}, {j})");
                }
            }
        }
        // In a group, heads share their keys.
        let [_, k0, _] = model.head_qkv(&tokens, 1, 0).unwrap();
        let [_, k1, _] = model.head_qkv(&tokens, 1, 1).unwrap();
        assert_eq!(k0, k1, "{name}");
    }
}

#[test]
fn random_weights_written_and_read_back_run_the_same() {
    // A SmolLM2-135M-shaped model, shrunk in depth and vocabulary to stay quick in a test.
    let cfg = Config { num_hidden_layers: 2, vocab_size: 1000, ..Config::smollm2_135m() };
    let weights = attention_live::llama::weights::Weights::random(&cfg, 5);
    let bytes = safetensors::write(&weights.named(), Dtype::F32, &[("format", "pt")]);
    let json = with(&with(SMOLLM2, "num_hidden_layers", 2.into()), "vocab_size", 1000.into());
    let loaded = Llama::load(&json, &bytes).unwrap();
    let model = Llama { config: cfg, weights };
    let opts = ForwardOptions { all_logits: true, ..Default::default() };
    let a = model.forward(&[1, 2, 3], &mut model.new_cache(), &opts).unwrap().logits;
    let b = loaded.forward(&[1, 2, 3], &mut loaded.new_cache(), &opts).unwrap().logits;
    assert_eq!(a, b);
    // The file holds each parameter once, as 4 bytes, after its header.
    assert_eq!(bytes.len() - SafeTensors::parse(&bytes).unwrap().data_start, 4 * loaded.config.n_params());
}

// ---- configs and refusals ----

/// SmolLM2-135M's `config.json` as published (an older `transformers` layout: `rope_theta` and
/// `rope_scaling` at the top).
const SMOLLM2: &str = r#"{
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu", "hidden_size": 576,
  "initializer_range": 0.041666666666666664, "intermediate_size": 1536, "is_llama_config": true,
  "max_position_embeddings": 8192, "model_type": "llama", "num_attention_heads": 9,
  "num_hidden_layers": 30, "num_key_value_heads": 3, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_interleaved": false, "rope_scaling": null, "rope_theta": 100000, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.40.1", "use_cache": true, "vocab_size": 49152
}"#;

fn with(base: &str, key: &str, value: Value) -> String {
    let mut v: Value = serde_json::from_str(base).unwrap();
    match value {
        Value::Null if key.starts_with('-') => {
            v.as_object_mut().unwrap().remove(&key[1..]);
        }
        value => {
            v[key] = value;
        }
    }
    v.to_string()
}

fn config_error(text: &str) -> String {
    match Config::from_json(text) {
        Err(e) => e.to_string(),
        Ok(c) => panic!("accepted {c:?}"),
    }
}

#[test]
fn smollm2_config_reads_as_its_preset() {
    let cfg = Config::from_json(SMOLLM2).unwrap();
    assert_eq!(cfg, Config::smollm2_135m());
    assert_eq!((cfg.head_dim, cfg.group_size(), cfg.kv_head(8)), (64, 3, 2));
    // The published parameter count of SmolLM2-135M.
    assert_eq!(cfg.n_params(), 134_515_008);
}

#[test]
fn both_rope_layouts_read_alike() {
    let newer = with(&with(SMOLLM2, "-rope_theta", Value::Null), "-rope_scaling", Value::Null);
    let newer = with(&newer, "rope_parameters", serde_json::json!({"rope_type": "default", "rope_theta": 100000.0}));
    assert_eq!(Config::from_json(&newer).unwrap(), Config::smollm2_135m());
    let none = with(&with(SMOLLM2, "-rope_theta", Value::Null), "-rope_scaling", Value::Null);
    assert_eq!(Config::from_json(&none).unwrap().rope_theta, 10_000.0, "LlamaConfig's default");
    let both = with(SMOLLM2, "rope_parameters", serde_json::json!({"rope_type": "default", "rope_theta": 5.0}));
    assert!(config_error(&both).contains("rope_theta = 100000 but rope_parameters.rope_theta = 5"));
}

#[test]
fn configs_the_engine_cannot_run_are_refused_naming_what_it_runs() {
    let e = config_error(&with(SMOLLM2, "model_type", "mistral".into()));
    assert!(e.contains("model_type is \"mistral\"") && e.contains("\"llama\""), "{e}");
    let e = config_error(&with(SMOLLM2, "-model_type", Value::Null));
    assert!(e.contains("`model_type` is missing"), "{e}");
    let e = config_error(&with(SMOLLM2, "rope_scaling", serde_json::json!({"rope_type": "llama3", "factor": 8.0})));
    assert!(e.contains("rope_scaling of type \"llama3\" is not supported") && e.contains("plain RoPE"), "{e}");
    let e = config_error(&with(SMOLLM2, "rope_scaling", serde_json::json!({"type": "linear", "factor": 2.0})));
    assert!(e.contains("type \"linear\""), "{e}");
    let e = config_error(&with(SMOLLM2, "rope_parameters", serde_json::json!({"rope_type": "yarn"})));
    assert!(e.contains("rope_parameters of type \"yarn\""), "{e}");
    let e = config_error(&with(SMOLLM2, "num_key_value_heads", 4.into()));
    assert!(e.contains("num_attention_heads = 9 is not divisible by num_key_value_heads = 4"), "{e}");
    let e = config_error(&with(SMOLLM2, "hidden_act", "gelu".into()));
    assert!(e.contains("hidden_act \"gelu\"") && e.contains("\"silu\""), "{e}");
    let e = config_error(&with(SMOLLM2, "attention_bias", true.into()));
    assert!(e.contains("`attention_bias` is true"), "{e}");
    let e = config_error(&with(SMOLLM2, "mlp_bias", true.into()));
    assert!(e.contains("`mlp_bias` is true"), "{e}");
    let e = config_error(&with(SMOLLM2, "head_dim", 63.into()));
    assert!(e.contains("head_dim = 63 must be even"), "{e}");
    let e = config_error(&with(SMOLLM2, "num_attention_heads", 7.into()));
    assert!(e.contains("hidden_size = 576 is not divisible by num_attention_heads = 7"), "{e}");
    // ...unless head_dim says the width of a head.
    assert!(Config::from_json(&with(&with(SMOLLM2, "num_attention_heads", 15.into()), "head_dim", 64.into())).is_ok());
    let e = config_error(&with(SMOLLM2, "hidden_size", (1u64 << 40).into()));
    assert!(e.contains("`hidden_size` must be a whole number from 1 to at most 65536"), "{e}");
    let huge = with(&with(SMOLLM2, "hidden_size", 65536.into()), "intermediate_size", 262144.into());
    let e = config_error(&with(&huge, "head_dim", 64.into()));
    assert!(e.contains("parameters; this build runs at most"), "{e}");
    let e = config_error(&with(SMOLLM2, "-vocab_size", Value::Null));
    assert!(e.contains("`vocab_size` is missing"), "{e}");
    let e = config_error(&SMOLLM2.replacen("\"vocab_size\": 49152", "\"vocab_size\": 49152, \"vocab_size\": 1", 1));
    assert!(e.contains("appears twice"), "{e}");
}

/// The fixture `gqa` rewritten in F32 with `change` applied to its list of tensors.
fn rewritten(change: impl FnOnce(&mut Vec<(String, Vec<usize>, Vec<f32>)>)) -> Result<Llama, LoadError> {
    let (cfg, bytes) = files("gqa");
    let st = SafeTensors::parse(&bytes).unwrap();
    let mut tensors: Vec<_> = st.tensors.iter().map(|(n, i)| (n.clone(), i.shape.clone(), st.to_f32(i))).collect();
    change(&mut tensors);
    Llama::load(&cfg, &safetensors::write(&tensors, Dtype::F32, &[]))
}

#[test]
fn checkpoints_that_do_not_fit_the_config_are_refused() {
    assert!(rewritten(|_| {}).is_ok(), "the rewrite itself loads");
    let name = "model.layers.1.self_attn.k_proj.weight";
    let e = rewritten(|t| t.retain(|(n, ..)| n != name)).err().unwrap();
    assert_eq!(e, LoadError::Missing(name.into()));
    assert_eq!(e.to_string(), format!("the checkpoint has no tensor `{name}`"));
    // A k_proj shaped for multi-head attention (H · D rows) where the config says 2 KV heads.
    let e = rewritten(|t| {
        let k = t.iter_mut().find(|(n, ..)| n == name).unwrap();
        (k.1, k.2) = (vec![48, 48], vec![0.0; 48 * 48]);
    })
    .err()
    .unwrap();
    assert_eq!(e.to_string(), format!("tensor `{name}` has shape [48, 48], but the config needs [16, 48]"));
    let e =
        rewritten(|t| t.iter_mut().find(|(n, ..)| n == "model.norm.weight").unwrap().2[3] = f32::NAN).err().unwrap();
    assert!(e.to_string().contains("tensor `model.norm.weight` holds a NaN (at value 3)"), "{e}");
    let e = rewritten(|t| {
        let mut extra = t.iter().find(|(n, ..)| n == "model.norm.weight").unwrap().clone();
        extra.0 = "model.layers.2.input_layernorm.weight".into();
        t.push(extra);
    })
    .err()
    .unwrap();
    assert!(e.to_string().contains("num_hidden_layers = 2 but the checkpoint has a layer 2"), "{e}");
    // A tied model's lm_head, when written, must be the embeddings.
    let e = rewritten(|t| {
        let mut head = t.iter().find(|(n, ..)| n == "model.embed_tokens.weight").unwrap().clone();
        head.0 = "lm_head.weight".into();
        head.2[0] += 1.0;
        t.push(head);
    })
    .err()
    .unwrap();
    assert!(e.to_string().contains("lm_head.weight differs from model.embed_tokens.weight"), "{e}");
}

#[test]
fn an_untied_checkpoint_needs_its_lm_head() {
    let (cfg, bytes) = files("mqa");
    let st = SafeTensors::parse(&bytes).unwrap();
    let tensors: Vec<_> = st
        .tensors
        .iter()
        .filter(|(n, _)| *n != "lm_head.weight")
        .map(|(n, i)| (n.clone(), i.shape.clone(), st.to_f32(i)))
        .collect();
    let e = Llama::load(&cfg, &safetensors::write(&tensors, Dtype::F32, &[])).err().unwrap();
    assert_eq!(e, LoadError::Missing("lm_head.weight".into()));
}

#[test]
fn bad_input_is_refused() {
    use attention_live::llama::RunError;
    let [model, _] = models("gqa");
    let opts = ForwardOptions::default();
    assert_eq!(model.forward(&[], &mut model.new_cache(), &opts).err(), Some(RunError::Empty));
    assert_eq!(
        model.forward(&[300], &mut model.new_cache(), &opts).err(),
        Some(RunError::TokenOutOfRange { id: 300, vocab: 300 })
    );
    let mut cache = model.new_cache();
    model.forward(&[1; 60], &mut cache, &opts).unwrap();
    let e = model.forward(&[1; 5], &mut cache, &opts).err().unwrap();
    assert_eq!(e, RunError::TooLong { len: 65, window: 64 });
    assert_eq!(cache.len(), 60, "a refused call leaves the cache as it was");
}
