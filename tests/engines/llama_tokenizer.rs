//! The Llama-family tokenizer against Hugging Face: a byte-level BPE configured like SmolLM2's
//! (trained on the book's chapters by `scripts/llama/make_tokenizer_fixture.py`), with the ids
//! `transformers` gives on edge cases; post-processor templates that add a begin-of-text token
//! (saved by `transformers`, `scripts/llama/make_template_fixtures.py`); refusals; no panic on
//! broken files.

use std::panic::{catch_unwind, AssertUnwindSafe};

use attention_live::llama::tokenizer::{Piece, Template, Tokenizer, TokenizerError, MAX_PADDING};
use attention_live::session::LlamaSession;
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
    let msg = with("/post_processor", json!({"type": "RobertaProcessing"}));
    assert!(msg.starts_with("post-processor RobertaProcessing is not supported"), "{msg}");
    let bert_in_sequence =
        json!({"type": "Sequence", "processors": [{"type": "ByteLevel"}, {"type": "BertProcessing"}]});
    let msg = with("/post_processor", bert_in_sequence);
    assert!(msg.starts_with("post-processor BertProcessing is not supported"), "{msg}");
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

/// The tokenizers `scripts/llama/make_template_fixtures.py` saved with `transformers`: a template
/// adding `<s>` (Llama 2's names), one adding nothing, `<s> $A </s>`, and Llama 3's layout (a
/// Sequence of ByteLevel and a template adding `<|begin_of_text|>`, whose pair template has a
/// special token of two ids).
const TEMPLATES: [&str; 4] = ["bos", "none", "bos_eos", "sequence"];

fn template_dir(name: &str) -> String {
    format!("{}/tests/fixtures/llama/template/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn template_text(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tokenizer.json", template_dir(name))).unwrap()
}

fn template_json(name: &str) -> Value {
    serde_json::from_str(&template_text(name)).unwrap()
}

fn template_cases(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{}/cases.json", template_dir(name))).unwrap()).unwrap()
}

fn ids(value: &Value) -> Vec<u32> {
    value.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect()
}

/// Each text's ids are `AutoTokenizer.from_pretrained(folder)(text)["input_ids"]`, the text's own
/// ids `add_special_tokens=False`'s, and each pair's `tokenizer(a, b)["input_ids"]`.
#[test]
fn templates_give_the_ids_transformers_gives() {
    for name in TEMPLATES {
        let tok = Tokenizer::from_json(&template_text(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let meta = template_cases(name);
        let cases = meta["cases"].as_array().unwrap();
        assert!(cases.len() >= 15, "{name}");
        for case in cases {
            let text = case["text"].as_str().unwrap();
            assert_eq!(tok.encode(text), ids(&case["ids"]), "{name}: ids of {text:?}");
            assert_eq!(tok.encode_text(text), ids(&case["plain"]), "{name}: plain ids of {text:?}");
            assert_eq!(tok.decode(&ids(&case["ids"])), case["decoded"].as_str().unwrap(), "{name}: decode of {text:?}");
        }
        let pairs = meta["pairs"].as_array().unwrap();
        assert!(!pairs.is_empty());
        for pair in pairs {
            let (a, b) = (pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap());
            assert_eq!(tok.encode_pair(a, b), ids(&pair["ids"]), "{name}: ids of ({a:?}, {b:?})");
        }
    }
}

/// The begin-of-text token comes from the template alone: once, first, also for an empty text
/// and for a text that starts with the token itself (which is then there twice, as in Hugging Face).
#[test]
fn the_template_adds_the_begin_of_text_token_once() {
    let bos = Tokenizer::from_json(&template_text("bos")).unwrap();
    let s = bos.added_id("<s>").unwrap();
    assert_eq!(bos.encode(""), vec![s]);
    let hello = bos.encode("Hello world");
    assert_eq!(hello[0], s);
    assert_eq!(hello.iter().filter(|&&id| id == s).count(), 1);
    assert_eq!(&hello[1..], bos.encode_text("Hello world"));
    assert_eq!(bos.encode("<s>Hi")[..2], [s, s]);
    assert_eq!(bos.template().single(), [Piece::Special(vec![s]), Piece::A]);

    let none = Tokenizer::from_json(&template_text("none")).unwrap();
    assert_eq!(none.encode(""), Vec::<u32>::new());
    assert_eq!(none.encode("Hello world"), bos.encode_text("Hello world"));
    assert_eq!(none.template(), &Template::default());

    let llama3 = Tokenizer::from_json(&template_text("sequence")).unwrap();
    let begin = llama3.added_id("<|begin_of_text|>").unwrap();
    assert_eq!(begin, 300, "added after the BPE's ids, as Llama 3's 128000");
    assert_eq!(llama3.encode("")[..], [begin]);
}

/// The session encodes the prompt with the template: the model reads one begin-of-text token
/// first, and an empty prompt is that token alone; without one in the template, an empty prompt
/// starts from the tokenizer's start token and a text has none.
#[test]
fn the_session_gives_the_model_the_templates_ids() {
    let d = format!("{}/tests/fixtures/llama/gqa", env!("CARGO_MANIFEST_DIR"));
    let config = std::fs::read_to_string(format!("{d}/config.json")).unwrap();
    let weights = std::fs::read(format!("{d}/model.safetensors")).unwrap();
    for name in ["bos", "none"] {
        let session = LlamaSession::new(&config, &weights, &template_text(name)).unwrap();
        let case = &template_cases(name)["cases"][0];
        let (got, dropped) = session.tokens(case["text"].as_str().unwrap()).unwrap();
        assert_eq!((got, dropped), (ids(&case["ids"]), 0), "{name}");
        assert_eq!(session.tokens("").unwrap().0, vec![1], "{name}: an empty prompt is <s> alone");
    }
    // A prompt longer than the window loses text from its front, never the begin-of-text token.
    let session = LlamaSession::new(&config, &weights, &template_text("bos")).unwrap();
    let window = session.config().max_position_embeddings;
    let long = "Hello world ".repeat(window);
    let text = Tokenizer::from_json(&template_text("bos")).unwrap().encode_text(&long);
    let (got, dropped) = session.tokens(&long).unwrap();
    assert_eq!((got.len(), got[0], dropped), (window, 1, text.len() + 1 - window));
    assert_eq!(got[1..], text[text.len() - (window - 1)..], "the text's last tokens follow <s>");
}

/// The template applied as a pure function, with a special token of several ids.
#[test]
fn templates_apply_as_tokenizers_does() {
    let cls = Piece::Special(vec![7]);
    let sep = Piece::Special(vec![8, 9]);
    let t = Template::new(vec![cls.clone(), Piece::A, sep.clone()], vec![cls, Piece::A, sep.clone(), Piece::B, sep])
        .unwrap();
    assert_eq!(t.apply_single(&[1, 2]), [7, 1, 2, 8, 9]);
    assert_eq!(t.apply_single(&[]), [7, 8, 9]);
    assert_eq!(t.apply_pair(&[1], &[2, 3]), [7, 1, 8, 9, 2, 3, 8, 9]);
    assert_eq!(Template::default().apply_single(&[4, 5]), [4, 5]);
    assert_eq!(Template::default().apply_pair(&[4], &[5]), [4, 5]);
    let msg = |r: Result<Template, TokenizerError>| r.unwrap_err().to_string();
    assert!(msg(Template::new(vec![], vec![Piece::A, Piece::B])).contains("no Sequence A"));
    assert!(msg(Template::new(vec![Piece::A, Piece::B], vec![Piece::A, Piece::B])).contains("only a pair has"));
    assert!(msg(Template::new(vec![Piece::A], vec![Piece::A])).contains("both sequences"));
}

/// A broken template is refused with a message that names what is wrong.
#[test]
fn malformed_templates_are_refused_by_name() {
    let base = template_json("bos");
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut json = base.clone();
        edit(&mut json["post_processor"]);
        refusal(&json)
    };
    type Edit = fn(&mut Value);
    let cases: Vec<(&str, Edit)> = vec![
        ("uses \"<t>\", which its special_tokens lack", |p| p["single"][0]["SpecialToken"]["id"] = json!("<t>")),
        ("has no \"single\" template", |p| drop(p.as_object_mut().unwrap().remove("single"))),
        ("has no \"pair\" template", |p| drop(p.as_object_mut().unwrap().remove("pair"))),
        ("has no \"special_tokens\" map", |p| drop(p.as_object_mut().unwrap().remove("special_tokens"))),
        ("special token \"<s>\" has id 300, which is not in the vocabulary (300 ids)", |p| {
            p["special_tokens"]["<s>"] = json!({"id": "<s>", "ids": [300], "tokens": ["<s>"]})
        }),
        ("\"<s>\" has an id that is not a token id: -1", |p| p["special_tokens"]["<s>"]["ids"] = json!([-1])),
        ("\"<s>\" has no \"ids\" list", |p| p["special_tokens"]["<s>"]["ids"] = json!(1)),
        ("\"<s>\" has 1 ids but not as many tokens", |p| p["special_tokens"]["<s>"]["tokens"] = json!([])),
        ("has Sequence \"C\"; the sequences are A and B", |p| p["single"][1]["Sequence"]["id"] = json!("C")),
        ("pair template has Sequence \"a\"", |p| p["pair"][1]["Sequence"]["id"] = json!("a")),
        ("single template uses Sequence B", |p| p["single"][1]["Sequence"]["id"] = json!("B")),
        ("single template has no Sequence A", |p| p["single"] = json!([p["single"][0].clone()])),
        ("pair template must use both sequences", |p| p["pair"] = json!([p["pair"][1].clone()])),
        ("has no \"type_id\" number", |p| p["single"][1]["Sequence"]["type_id"] = json!("0")),
        ("has no \"id\" string", |p| p["single"][0]["SpecialToken"] = json!({"type_id": 0})),
        ("is \"Special\", neither Sequence nor SpecialToken", |p| {
            p["single"][0] = json!({"Special": {"id": "<s>", "type_id": 0}})
        }),
        ("is not {\"Sequence\": …} or {\"SpecialToken\": …}", |p| p["single"][0] = json!("<s>")),
        ("post-processor Sequence with two TemplateProcessing is not supported", |p| {
            *p = json!({"type": "Sequence", "processors": [p.clone(), p.clone()]})
        }),
        ("post-processor Sequence has no \"processors\" list", |p| *p = json!({"type": "Sequence"})),
    ];
    for (want, edit) in cases {
        let msg = with(&edit);
        assert!(msg.contains(want), "{want:?} not in {msg:?}");
    }
    // Two keys in one piece, or a gap in the ids (an id no token has), are refused too.
    let msg = with(&|p| p["single"][1]["SpecialToken"] = json!({"id": "<s>", "type_id": 0}));
    assert!(msg.contains("is not {\"Sequence\": …}"), "{msg}");
    let mut json = base.clone();
    json["added_tokens"].as_array_mut().unwrap().retain(|t| t["id"] != 0);
    json["model"]["vocab"].as_object_mut().unwrap().remove("<unk>");
    json["post_processor"]["special_tokens"]["<s>"]["ids"] = json!([0]);
    let msg = refusal(&json);
    assert!(msg.contains("has id 0, which is not in the vocabulary"), "{msg}");
}

/// Every value in the post-processor replaced by values of every kind: no panic, and a
/// tokenizer that loads encodes.
#[test]
fn broken_templates_never_panic() {
    let replacements = [
        json!(null),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(4_294_967_296u64),
        json!(""),
        json!("A"),
        json!("B"),
        json!("<s>"),
        json!([]),
        json!([1, 2]),
        json!({}),
        json!({"SpecialToken": {"id": "<s>", "type_id": 0}}),
        json!({"Sequence": {"id": "B", "type_id": 0}}),
    ];
    let mut loaded = 0;
    for name in ["bos", "sequence"] {
        let base = template_json(name);
        let mut pointers = Vec::new();
        collect_pointers(&base["post_processor"], "/post_processor".into(), &mut pointers);
        assert!(pointers.len() > 20, "{name}");
        for pointer in &pointers {
            for value in &replacements {
                let mut json = base.clone();
                *json.pointer_mut(pointer).unwrap() = value.clone();
                let text = json.to_string();
                let result = catch_unwind(AssertUnwindSafe(|| {
                    Tokenizer::from_json(&text).map(|tok| (tok.encode("Hi <s>"), tok.encode_pair("a", "")))
                }));
                match result {
                    Ok(Ok(_)) => loaded += 1,
                    Ok(Err(_)) => {}
                    Err(_) => panic!("{name}: {pointer} = {value} panicked"),
                }
            }
        }
        let text = template_text(name);
        let start = text.find("\"post_processor\"").unwrap();
        for cut in (start..start + 400).step_by(7) {
            let Some(prefix) = text.get(..cut) else { continue };
            assert!(Tokenizer::from_json(prefix).is_err(), "{name} cut at {cut}");
        }
    }
    assert!(loaded > 0, "some replacements (a type_id, a token's text) leave a valid template");
}

/// The JSON pointers of every value inside `value` (itself included).
fn collect_pointers(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    let escape = |key: &str| key.replace('~', "~0").replace('/', "~1");
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| collect_pointers(v, format!("{at}/{}", escape(k)), out)),
        Value::Array(list) => list.iter().enumerate().for_each(|(i, v)| collect_pointers(v, format!("{at}/{i}"), out)),
        _ => {}
    }
}
