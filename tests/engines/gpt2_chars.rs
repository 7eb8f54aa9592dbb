//! The training lab's checkpoints in the GPT-2 chapter: a character vocabulary (`char_vocab` in
//! config.json) read one character per token by the session, and the hand-over's link.

use crate::common;

use attention_live::demos::gpt2::status::{next, plan_load, Event, Plan, Status};
use attention_live::demos::gpt2::{trained, Model, Params};
use attention_live::gpt2::tokenizer::Tokenizer;
use attention_live::gpt2::RunError;
use attention_live::session::protocol::{Query, Reply, Request};
use attention_live::session::Gpt2Session as Session;
use attention_live::state::query::parse_query;
use attention_live::state::{Params as _, Values};
use attention_live::train::export::{checkpoint, Checkpoint};
use attention_live::train::{task, Positions, Task, TrainConfig, Trainer};
use pollster::block_on;

const VOCAB: &str = "0123456789abcdefghijklmnop>^";

/// A copy-task model after a few steps of training, as the lab exports it.
fn lab_checkpoint() -> Checkpoint {
    let cfg = TrainConfig {
        task: Task::Copy,
        length: 8,
        n_head: 2,
        n_embd: 16,
        positions: Positions::Learned,
        lr: 3e-3,
        ..TrainConfig::default()
    };
    let mut t = Trainer::new(cfg).unwrap();
    for _ in 0..3 {
        t.step().unwrap();
    }
    checkpoint(t.model()).unwrap()
}

fn session() -> Session {
    let ck = lab_checkpoint();
    Session::new(&ck.config_json, &ck.safetensors).expect("the lab's checkpoint loads")
}

fn query(prompt: &str) -> Query {
    Query { id: 1, prompt: prompt.into(), top: 5, temperature: 1.0, top_p: 1.0, seed: 3, ..Default::default() }
}

#[test]
fn the_lab_writes_the_vocabulary_this_test_expects() {
    let ck = lab_checkpoint();
    let cfg = attention_live::gpt2::Config::from_json(&ck.config_json).unwrap();
    assert_eq!(cfg.char_vocab.as_deref(), Some(VOCAB));
    assert_eq!(cfg.vocab_size, task::VOCAB);
    for (i, c) in VOCAB.chars().enumerate() {
        assert_eq!(task::token_char(i as u32), c);
    }
}

#[test]
fn a_prompt_is_one_token_per_character_and_the_chips_are_the_characters() {
    let s = session();
    assert_eq!(s.tokenizer().char_vocab().as_deref(), Some(VOCAB));
    let (a, attention) = block_on(s.analyze(&query("^abcab"))).unwrap();
    let texts: Vec<&str> = a.tokens.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(texts, ["^", "a", "b", "c", "a", "b"]);
    let ids: Vec<u32> = a.tokens.iter().map(|t| t.id).collect();
    assert_eq!(ids, [27, 10, 11, 12, 10, 11]);
    assert_eq!((a.attention.n_layer, a.attention.n_head, a.attention.t), (2, 2, 6));
    // Each query's weights over the keys it may see sum to 1; the future gets none.
    for t in 0..6 {
        let row: Vec<f32> = (0..6).map(|j| attention.weight(1, 1, t, j).unwrap()).collect();
        assert!((row[..=t].iter().sum::<f32>() - 1.0).abs() < 1e-4, "{row:?}");
        assert!(row[t + 1..].iter().all(|&w| w == 0.0), "{row:?}");
    }
    assert_eq!(a.next.len(), 5);
    for c in &a.next {
        assert_eq!(c.text, VOCAB.chars().nth(c.id as usize).unwrap().to_string());
    }
    let qkv = s.head_qkv(2, "^ab", 1, 0).unwrap();
    assert_eq!(qkv.tokens.iter().map(|t| t.text.as_str()).collect::<String>(), "^ab");
}

#[test]
fn generation_writes_vocabulary_characters_and_slides_past_the_window() {
    let s = session();
    let window = s.config().n_positions;
    assert_eq!(window, 16);
    let mut texts = Vec::new();
    let mut last = String::new();
    block_on(s.generate(&query("^abcdefgh"), 30, |token, text| {
        texts.push(token.text);
        last = text;
    }))
    .unwrap();
    assert_eq!(texts.len(), 30, "30 steps run, past the 16-token window");
    assert!(texts.iter().all(|t| t.chars().count() == 1 && VOCAB.contains(t.as_str())), "{texts:?}");
    assert_eq!(last, texts.concat(), "the continuation is the tokens' characters in order");
}

#[test]
fn a_character_outside_the_vocabulary_is_refused_with_the_allowed_ones() {
    let s = session();
    let e = block_on(s.analyze(&query("^abZcZ d"))).expect_err("refused");
    assert_eq!(e, RunError::NotInVocabulary { found: "Z ".into(), allowed: VOCAB.into() });
    let msg = e.to_string();
    // Each character quoted and isolated from the sentence around it (a space stays a space).
    assert!(msg.contains("“\u{2068}Z\u{2069}”, “\u{2068} \u{2069}”") && msg.contains(VOCAB), "{msg}");
    assert!(block_on(s.start_generation(&query("Zebra"))).is_err());
    assert!(s.head_qkv(1, "Z", 0, 0).is_err());
    // An empty prompt has no <|endoftext|> to start from in this vocabulary.
    assert_eq!(block_on(s.analyze(&query(""))).err(), Some(RunError::Empty));
}

#[test]
fn a_prompt_longer_than_the_window_keeps_its_end() {
    let s = session();
    let prompt = "^abcdefghabcdefgh0123"; // 21 characters, window 16
    let (a, _) = block_on(s.analyze(&query(prompt))).unwrap();
    assert_eq!(a.dropped, 5);
    assert_eq!(a.tokens.iter().map(|t| t.text.as_str()).collect::<String>(), &prompt[5..]);
}

#[test]
fn a_char_vocab_that_does_not_fit_the_vocabulary_is_refused() {
    let ck = lab_checkpoint();
    let mut cfg: serde_json::Value = serde_json::from_str(&ck.config_json).unwrap();
    let load = |cfg: &serde_json::Value| Session::new(&cfg.to_string(), &ck.safetensors).err().map(|e| e.to_string());
    cfg["char_vocab"] = "0123456789abcdef".into();
    let msg = load(&cfg).expect("a short vocabulary is refused");
    assert!(msg.contains("char_vocab has 16 characters but vocab_size is 28"), "{msg}");
    cfg["char_vocab"] = "0123456789abcdefghijklmnop>a".into();
    let msg = load(&cfg).expect("a repeated character is refused");
    assert!(msg.contains("'a' twice"), "{msg}");
    cfg["char_vocab"] = serde_json::json!(["0", "1"]);
    let msg = load(&cfg).expect("a list is refused");
    assert!(msg.contains("char_vocab must be a string"), "{msg}");
    cfg["char_vocab"] = serde_json::Value::Null;
    assert_eq!(load(&cfg), None, "without char_vocab the model loads, with GPT-2's tokenizer");
}

#[test]
fn gpt2s_tokenizer_is_unchanged() {
    let bpe = Tokenizer::gpt2();
    assert_eq!(bpe.char_vocab(), None);
    let ids = bpe.encode("Hello world<|endoftext|>");
    assert_eq!(ids, [15496, 995, 50256]);
    assert_eq!(bpe.encode_checked("Hello world<|endoftext|>"), Ok(ids.clone()));
    assert_eq!(bpe.decode(&ids), "Hello world<|endoftext|>");
    assert_eq!(bpe.token_text(995), " world");
    let chars = Tokenizer::chars(VOCAB);
    assert_eq!(chars.encode("^a?b"), [27, 10, 11], "encode skips what encode_checked refuses");
    assert_eq!(chars.decode(&[27, 10, 99]), "^a<99>");
}

#[test]
fn the_hand_over_link_opens_the_gpt2_chapter_on_the_trained_model() {
    let prompt = trained::probe_prompt(VOCAB, 16);
    assert_eq!(prompt.chars().count(), 16);
    assert!(prompt.starts_with('^'), "{prompt}");
    assert_eq!(prompt[1..8], prompt[9..16], "the letters again: {prompt}");
    let letters: std::collections::BTreeSet<char> = prompt[1..9].chars().collect();
    assert_eq!(letters.len(), 8, "distinct letters: {prompt}");
    assert_eq!(prompt, "^afkpejodafkpejo", "as tests/browser/gpt2-trained.test.mjs expects");
    let link = trained::link(&prompt);
    assert_eq!(
        link,
        "/gpt2-live/?gpt2.model=trained&gpt2.prompt=%5Eafkpejodafkpejo&gpt2.compare=&gpt2.head=0&gpt2.token=15#gpt2"
    );
    let (path, rest) = link.split_once('?').unwrap();
    assert_eq!(path, "/gpt2-live/");
    let (query, hash) = rest.split_once('#').unwrap();
    assert_eq!(hash, "gpt2");
    let (values, notices) = Values::from_pairs("gpt2", Params::TABLE, &parse_query(query));
    assert!(notices.is_empty(), "{notices:?}");
    let p = Params::read(&values);
    assert_eq!((p.model, p.prompt.as_str(), p.compare.as_str()), (Model::Trained, prompt.as_str(), ""));
    assert_eq!((p.layer, p.head, p.token), (0, 0, 15));
    assert_eq!(p.source().as_deref(), Some("/models/trained/"));
    let (_, chapter) = attention_live::chapters::find(trained::CHAPTER).expect("the chapter exists");
    assert!(chapter.demo_ids().any(|d| d == "gpt2"), "the chapter embeds the gpt2 demo");
    // The lab's own prompt wins; a config that is not the lab's is refused.
    let ck = lab_checkpoint();
    assert_eq!(trained::prompt_for(&ck.config_json, Some("^ab".into())), Ok("^ab".into()));
    assert_eq!(trained::prompt_for(&ck.config_json, None), Ok(prompt));
    let gpt2 = r#"{"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12}"#;
    assert!(trained::prompt_for(gpt2, None).unwrap_err().contains("char_vocab"));
}

#[test]
fn the_trained_model_is_read_from_storage_only_and_its_absence_is_said() {
    assert_eq!(Model::Trained.label(), "Your trained model (from the lab)");
    let keys: Vec<&str> = Model::OPTIONS.iter().map(|o| o.0).collect();
    assert_eq!(keys[..6], ["stories", "induction", "gpt2", "url", "file", "trained"], "old links keep their meaning");
    for asked_only_cached in [true, false] {
        let plan = plan_load(Model::Trained, "", asked_only_cached, &Status::Starting);
        let Plan::Send(Request::Load { name, base, expect, cache, only_cached, .. }) = plan else { panic!("{plan:?}") };
        assert_eq!(
            (name.as_str(), base.as_str(), expect, cache, only_cached),
            ("trained", "/models/trained/", None, true, true)
        );
    }
    let plan = plan_load(Model::Trained, "", true, &Status::Starting);
    let loading = next(&Status::Starting, Event::Planned(&plan));
    let absent = next(&loading, Event::Reply(&Reply::NotCached { name: "trained".into(), size: None, load: 0 }));
    assert_eq!(absent, Status::NotCached { name: "trained".into(), size: None });
}

/// The lab's small model (width 16, heads of 8, a 28-token vocabulary) on the GPU backend: the
/// self-test passes and the page's answers equal the CPU's.
#[test]
fn the_lab_model_runs_on_the_gpu_as_on_the_cpu() {
    let Some(gpu) = common::gpu().map(std::rc::Rc::new) else { return };
    let (cpu, on_gpu) = (session(), session());
    block_on(on_gpu.attach_gpu(gpu)).expect("the self-test passes");
    let q = Query { ablate: vec![(1, 0)], ..query("^abcdefghabcdefg") };
    let (a, wa) = block_on(cpu.analyze(&q)).unwrap();
    let (b, wb) = block_on(on_gpu.analyze(&q)).unwrap();
    assert_eq!(a.tokens, b.tokens);
    let (pa, pb): (Vec<f32>, Vec<f32>) = (wa.into_parts().1, wb.into_parts().1);
    let err = pa.iter().zip(&pb).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
    assert!(pa.len() == pb.len() && err < 1e-4, "attention differs by {err}");
    for (x, y) in a.next.iter().zip(&b.next) {
        assert!(x.id == y.id && (x.prob - y.prob).abs() < 1e-4, "{x:?} vs {y:?}");
    }
    assert!(on_gpu.take_notice().is_none(), "no fallback to the CPU");
}

#[test]
fn prompts_the_model_cannot_read_are_replaced_when_it_loads() {
    use attention_live::demos::gpt2::{DEFAULT_COMPARE, DEFAULT_PROMPT};
    let probe = trained::probe_prompt(VOCAB, 16);
    let fit = |p: &str, c: &str| trained::prompts_for_vocab(VOCAB, 16, p, c);
    assert_eq!(fit(DEFAULT_PROMPT, DEFAULT_COMPARE), Some((probe.clone(), String::new())));
    assert_eq!(fit("^abcab", DEFAULT_COMPARE), Some(("^abcab".into(), String::new())), "a fitting prompt stays");
    assert_eq!(fit("Z", "^ab"), Some((probe.clone(), "^ab".into())));
    assert_eq!(fit("", "x"), Some((probe, String::new())));
    assert_eq!(fit("^abcab", ""), None);
    assert_eq!(fit("^abcab", "^ba"), None);
    // The page learns the vocabulary with the model, and keeps it in the ready status.
    let s = session();
    let reply = s.loaded("trained", attention_live::session::protocol::Source::Cache);
    let wire: Reply = serde_json::from_str(&reply.encode()).unwrap();
    let ready = next(&Status::Starting, Event::Reply(&wire));
    assert!(matches!(ready, Status::Ready { char_vocab: Some(ref v), n_positions: 16, .. } if v == VOCAB), "{ready:?}");
}

/// The training lab's model in "Looking inside a model": its head detectors read its own letters
/// after its start mark (it has no " A"), and the lab's "Look inside" link opens the longest
/// repeat its window holds, with a corrupted probe that differs where an induction head copies.
#[test]
fn the_lab_model_is_looked_inside_on_its_own_letters() {
    use attention_live::demos::inside::{self, Letters, Tool};
    use attention_live::session::inside::HeadsQuery;
    let ck = lab_checkpoint();
    let s = session();
    let (ids, offset) = s.repeated_sequence(6, 3).expect("a character model has a repeated sequence");
    let text: String = ids.iter().map(|&i| VOCAB.chars().nth(i as usize).unwrap()).collect();
    assert_eq!((offset, &text[..1]), (1, "^"), "{text}");
    assert!(text[1..].chars().all(|c| c.is_ascii_lowercase()), "{text}");
    assert_eq!(text[1..7], text[7..13], "{text}");
    let scores = block_on(s.head_detectors(&HeadsQuery { id: 4, n: 6, seed: 3 })).expect("the detectors run");
    assert_eq!((scores.induction.len(), scores.induction[0].len()), (2, 2), "two layers of two heads");
    assert!(scores.previous.iter().flatten().all(|v| (0.0..=1.0).contains(v)), "{scores:?}");

    let probe = trained::prompt_for(&ck.config_json, None).unwrap();
    let link = inside::trained_link(&ck.config_json, None).unwrap();
    let (path, rest) = link.split_once('?').unwrap();
    let (query, hash) = rest.split_once('#').unwrap();
    assert_eq!((path, hash), ("/inside/", "inside"));
    let (values, notices) = inside::SPEC.from_link(&parse_query(query));
    assert!(notices.is_empty(), "{notices:?}");
    let p = inside::Params::read(&values);
    assert_eq!(
        (p.model, p.tool, p.prompt.as_str(), p.clean.as_str()),
        (inside::Model::Trained, Tool::Heads, &*probe, &*probe)
    );
    let window = s.shape().window;
    assert!(2 * p.n.n() < window && p.n == Letters::Five, "5 letters twice fit {window} positions, 10 do not");
    // "^afkpejo" then "afkpejo": after the last "o" an induction head copies what followed "o"
    // the first time, the "d"; the corrupted probe has another letter there.
    let changed: Vec<usize> =
        probe.chars().zip(p.corrupt.chars()).enumerate().filter(|(_, (a, b))| a != b).map(|(i, _)| i).collect();
    let last = probe.chars().last().unwrap();
    assert_eq!(changed, [probe.find(last).unwrap() + 1], "{probe} → {}", p.corrupt);
    assert_eq!(inside::corrupted("", VOCAB), "");
}
