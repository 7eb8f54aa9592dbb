//! The models the book ships (static/models/, trained by scripts/gpt2/train_bundled.py), run by
//! our engine: the heads their cards and the chapter name do what is claimed, and the worker's
//! `Session` answers the page's questions correctly.

use attention_live::gpt2::session::{Query, Session};
use attention_live::gpt2::tokenizer::Tokenizer;
use attention_live::gpt2::{Capture, ForwardOptions};
use attention_live::numerics::rng::Rng;
use serde_json::Value;

mod common;

fn model(name: &str) -> (Session, Value) {
    let d = format!("{}/static/models/{name}", env!("CARGO_MANIFEST_DIR"));
    let (cfg, bytes) = common::checkpoint(&format!("static/models/{name}"));
    assert!(bytes.len() < 25_000_000, "{name} is within the download budget");
    let card: Value = serde_json::from_str(&std::fs::read_to_string(format!("{d}/card.json")).unwrap()).unwrap();
    (Session::new(&cfg, &bytes).unwrap(), card)
}

fn chapter() -> String {
    std::fs::read_to_string(format!("{}/chapters/gpt2-live.md", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn head(card: &Value, key: &str) -> (usize, usize) {
    (card[key]["layer"].as_u64().unwrap() as usize, card[key]["head"].as_u64().unwrap() as usize)
}

#[test]
fn the_stories_model_has_a_head_where_she_looks_at_cat() {
    let (s, card) = model("stories");
    let (l, h) = head(&card, "she_cat_head");
    let tok = Tokenizer::gpt2();
    let ids = tok.encode("My cat is small, cute, and fluffy. She likes belly rubs.");
    let (she, cat) = (ids.iter().position(|&i| i == 1375).unwrap(), ids.iter().position(|&i| i == 3797).unwrap());
    let out = s.model.forward(&ids, &mut s.model.new_cache(), &ForwardOptions { capture: Capture::All, ..Default::default() }).unwrap();
    let a = out.attentions[l].as_ref().unwrap();
    let row = a.slice(ndarray::s![h, she, ..]);
    let best = row.iter().enumerate().fold((0, f32::MIN), |b, (j, &w)| if w > b.1 { (j, w) } else { b }).0;
    assert_eq!(best, cat, "layer {l} head {h}: She's largest weight goes to token {best}, not cat");
    let want = card["she_cat_head"]["weight"].as_f64().unwrap() as f32;
    assert!((row[cat] - want).abs() < 0.01, "weight {} vs the card's {want} (from transformers)", row[cat]);
    // The chapter names this head, the demo opens on it, and quotes the card's perplexity.
    let text = chapter();
    assert!(text.contains(&format!("layer {l}, head {h}")), "the chapter names layer {l}, head {h}");
    let p = attention_live::demos::gpt2::PARAMS;
    let default = |key: &str| p.iter().find(|x| x.key == key).unwrap().default_value();
    use attention_live::state::Value as V;
    assert_eq!((default("layer"), default("head"), default("token")), (V::Int(l as i64), V::Int(h as i64), V::Int(she as i64)));
    let ppl = card["val_perplexity"].as_f64().unwrap();
    assert!(text.contains(&format!("{ppl:.2}")), "the chapter quotes the validation perplexity {ppl:.2}");
}

/// Induction score of every head on repeated random letter strings (our own RNG, not the
/// training script's): the mean weight from each token in the second copy onto the token just
/// after its first occurrence.
#[test]
fn the_induction_model_has_the_previous_token_and_induction_heads_its_card_names() {
    let (s, card) = model("induction");
    let cfg = s.model.config.clone();
    let tok = Tokenizer::gpt2();
    let mut rng = Rng::new(2024);
    let (mut ind, mut prev) = (vec![0.0f32; cfg.n_layer * cfg.n_head], vec![0.0f32; cfg.n_layer * cfg.n_head]);
    let trials = 20;
    for _ in 0..trials {
        let letters: Vec<String> = (0..8).map(|_| ((b'A' + (rng.uniform() * 26.0) as u8) as char).to_string()).collect();
        let text = [letters.join(" "), letters.join(" ")].join(" ");
        let ids = tok.encode(&text);
        assert_eq!(ids.len(), 16, "{text}");
        let out = s.model.forward(&ids, &mut s.model.new_cache(), &ForwardOptions { capture: Capture::All, ..Default::default() }).unwrap();
        for l in 0..cfg.n_layer {
            let a = out.attentions[l].as_ref().unwrap();
            for h in 0..cfg.n_head {
                ind[l * cfg.n_head + h] += (8..16).map(|i| a[[h, i, i - 7]]).sum::<f32>() / 8.0 / trials as f32;
                prev[l * cfg.n_head + h] += (1..16).map(|i| a[[h, i, i - 1]]).sum::<f32>() / 15.0 / trials as f32;
            }
        }
    }
    let argmax = |v: &[f32]| v.iter().enumerate().fold((0, f32::MIN), |b, (i, &x)| if x > b.1 { (i, x) } else { b });
    let (i_best, i_score) = argmax(&ind);
    let (p_best, p_score) = argmax(&prev);
    assert_eq!((i_best / cfg.n_head, i_best % cfg.n_head), head(&card, "induction_head"), "induction scores {ind:?}");
    assert_eq!((p_best / cfg.n_head, p_best % cfg.n_head), head(&card, "previous_token_head"), "previous-token scores {prev:?}");
    assert!(i_score > 0.4, "induction score {i_score}");
    // The induction head lives in a later layer than the previous-token head it relies on.
    assert!(i_best / cfg.n_head > p_best / cfg.n_head);
    let text = chapter();
    let (il, ih) = head(&card, "induction_head");
    assert!(text.contains(&format!("layer {il}, head {ih}")), "the chapter names the induction head");
    assert!(p_score > 0.2, "previous-token score {p_score}");
}

fn query(prompt: &str) -> Query {
    Query { id: 7, prompt: prompt.into(), layer: 0, ablate: vec![], temperature: 1.0, top_k: 0, top_p: 1.0, seed: 3, top: 10 }
}

#[test]
fn session_analysis_reports_tokens_weights_and_candidates() {
    let (s, _) = model("induction");
    let (a, w) = pollster::block_on(s.analyze(&query("Q F K B Q F K"))).unwrap();
    assert_eq!(a.id, 7);
    assert_eq!(a.tokens.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(), ["Q", " F", " K", " B", " Q", " F", " K"]);
    assert_eq!(a.layers, vec![0, 1]);
    assert_eq!(w.len(), 2 * 4 * 7 * 7);
    // Every attention row sums to 1 over the visible keys.
    for row in w.chunks(7).collect::<Vec<_>>() {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    }
    assert_eq!(a.next.len(), 10);
    assert!(a.next.windows(2).all(|p| p[0].prob >= p[1].prob));
    assert_eq!(a.next[0].text, " B", "the induction model continues the repeat");
    assert!(a.baseline.is_none());
    // Knocking out the induction head removes most of the repeat's probability.
    let mut q = query("Q F K B Q F K");
    q.ablate = vec![(1, 3)];
    let (k, _) = pollster::block_on(s.analyze(&q)).unwrap();
    let base = k.baseline.as_ref().unwrap();
    assert_eq!(base[0], a.next[0]);
    let p_b = k.next.iter().find(|c| c.text == " B").map_or(0.0, |c| c.prob);
    // As the chapter says: about 80% intact; out of the top ten without the head.
    assert!((a.next[0].prob - 0.8).abs() < 0.05, "intact p(B) = {}", a.next[0].prob);
    assert!(k.next.iter().all(|c| c.text != " B"), "B is still in the top ten: {p_b}");
}

#[test]
fn long_prompts_are_cut_to_the_window_and_generation_slides_past_it() {
    let (s, _) = model("induction");
    let window = s.model.config.n_positions;
    let long = "A B C D ".repeat(40).trim_end().to_string(); // 160 tokens
    let (a, w) = pollster::block_on(s.analyze(&query(&long))).unwrap();
    assert_eq!(a.tokens.len(), window);
    assert_eq!(a.dropped, 160 - window);
    assert_eq!(w.len(), 2 * 4 * window * window);
    // Generation from a full window keeps going (the window slides) and is reproducible.
    let run = |seed| {
        let mut q = query(&long);
        q.seed = seed;
        let mut out = Vec::new();
        pollster::block_on(s.generate(&q, 30, |t, _| out.push(t.id))).unwrap();
        out
    };
    let a = run(5);
    assert_eq!(a.len(), 30);
    assert_eq!(a, run(5));
    // Greedy generation continues the repeated pattern.
    let mut q = query("Q F K B Z Q F K B Z Q");
    q.temperature = 0.0;
    let mut text = String::new();
    pollster::block_on(s.generate(&q, 4, |_, t| text = t)).unwrap();
    assert_eq!(text, " F K B Z");
}
