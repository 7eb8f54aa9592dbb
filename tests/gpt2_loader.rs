//! Bad checkpoints are refused with a message that names the problem, never a panic.
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

use attention_live::formats::safetensors::{self, f16_to_f32, f32_to_f16, Dtype, SafeTensors};
use attention_live::gpt2::{Config, Gpt2, LoadError, RunError};
use attention_live::numerics::rng::Rng;

mod common;

fn fixture() -> (String, Vec<u8>) {
    common::checkpoint("tests/fixtures/gpt2/a")
}

fn err(cfg: &str, bytes: &[u8]) -> LoadError {
    match Gpt2::load(cfg, bytes) {
        Ok(_) => panic!("a bad checkpoint was accepted"),
        Err(e) => e,
    }
}

/// The fixture's tensors, re-written with a change applied to the list.
fn rewritten(edit: impl FnOnce(&mut Vec<(String, Vec<usize>, Vec<f32>)>)) -> Vec<u8> {
    let (cfg, bytes) = fixture();
    let mut named = Gpt2::load(&cfg, &bytes).unwrap().weights.named();
    edit(&mut named);
    safetensors::write(&named, Dtype::F32, &[("format", "pt")])
}

#[test]
fn truncated_files_are_refused() {
    let (cfg, bytes) = fixture();
    assert!(matches!(err(&cfg, &bytes[..5]), LoadError::Truncated { needed: 8, have: 5 }));
    let cut = &bytes[..bytes.len() - 100];
    let e = err(&cfg, cut);
    assert!(matches!(e, LoadError::Truncated { .. }), "{e}");
    assert!(e.to_string().contains("truncated"));
}

#[test]
fn a_header_longer_than_the_file_is_refused() {
    let (cfg, mut bytes) = fixture();
    let len = bytes.len() as u64;
    bytes[..8].copy_from_slice(&(len * 2).to_le_bytes());
    assert!(matches!(err(&cfg, &bytes), LoadError::Truncated { .. }));
    bytes[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(err(&cfg, &bytes), LoadError::BadHeader(_)));
}

#[test]
fn malformed_headers_are_refused() {
    let (cfg, _) = fixture();
    let mut file = 9u64.to_le_bytes().to_vec();
    file.extend_from_slice(b"not json!");
    assert!(matches!(err(&cfg, &file), LoadError::BadHeader(_)));
    let mut file = 2u64.to_le_bytes().to_vec();
    file.extend_from_slice(b"[]");
    assert!(matches!(err(&cfg, &file), LoadError::BadHeader(_)));
    // Offsets that disagree with the shape.
    let header = br#"{"wte.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}}"#;
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header);
    file.extend_from_slice(&[0; 16]);
    let e = err(&cfg, &file);
    assert!(matches!(e, LoadError::BadOffsets { .. }), "{e}");
    assert!(e.to_string().contains("wte.weight"));
}

#[test]
fn unknown_dtypes_are_named() {
    let (cfg, _) = fixture();
    let header = br#"{"wte.weight":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}"#;
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header);
    file.extend_from_slice(&[0; 8]);
    let e = err(&cfg, &file);
    assert_eq!(e, LoadError::UnknownDtype { tensor: "wte.weight".into(), dtype: "I64".into() });
    assert!(e.to_string().contains("I64"));
}

#[test]
fn missing_and_misshapen_tensors_are_named() {
    let (cfg, _) = fixture();
    let no_ln = rewritten(|t| t.retain(|(n, _, _)| n != "h.1.ln_2.bias"));
    assert_eq!(err(&cfg, &no_ln), LoadError::Missing("h.1.ln_2.bias".into()));
    let bad = rewritten(|t| {
        let e = t.iter_mut().find(|(n, _, _)| n == "h.0.attn.c_proj.weight").unwrap();
        e.1 = vec![16, 64]; // same number of values, wrong shape
    });
    let e = err(&cfg, &bad);
    assert!(
        matches!(&e, LoadError::Shape { tensor, found, .. }
            if tensor == "h.0.attn.c_proj.weight" && found == &vec![16, 64]),
        "{e}"
    );
}

#[test]
fn a_config_that_contradicts_the_tensors_is_refused() {
    let (cfg, bytes) = fixture();
    let fewer = cfg.replace("\"n_layer\": 2", "\"n_layer\": 1");
    assert!(matches!(err(&fewer, &bytes), LoadError::Config(m) if m.contains("layer 1")));
    let wider = cfg.replace("\"n_embd\": 32", "\"n_embd\": 64");
    assert!(matches!(err(&wider, &bytes), LoadError::Shape { .. }));
    let more = cfg.replace("\"n_layer\": 2", "\"n_layer\": 3");
    assert!(matches!(err(&more, &bytes), LoadError::Missing(n) if n == "h.2.ln_1.weight"));
    let odd_heads = cfg.replace("\"n_head\": 2", "\"n_head\": 3");
    assert!(matches!(err(&odd_heads, &bytes), LoadError::Config(m) if m.contains("divisible")));
    let relu = cfg.replace("gelu_new", "relu");
    assert!(matches!(err(&relu, &bytes), LoadError::Config(m) if m.contains("relu")));
    assert!(matches!(err("{", &bytes), LoadError::Config(_)));
    // An lm_head that is not tied to wte.
    let untied = rewritten(|t| {
        let mut head = t[0].clone();
        head.0 = "lm_head.weight".into();
        head.2[0] += 1.0;
        t.push(head);
    });
    assert!(matches!(err(&cfg, &untied), LoadError::Config(m) if m.contains("lm_head")));
}

#[test]
fn the_config_reads_gpt2_small_and_counts_its_parameters() {
    // GPT2Config() as config.json writes it; 124,439,808 parameters (shared/notes/gpt2-data.md).
    let json = concat!(
        r#"{"model_type":"gpt2","vocab_size":50257,"n_positions":1024,"n_embd":768,"n_layer":12,"n_head":12,"#,
        r#""n_inner":null,"activation_function":"gelu_new","layer_norm_epsilon":1e-05}"#
    );
    let cfg = Config::from_json(json).unwrap();
    assert_eq!(cfg, Config::gpt2_small());
    assert_eq!(cfg.n_params(), 124_439_808);
    assert_eq!(cfg.head_dim(), 64);
}

#[test]
fn f16_conversion_is_exact_on_hand_values() {
    // 0x3C00 = 1.0, 0xC000 = −2.0, 0x7BFF = 65504 (largest half), 0x0001 = 2⁻²⁴ (smallest subnormal),
    // 0x3555 = 0.333251953125 (1/3 rounded to 10 fraction bits).
    for (h, f) in [
        (0x3C00u16, 1.0f32),
        (0xC000, -2.0),
        (0x7BFF, 65504.0),
        (0x0001, 5.960_464_5e-8),
        (0x3555, 0.333_251_95),
        (0x0000, 0.0),
    ] {
        assert_eq!(f16_to_f32(h), f, "{h:#x}");
        assert_eq!(f32_to_f16(f), h, "{f}");
    }
    assert_eq!(f32_to_f16(1.0 / 3.0), 0x3555);
    assert_eq!(f32_to_f16(1e6), 0x7C00); // overflow → +∞
    assert!(f16_to_f32(0x7E00).is_nan());
    // Every half survives the round trip.
    for h in 0..=u16::MAX {
        let f = f16_to_f32(h);
        if !f.is_nan() {
            assert_eq!(f32_to_f16(f), h, "{h:#x}");
        }
    }
}

#[test]
fn an_f16_copy_runs_close_to_the_f32_model() {
    let (cfg, bytes) = fixture();
    let model = Gpt2::load(&cfg, &bytes).unwrap();
    let half = safetensors::write(&model.weights.named(), Dtype::F16, &[]);
    assert!(half.len() < bytes.len() * 6 / 10);
    let st = SafeTensors::parse(&half).unwrap();
    assert!(st.tensors.values().all(|t| t.dtype == Dtype::F16));
    let model16 = Gpt2::load(&cfg, &half).unwrap();
    let tokens = [1, 2, 3, 4, 5];
    let a = model.forward(&tokens, &mut model.new_cache(), &Default::default()).unwrap().logits;
    let b = model16.forward(&tokens, &mut model16.new_cache(), &Default::default()).unwrap().logits;
    let e = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
    assert!(e > 0.0 && e < 0.05, "F16 rounding moved the logits by {e}");
}

#[test]
fn bad_run_inputs_are_errors() {
    let (cfg, bytes) = fixture();
    let model = Gpt2::load(&cfg, &bytes).unwrap();
    let mut cache = model.new_cache();
    let opts = Default::default();
    assert!(matches!(model.forward(&[], &mut cache, &opts), Err(RunError::Empty)));
    assert!(matches!(model.forward(&[256], &mut cache, &opts), Err(RunError::TokenOutOfRange { id: 256, vocab: 256 })));
    let long = vec![1u32; 65];
    assert!(matches!(model.forward(&long, &mut cache, &opts), Err(RunError::TooLong { len: 65, window: 64 })));
    assert!(cache.is_empty(), "refused input leaves the cache alone");
    model.forward(&[1; 60], &mut cache, &opts).unwrap();
    assert!(matches!(model.forward(&[1; 5], &mut cache, &opts), Err(RunError::TooLong { len: 65, window: 64 })));
    assert_eq!(cache.len(), 60);
}

/// Random corruption (flipped bytes, cuts) of a valid file: an error or a model, never a panic.
#[test]
fn corrupted_files_never_panic() {
    let (cfg, bytes) = fixture();
    let mut rng = Rng::new(7);
    for i in 0..400 {
        let mut b = bytes.clone();
        match i % 3 {
            0 => b.truncate((rng.uniform() * b.len() as f64) as usize),
            1 => {
                // Flips inside the header, where they matter most.
                let n = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
                for _ in 0..3 {
                    let at = (rng.uniform() * (n + 8) as f64) as usize;
                    b[at] = (rng.next_u64() & 0xff) as u8;
                }
            }
            _ => {
                let at = (rng.uniform() * 8.0) as usize;
                b[at] ^= 1 << (rng.next_u64() % 8);
            }
        }
        let _ = Gpt2::load(&cfg, &b);
    }
}

#[test]
fn downloads_are_checked_against_the_pinned_size_and_sha256() {
    use attention_live::gpt2::manifest::{gpt2_small, sha256_hex, verify, FileCheck};
    // FIPS 180-2's example: SHA-256("abc").
    assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    let want = FileCheck { size: 3, sha256: sha256_hex(b"abc") };
    assert_eq!(verify("x", b"abc", &want), Ok(()));
    let short = verify("model.safetensors", b"ab", &want).unwrap_err();
    assert!(short.contains("is 2 bytes") && short.contains("3 bytes"), "{short}");
    let other = verify("model.safetensors", b"abd", &want).unwrap_err();
    assert!(other.contains("SHA-256") && other.contains("ba7816bf8f01"), "{other}");
    // The pinned GPT-2 small: the hub's model.safetensors of 548,105,171 bytes.
    let m = gpt2_small();
    assert_eq!(m.model.size, 548_105_171);
    assert!(m.model.sha256.len() == 64 && m.config.sha256.len() == 64);
}
