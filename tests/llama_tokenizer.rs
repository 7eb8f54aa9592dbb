//! The Llama-family tokenizer against Hugging Face: a byte-level BPE configured like SmolLM2's
//! (trained on the book's chapters by `scripts/llama/make_tokenizer_fixture.py`), with the ids
//! `transformers` gives on edge cases; refusals; no panic on broken files.
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

use attention_live::llama::tokenizer::{Tokenizer, TokenizerError, MAX_PADDING};
use serde_json::{json, Value};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/llama/tokenizer");

fn fixture_json() -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/tokenizer.json")).unwrap()).unwrap()
}

fn load(json: &Value) -> Result<Tokenizer, TokenizerError> {
    Tokenizer::from_json(&json.to_string())
}

/// (text, Hugging Face's ids, Hugging Face's decode of them).
fn cases() -> Vec<(String, Vec<u32>, String)> {
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/cases.json")).unwrap()).unwrap();
    meta["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let ids = c["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
            (c["text"].as_str().unwrap().to_string(), ids, c["decoded"].as_str().unwrap().to_string())
        })
        .collect()
}

fn assert_matches_hf(tok: &Tokenizer) {
    let cases = cases();
    assert!(cases.len() > 40);
    for (text, ids, decoded) in &cases {
        assert_eq!(&tok.encode(text), ids, "ids of {text:?}");
        assert_eq!(&tok.decode(ids), decoded, "decode of {text:?}");
        assert_eq!(&tok.decode(&tok.encode(text)), text, "round trip of {text:?}");
    }
}

#[test]
fn ids_and_decoding_match_hugging_face_on_edge_cases() {
    let tok = load(&fixture_json()).unwrap();
    assert_matches_hf(&tok);
    assert_eq!(tok.len(), 1200);
    assert_eq!(tok.added_id("<|endoftext|>"), Some(0));
    assert_eq!(tok.added_id("<|im_start|>"), Some(1));
    assert_eq!(tok.added_id("<|im_end|>"), Some(2));
    // Special tokens are one id each, also glued to text; a near miss is plain text.
    assert_eq!(tok.encode("a<|endoftext|>b")[1], 0);
    assert!(!tok.encode("<|endoftext").contains(&0));
}

#[test]
fn merges_written_as_strings_give_the_same_ids() {
    let mut json = fixture_json();
    let merges = json["model"]["merges"].as_array().unwrap();
    assert!(merges[0].is_array(), "the fixture has [a, b] pairs");
    let strings: Vec<Value> = merges
        .iter()
        .map(|m| Value::String(format!("{} {}", m[0].as_str().unwrap(), m[1].as_str().unwrap())))
        .collect();
    json["model"]["merges"] = Value::Array(strings);
    assert_matches_hf(&load(&json).unwrap());
}

/// Merges follow their order in `merges`, not the ids of the joined tokens; `ignore_merges` keeps
/// a word of the vocabulary whole. Three tokens xq, qj, xqj, with the merge q+j ranked first:
/// "xqj" merges q+j, and x+qj is no merge, so it stays two tokens (the rule `tiktoken` follows,
/// joining the pair whose joined text has the lowest id, would give xqj).
#[test]
fn merge_order_and_ignore_merges() {
    let mut json = fixture_json();
    let n = 1200;
    let vocab = json["model"]["vocab"].as_object_mut().unwrap();
    vocab.insert("xq".into(), json!(n));
    vocab.insert("qj".into(), json!(n + 1));
    vocab.insert("xqj".into(), json!(n + 2));
    let merges = json["model"]["merges"].as_array_mut().unwrap();
    merges.splice(0..0, [json!(["q", "j"]), json!(["x", "q"]), json!(["xq", "j"])]);
    let tok = load(&json).unwrap();
    let x = tok.encode("x")[0];
    assert_eq!(tok.encode("xqj"), vec![x, n + 1]);
    assert_eq!(tok.encode("xq"), vec![n]);
    json["model"]["ignore_merges"] = json!(true);
    assert_eq!(load(&json).unwrap().encode("xqj"), vec![n + 2]);
}

/// Long runs (one word each) merge in O(n log n); the fixture checks runs of 500 against Hugging Face.
#[test]
fn long_runs_encode_and_round_trip() {
    let tok = load(&fixture_json()).unwrap();
    for unit in ["-", " ", "ab", "é", "😀"] {
        let text = unit.repeat(20_000);
        let ids = tok.encode(&text);
        assert_eq!(tok.decode(&ids), text, "{unit:?} repeated");
    }
    // Within one word, merges give the same tokens as its first part alone.
    let short = tok.encode(&"-".repeat(64));
    assert_eq!(&tok.encode(&"-".repeat(20_000))[..8], &short[..8]);
}

#[test]
fn partial_characters_show_as_byte_escapes() {
    let tok = load(&fixture_json()).unwrap();
    let ids = tok.encode("😀");
    assert!(ids.len() > 1, "the emoji is not one token in a vocabulary of 1,200");
    let first = tok.token_text(ids[0]);
    assert!(first.starts_with("\\xF0"), "{first}");
    assert_eq!(tok.token_bytes(ids[0])[0], 0xF0);
    assert_eq!(tok.decode(&ids[..1]), "\u{FFFD}");
    assert_eq!(tok.token_text(tok.encode(" the")[0]), " the");
    assert_eq!(tok.token_text(0), "<|endoftext|>");
    assert_eq!(tok.token_text(5000), "<5000>");
}

fn refusal(json: &Value) -> String {
    match load(json) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unsupported_components_are_refused_by_name() {
    let base = fixture_json();
    let with = |pointer: &str, value: Value| {
        let mut json = base.clone();
        *json.pointer_mut(pointer).unwrap() = value;
        refusal(&json)
    };
    let metaspace = json!({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true});
    let msg = with("/pre_tokenizer", metaspace.clone());
    assert!(msg.starts_with("pre-tokenizer Metaspace is not supported: "), "{msg}");
    let msg = with("/pre_tokenizer/pretokenizers/0", metaspace);
    assert!(msg.starts_with("pre-tokenizer Metaspace is not supported"), "{msg}");
    let msg = with("/pre_tokenizer/pretokenizers", json!([{"type": "Digits", "individual_digits": true}]));
    assert!(msg.contains("without ByteLevel as its last step"), "{msg}");
    let msg = with("/model/type", json!("WordPiece"));
    assert!(msg.starts_with("model WordPiece is not supported"), "{msg}");
    let msg = with("/model/byte_fallback", json!(true));
    assert!(msg.starts_with("model option byte_fallback is not supported"), "{msg}");
    let msg = with("/normalizer", json!({"type": "NFC"}));
    assert!(msg.starts_with("normalizer NFC is not supported"), "{msg}");
    let msg = with("/decoder", json!({"type": "Metaspace"}));
    assert!(msg.starts_with("decoder Metaspace is not supported"), "{msg}");
    let msg = with("/post_processor", json!({"type": "TemplateProcessing"}));
    assert!(msg.starts_with("post-processor TemplateProcessing is not supported"), "{msg}");
    let template_in_sequence =
        json!({"type": "Sequence", "processors": [{"type": "ByteLevel"}, {"type": "TemplateProcessing"}]});
    let msg = with("/post_processor", template_in_sequence);
    assert!(msg.starts_with("post-processor TemplateProcessing is not supported"), "{msg}");
    let msg = with("/added_tokens/1/lstrip", json!(true));
    assert!(msg.contains("lstrip (on \"<|im_start|>\") is not supported"), "{msg}");
    let split =
        json!({"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "MergedWithPrevious", "invert": false});
    let msg = with("/pre_tokenizer/pretokenizers/0", split);
    assert!(msg.starts_with("pre-tokenizer Split with behavior \"MergedWithPrevious\" is not supported"), "{msg}");
}

/// ByteLevel post-processor and decoder written as a Sequence of one, or absent (post-processor).
#[test]
fn byte_level_in_a_sequence_is_byte_level() {
    let mut json = fixture_json();
    json["post_processor"] = json!({"type": "Sequence", "processors": [json["post_processor"].clone()]});
    json["decoder"] = json!({"type": "Sequence", "decoders": [json["decoder"].clone()]});
    assert_matches_hf(&load(&json).unwrap());
    json["post_processor"] = Value::Null;
    assert_matches_hf(&load(&json).unwrap());
}

/// A Split step with GPT-2's own regex before a ByteLevel without one cuts the same words.
#[test]
fn split_with_the_gpt2_regex_is_supported() {
    let mut json = fixture_json();
    json["pre_tokenizer"]["pretokenizers"] = json!([
        {"type": "Digits", "individual_digits": true},
        {"type": "Split", "pattern": {"Regex": attention_live::llama::tokenizer::GPT2_PATTERN},
         "behavior": "Isolated", "invert": false},
        {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
    ]);
    assert_matches_hf(&load(&json).unwrap());
}

#[test]
fn a_tokenizer_for_another_vocabulary_is_refused() {
    let tok = load(&fixture_json()).unwrap();
    assert_eq!(tok.check_vocab(1200), Ok(()));
    assert_eq!(tok.check_vocab(1200 + MAX_PADDING), Ok(())); // padded embedding rows
    let msg = tok.check_vocab(1199).unwrap_err().to_string();
    assert_eq!(
        msg,
        "the tokenizer has 1200 tokens but the model's vocabulary has 1199 rows: \
         tokenizer.json belongs to another model"
    );
    assert!(tok.check_vocab(49_152).is_err()); // SmolLM2's size
    assert!(tok.check_vocab(1201 + MAX_PADDING).is_err());
}

#[test]
fn malformed_files_are_refused_without_a_panic() {
    let text = fixture_json().to_string();
    for cut in (0..text.len()).step_by(997) {
        let prefix: String = text.char_indices().take_while(|&(i, _)| i < cut).map(|(_, c)| c).collect();
        assert!(Tokenizer::from_json(&prefix).is_err(), "a file cut at {cut} bytes");
    }
    let base = fixture_json();
    let mutations: Vec<(&str, Value)> = vec![
        ("", json!([])),
        ("/model", json!(null)),
        ("/model/vocab", json!([1, 2])),
        ("/model/vocab/Ġt", json!("seven")),
        ("/model/vocab/Ġt", json!(-1)),
        ("/model/vocab/Ġt", json!(4_000_000_000u64)),
        ("/model/merges", json!(5)),
        ("/model/merges/0", json!(["Ġ", "nonexistent"])),
        ("/model/merges/0", json!("a b c")),
        ("/model/merges/0", json!([1, 2])),
        ("/added_tokens", json!({"id": 0})),
        ("/added_tokens/0/content", json!("")),
        ("/added_tokens/0/id", json!(null)),
        ("/pre_tokenizer", json!({"type": "Sequence"})),
        ("/pre_tokenizer", json!({"no": "type"})),
        ("/pre_tokenizer/pretokenizers/0", json!({"type": "Split", "pattern": {"Regex": "(unclosed"}})),
    ];
    for (pointer, value) in mutations {
        let mut json = base.clone();
        match json.pointer_mut(pointer) {
            Some(slot) => *slot = value,
            None => panic!("no {pointer} in the fixture"),
        }
        assert!(load(&json).is_err(), "{pointer} = {}", json.pointer(pointer).unwrap());
    }
    // A vocabulary that lacks one byte's character cannot spell every text.
    let mut json = base.clone();
    json["model"]["vocab"].as_object_mut().unwrap().remove("Ā");
    json["model"]["merges"] = json!([]);
    let msg = refusal(&json);
    assert!(msg.contains("no token for byte 0x00"), "{msg}");
}
