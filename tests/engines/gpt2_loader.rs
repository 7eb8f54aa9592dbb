//! Bad checkpoints are refused with a message that names the problem, never a panic.

use attention_live::formats::safetensors::{self, f16_to_f32, f32_to_f16, Dtype, SafeTensors};
use attention_live::gpt2::{Config, Gpt2, LoadError, RunError};
use attention_live::numerics::rng::Rng;

use crate::common;

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

/// PyTorch's own checkpoints (a zip of pickles, or a bare pickle) are refused by name, for every
/// family and for the streaming loader too: loading a pickle can run any code.
#[test]
fn a_pytorch_pickle_is_refused_saying_why() {
    let (cfg, _) = fixture();
    for head in [&b"PK\x03\x04\x00\x00\x08\x08archive/data.pkl"[..], b"\x80\x02}q\x00(X\x0b\x00\x00\x00wte"] {
        let e = err(&cfg, head);
        assert!(e.to_string().contains("PyTorch pickle"), "{e}");
        let mut loader = attention_live::gpt2::stream::StreamLoader::new(&cfg, None).unwrap();
        let e = loader.feed(head).unwrap_err();
        assert!(e.to_string().contains("PyTorch pickle"), "{e}");
    }
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
    use attention_live::session::manifest::{gpt2_small, sha256_hex, verify, FileCheck};
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

#[test]
fn bundled_files_are_checked_against_the_hashes_the_build_recorded() {
    use attention_live::formats::bundled::{check, expected, FILES};
    use attention_live::session::manifest::{bundled, sha256_hex};
    // Every file under static/models is recorded, with its size and hash as on disk.
    let mut on_disk = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/static/models"))];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let site = format!("/models{}", path.to_string_lossy().split("/static/models").nth(1).unwrap());
                let bytes = std::fs::read(&path).unwrap();
                assert_eq!(expected(&site), Some((bytes.len() as u64, sha256_hex(&bytes).as_str())), "{site}");
                assert_eq!(check(&site, &bytes), Ok(()));
                on_disk.push(site);
            }
        }
    }
    assert_eq!(on_disk.len(), FILES.len());
    // One byte changed, or a file cut short: refused, naming the file.
    let path = "/models/stories/model.safetensors";
    let mut bytes =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/static/models/stories/model.safetensors")).unwrap();
    bytes[1000] ^= 1;
    let e = check(path, &bytes).unwrap_err();
    assert!(e.contains(path) && e.contains("SHA-256"), "{e}");
    let e = check(path, &bytes[..10]).unwrap_err();
    assert!(e.contains("is 10 bytes"), "{e}");
    // Files the site does not ship are not checked; the GPT-2 demo's bundled folders are.
    assert_eq!(check("/models/trained/model.safetensors", b"x"), Ok(()));
    let m = bundled("/models/stories/").expect("the bundled stories model is recorded");
    assert_eq!(m.model.size, bytes.len() as u64);
    assert!(bundled("/models/induction/").is_some() && bundled("/models/trained/").is_none());
}

/// A file of one tensor `wte.weight` (shape, F32) at `offsets`, followed by `data` bytes.
fn one_tensor(shape: &str, offsets: (u64, u64), data: usize) -> Vec<u8> {
    let header =
        format!(r#"{{"wte.weight":{{"dtype":"F32","shape":{shape},"data_offsets":[{},{}]}}}}"#, offsets.0, offsets.1);
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend(std::iter::repeat_n(0u8, data));
    file
}

#[test]
fn offsets_near_the_top_of_u64_are_refused_not_wrapped() {
    // begin + data_start wraps past 2⁶⁴ (and, in the browser's 32-bit build, 2³² did the same).
    for (begin, end) in [(u64::MAX - 7, u64::MAX - 3), (u64::MAX - 4, u64::MAX), ((1 << 32) - 4, 1 << 32)] {
        let file = one_tensor("[1]", (begin, end), 16);
        let e = SafeTensors::parse(&file).err().expect("refused");
        assert!(matches!(e, LoadError::BadOffsets { .. } | LoadError::Truncated { .. }), "{e}");
    }
}

#[test]
fn overlapping_ranges_gaps_and_duplicate_keys_are_refused() {
    let two = |a: (u64, u64), b: (u64, u64), data: usize| {
        let entry =
            |(begin, end): (u64, u64)| format!(r#"{{"dtype":"F32","shape":[2],"data_offsets":[{begin},{end}]}}"#);
        let header = format!(r#"{{"a":{},"b":{}}}"#, entry(a), entry(b));
        let mut file = (header.len() as u64).to_le_bytes().to_vec();
        file.extend_from_slice(header.as_bytes());
        file.extend(std::iter::repeat_n(0u8, data));
        file
    };
    assert!(SafeTensors::parse(&two((0, 8), (8, 16), 16)).is_ok());
    let e = SafeTensors::parse(&two((0, 8), (4, 12), 12)).err().expect("overlap refused");
    assert!(e.to_string().contains("overlap"), "{e}");
    let e = SafeTensors::parse(&two((0, 8), (0, 8), 8)).err().expect("the same range twice refused");
    assert!(e.to_string().contains("overlap"), "{e}");
    let e = SafeTensors::parse(&two((0, 8), (12, 20), 20)).err().expect("a gap refused");
    assert!(e.to_string().contains("no tensor"), "{e}");
    let entry = r#"{"dtype":"F32","shape":[1],"data_offsets":[0,4]}"#;
    let header = format!(r#"{{"a":{entry},"a":{entry}}}"#);
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&[0; 4]);
    let e = SafeTensors::parse(&file).err().expect("duplicate keys refused");
    assert!(e.to_string().contains("twice"), "{e}");
}

#[test]
fn absurd_config_sizes_name_the_field_and_the_limit() {
    let (cfg, bytes) = fixture();
    for (from, to, field) in [
        ("\"n_layer\": 2", "\"n_layer\": 100000000", "n_layer"),
        ("\"n_embd\": 32", "\"n_embd\": 1073741824", "n_embd"),
        ("\"n_embd\": 32", "\"n_embd\": 4611686018427387904", "n_embd"),
        ("\"n_head\": 2", "\"n_head\": 4294967296", "n_head"),
        ("\"n_positions\": 64", "\"n_positions\": 18446744073709551615", "n_positions"),
        ("\"vocab_size\": 256", "\"vocab_size\": 4294967297", "vocab_size"),
        ("\"n_inner\": null", "\"n_inner\": 1099511627776", "n_inner"),
    ] {
        let json = cfg.replace(from, to);
        assert_ne!(json, cfg);
        let e = err(&json, &bytes);
        let text = e.to_string();
        assert!(matches!(e, LoadError::Config(_)) && text.contains(field) && text.contains("at most"), "{text}");
    }
    for bad in ["-2", "2.5", "\"2\"", "0", "true"] {
        let e = err(&cfg.replace("\"n_layer\": 2", &format!("\"n_layer\": {bad}")), &bytes);
        assert!(e.to_string().contains("n_layer"), "{bad}: {e}");
    }
}

#[test]
fn nan_and_infinite_weights_are_refused_naming_the_tensor() {
    let (cfg, _) = fixture();
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let file = rewritten(|t| t.iter_mut().find(|(n, _, _)| n == "h.1.mlp.c_fc.weight").unwrap().2[77] = bad);
        let e = err(&cfg, &file);
        assert!(e.to_string().contains("h.1.mlp.c_fc.weight"), "{e}");
    }
    let e = err(&cfg, &rewritten(|t| t[0].2[3] = f32::NAN));
    assert!(e.to_string().contains("wte.weight") && e.to_string().contains("NaN"), "{e}");
}

#[test]
fn an_untied_lm_head_blames_the_checkpoint_not_the_config() {
    let (cfg, _) = fixture();
    let untied = rewritten(|t| {
        let mut head = t[0].clone();
        head.0 = "lm_head.weight".into();
        head.2[0] += 1.0;
        t.push(head);
    });
    let text = err(&cfg, &untied).to_string();
    assert!(text.contains("lm_head") && !text.contains("config.json"), "{text}");
}

#[test]
fn ids_past_the_gpt2_tokenizer_are_labelled_not_empty() {
    use attention_live::gpt2::tokenizer::Tokenizer;
    let tok = Tokenizer::gpt2();
    let hello = tok.encode("hello");
    assert_eq!(tok.token_text(50300), "<50300>");
    let mut ids = hello.clone();
    ids.push(50300);
    assert_eq!(tok.decode(&ids), "hello<50300>");
}

#[test]
fn a_large_character_vocabulary_is_checked_in_linear_time() {
    // 200,000 distinct characters: a pairwise check for repeats would take 2·10¹⁰ comparisons.
    let vocab: String = (0x100u32..).filter_map(char::from_u32).take(200_000).collect();
    let json = serde_json::json!({"vocab_size": 200_000, "n_positions": 8, "n_embd": 8, "n_layer": 1, "n_head": 2,
        "char_vocab": vocab});
    let t0 = std::time::Instant::now();
    let cfg = Config::from_json(&json.to_string()).unwrap();
    let tok = attention_live::gpt2::tokenizer::Tokenizer::chars(cfg.char_vocab.as_deref().unwrap());
    let last: String = vocab.chars().rev().take(1).collect();
    assert_eq!(tok.encode(&last.repeat(4000)), vec![199_999; 4000]);
    assert!(t0.elapsed().as_secs_f64() < 1.0, "{:?}", t0.elapsed());
    let twice = serde_json::json!({"vocab_size": 3, "n_positions": 8, "n_embd": 8, "n_layer": 1, "n_head": 2,
        "char_vocab": "abа"}); // Latin a, b and Cyrillic а: distinct
    assert!(Config::from_json(&twice.to_string()).is_ok());
    let e = Config::from_json(&twice.to_string().replace("abа", "aba")).unwrap_err();
    assert!(e.to_string().contains("twice"), "{e}");
}

#[test]
fn limits_on_tensor_count_file_size_and_parameters_have_messages() {
    use attention_live::formats::safetensors::{check_file_size, MAX_FILE_BYTES, MAX_TENSORS};
    // One entry past the tensor limit and `__metadata__`: refused while the header is read.
    let entries: Vec<String> = (0..MAX_TENSORS + 2).map(|i| format!(r#""t{i}":{{}}"#)).collect();
    let header = format!("{{{}}}", entries.join(","));
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    let e = SafeTensors::parse(&file).err().expect("too many tensors refused");
    assert!(e.to_string().contains(&format!("more than {}", MAX_TENSORS + 1)), "{e}");
    // A file past the size limit, as a downloader asks before allocating it.
    assert!(check_file_size(MAX_FILE_BYTES).is_ok());
    let e = check_file_size(MAX_FILE_BYTES + 1).unwrap_err();
    assert!(matches!(e, LoadError::TooLarge(_)) && e.to_string().contains("too large"), "{e}");
    // Each size within its limit, but together past the parameter limit.
    let (cfg, bytes) = fixture();
    let huge = cfg.replace("\"n_layer\": 2", "\"n_layer\": 1024").replace("\"n_embd\": 32", "\"n_embd\": 65536");
    let e = err(&huge, &bytes);
    assert!(matches!(&e, LoadError::Config(m) if m.contains("parameters")), "{e}");
}

#[test]
fn finite_weights_that_overflow_are_a_message_not_nan_probabilities() {
    use attention_live::session::protocol::Query;
    use attention_live::session::Gpt2Session as Session;
    let (cfg, _) = fixture();
    // Every weight finite, but the logits x·wteᵀ pass f32's range: ∞ − ∞ in the softmax is NaN.
    let file = rewritten(|t| t[0].2.iter_mut().for_each(|v| *v = v.signum() * 3e38));
    let session = Session::new(&cfg, &file).expect("finite weights load");
    let q = Query { prompt: "a".into(), temperature: 1.0, top: 5, top_p: 1.0, ..Default::default() };
    let e = pollster::block_on(session.analyze(&q)).expect_err("refused");
    assert!(e.to_string().contains("NaN") || e.to_string().contains("infin"), "{e}");
    let e = pollster::block_on(session.start_generation(&q)).err().expect("refused");
    assert!(e.to_string().contains("weights"), "{e}");
}
