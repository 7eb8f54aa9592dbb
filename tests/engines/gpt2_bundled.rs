//! The models the book ships (static/models/, trained by scripts/gpt2/train_bundled.py), run by
//! our engine: the heads their cards and the chapter name do what is claimed, and the worker's
//! `Session` answers the page's questions correctly.

use attention_live::gpt2::tokenizer::Tokenizer;
use attention_live::gpt2::{Capture, ForwardOptions};
use attention_live::numerics::rng::Rng;
use attention_live::session::protocol::Query;
use attention_live::session::Gpt2Session as Session;
use serde_json::Value;

use crate::common;

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
    let ids = tok.encode(attention_live::demos::gpt2::DEFAULT_PROMPT);
    let (she, cat) = (ids.iter().position(|&i| i == 1375).unwrap(), ids.iter().position(|&i| i == 3797).unwrap());
    let out = s
        .model
        .forward(&ids, &mut s.model.new_cache(), &ForwardOptions { capture: Capture::All, ..Default::default() })
        .unwrap();
    let a = out.attentions[l].as_ref().unwrap();
    let row = a.slice(ndarray::s![h, she, ..]);
    let best = row.iter().enumerate().fold((0, f32::MIN), |b, (j, &w)| if w > b.1 { (j, w) } else { b }).0;
    assert_eq!(best, cat, "layer {l} head {h}: She's largest weight goes to token {best}, not cat");
    let want = card["she_cat_head"]["weight"].as_f64().unwrap() as f32;
    assert!((row[cat] - want).abs() < 0.01, "weight {} vs the card's {want} (from transformers)", row[cat]);
    // The chapter names this head, the demo opens on it, and quotes the card's perplexity.
    let text = chapter();
    assert!(text.contains(&format!("layer {l}, head {h}")), "the chapter names layer {l}, head {h}");
    let p = <attention_live::demos::gpt2::Params as attention_live::state::Params>::defaults();
    assert_eq!((p.layer, p.head, p.token), (l as i64, h as i64, she as i64));
    let ppl = card["val_perplexity"].as_f64().unwrap();
    assert!(text.contains(&format!("{ppl:.2}")), "the chapter quotes the validation perplexity {ppl:.2}");
}

/// The demo's query for its default values, with `prompt` and the knock-outs given.
fn demo_query(prompt: &str, ablate: &[(usize, usize)]) -> Query {
    use attention_live::demos::gpt2::{query, Params};
    let mut q = query(&<Params as attention_live::state::Params>::defaults(), 1);
    q.prompt = prompt.into();
    q.ablate = ablate.to_vec();
    q
}

/// The chart's rows for a prompt with and without knocking out `head`, as the page shows them.
fn chart(s: &Session, prompt: &str, head: (usize, usize)) -> Vec<attention_live::demos::gpt2::NextRow> {
    use attention_live::demos::gpt2::{next_rows, CANDIDATES, SHOWN};
    let (k, _) = pollster::block_on(s.analyze(&demo_query(prompt, &[head]))).unwrap();
    next_rows(&k.next, k.baseline.as_deref(), CANDIDATES, SHOWN)
}

fn top(s: &Session, prompt: &str, ablate: &[(usize, usize)], n: usize) -> Vec<(String, f64)> {
    let (a, _) = pollster::block_on(s.analyze(&demo_query(prompt, ablate))).unwrap();
    a.next.iter().take(n).map(|c| (c.text.clone(), c.prob)).collect()
}

/// The default prompts differ only in the animal and stop where the next word depends on it: the
/// demo opens on the head that links "She" to the animal, and knocking it out must move the
/// chart a lot (and no other head may), with the numbers the chapter quotes.
#[test]
fn the_default_prompts_show_the_pronoun_head_deciding_the_next_token() {
    use attention_live::demos::gpt2::{DEFAULT_COMPARE, DEFAULT_PROMPT};
    let (s, card) = model("stories");
    let featured = head(&card, "she_cat_head");
    let text = chapter();
    let (cat, dog) = (top(&s, DEFAULT_PROMPT, &[], 5), top(&s, DEFAULT_COMPARE, &[], 5));
    eprintln!("cat: {cat:?}\ndog: {dog:?}");
    // Intact, the five most likely words differ completely between the two animals, and each
    // has about a fifth of the probability (the stories pick one of five likes at random).
    assert!(cat.iter().all(|(t, _)| dog.iter().all(|(u, _)| t != u)), "cat {cat:?} / dog {dog:?}");
    assert!(cat.iter().chain(&dog).all(|(_, p)| (0.15..0.25).contains(p)), "cat {cat:?} / dog {dog:?}");
    let list = |v: &[(String, f64)]| v.iter().map(|(t, _)| format!("\"{t}\"")).collect::<Vec<_>>().join(", ");
    assert!(text.contains(&list(&cat)), "the chapter lists the cat's five: {}", list(&cat));
    assert!(text.contains(&list(&dog)), "the chapter lists the dog's five: {}", list(&dog));
    // Knocked out, the featured head takes the animal's words down to a few percent, in the
    // chart's own rows (intact and knocked out side by side) and as the chapter says.
    for (prompt, word) in [(DEFAULT_PROMPT, " belly"), (DEFAULT_COMPARE, " bones")] {
        let rows = chart(&s, prompt, featured);
        let r = rows.iter().find(|r| r.text == word).unwrap_or_else(|| panic!("{word} is in the chart: {rows:?}"));
        let (before, after) = (r.intact, r.knocked.unwrap());
        eprintln!("{word}: {} -> {}", before.label(), after.label());
        assert!(before.bar() > 0.18 && after.bar() < 0.03, "{word}: {before:?} -> {after:?}");
        let quoted = format!("\"{word}\" from {} to {}", before.label(), after.label());
        assert!(text.contains(&quoted), "the chapter quotes {quoted}");
    }
    // Without the head the model cannot tell the stories apart: the same five guesses for both.
    let (cat_ko, dog_ko) = (top(&s, DEFAULT_PROMPT, &[featured], 5), top(&s, DEFAULT_COMPARE, &[featured], 5));
    eprintln!("knocked out: cat {cat_ko:?}\ndog {dog_ko:?}");
    assert_eq!(cat_ko.iter().map(|c| &c.0).collect::<Vec<_>>(), dog_ko.iter().map(|c| &c.0).collect::<Vec<_>>());
    let guess = format!("\"{}\" at {:.0}%", cat_ko[0].0, 100.0 * cat_ko[0].1);
    assert!((cat_ko[0].1 - dog_ko[0].1).abs() < 0.005 && text.contains(&guess), "the chapter says {guess}");
    // No other head matters here: knocking out any one of the other 15 moves each prompt's
    // favourite by less than one percentage point.
    let cfg = s.model.config.clone();
    for (prompt, fav) in [(DEFAULT_PROMPT, &cat[0]), (DEFAULT_COMPARE, &dog[0])] {
        for l in 0..cfg.n_layer {
            for h in (0..cfg.n_head).filter(|&h| (l, h) != featured) {
                let (a, _) = pollster::block_on(s.analyze(&demo_query(prompt, &[(l, h)]))).unwrap();
                let p = a.next.iter().find(|c| c.text == fav.0).map_or(0.0, |c| c.prob);
                assert!((p - fav.1).abs() < 0.01, "knocking out {l}.{h} moves {:?} from {} to {p}", fav.0, fav.1);
            }
        }
    }
    assert!(text.contains("any of the other 15 heads"), "the chapter says no other head matters");
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
        let letters: Vec<String> =
            (0..8).map(|_| ((b'A' + (rng.uniform() * 26.0) as u8) as char).to_string()).collect();
        let text = [letters.join(" "), letters.join(" ")].join(" ");
        let ids = tok.encode(&text);
        assert_eq!(ids.len(), 16, "{text}");
        let out = s
            .model
            .forward(&ids, &mut s.model.new_cache(), &ForwardOptions { capture: Capture::All, ..Default::default() })
            .unwrap();
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
    assert_eq!(
        (p_best / cfg.n_head, p_best % cfg.n_head),
        head(&card, "previous_token_head"),
        "previous-token scores {prev:?}"
    );
    assert!(i_score > 0.4, "induction score {i_score}");
    // The induction head lives in a later layer than the previous-token head it relies on.
    assert!(i_best / cfg.n_head > p_best / cfg.n_head);
    let text = chapter();
    let (il, ih) = head(&card, "induction_head");
    assert!(text.contains(&format!("layer {il}, head {ih}")), "the chapter names the induction head");
    assert!(p_score > 0.2, "previous-token score {p_score}");
}

fn query(prompt: &str) -> Query {
    Query {
        id: 7,
        prompt: prompt.into(),
        layer: 0,
        ablate: vec![],
        temperature: 1.0,
        top_k: 0,
        top_p: 1.0,
        seed: 3,
        top: 10,
    }
}

#[test]
fn session_analysis_reports_tokens_weights_and_candidates() {
    let (s, _) = model("induction");
    let (a, w) = pollster::block_on(s.analyze(&query("Q F K B Q F K"))).unwrap();
    assert_eq!(a.id, 7);
    assert_eq!(a.tokens.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(), ["Q", " F", " K", " B", " Q", " F", " K"]);
    assert_eq!(a.attention.layers, vec![0, 1]);
    assert_eq!(w.data().len(), 2 * 4 * 7 * 7);
    // Every attention row sums to 1 over the visible keys.
    for row in w.data().chunks(7).collect::<Vec<_>>() {
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
    assert!((a.next[0].prob - 0.8).abs() < 0.05, "intact p(B) = {}", a.next[0].prob);
    assert!(k.next.iter().all(|c| c.text != " B"), "B is still in the top ten: {p_b}");
    // The page asks for more candidates than it shows, so its chart keeps " B" in first place
    // (sorted by the intact model) with both probabilities, as the chapter quotes them.
    let rows = chart(&s, "Q F K B Q F K", (1, 3));
    let (intact, knocked) = (rows[0].intact, rows[0].knocked.unwrap());
    assert_eq!(rows[0].text, " B");
    assert!(matches!(knocked, attention_live::demos::gpt2::Prob::Exact(p) if p < 0.05), "{knocked:?}");
    let quoted = format!(
        "gives \" B\" {} of the probability; knock out layer 1, head 3 and it falls to {}",
        intact.label(),
        knocked.label()
    );
    assert!(chapter().contains(&quoted), "the chapter says: {quoted}");
}

#[test]
fn long_prompts_are_cut_to_the_window_and_generation_slides_past_it() {
    let (s, _) = model("induction");
    let window = s.model.config.n_positions;
    let long = "A B C D ".repeat(40).trim_end().to_string(); // 160 tokens
    let (a, w) = pollster::block_on(s.analyze(&query(&long))).unwrap();
    assert_eq!(a.tokens.len(), window);
    assert_eq!(a.dropped, 160 - window);
    assert_eq!(w.data().len(), 2 * 4 * window * window);
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

/// Each bundled model opens on the head its card names, from the query token the chapter's
/// example reads: the pet-stories models on the head that links " She" to " cat", the Induction
/// model on its induction head, from the last letter of the chapter's repeated letters.
#[test]
fn each_bundled_model_opens_on_its_featured_head_and_prompts() {
    use attention_live::demos::gpt2::{Model, DEFAULT_COMPARE, DEFAULT_PROMPT, INDUCTION_PROMPT};
    let card = |name: &str| -> Value {
        let path = format!("{}/static/models/{name}/card.json", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let gpt2 = Tokenizer::gpt2();
    let llama_json = format!("{}/static/models/stories-llama/tokenizer.json", env!("CARGO_MANIFEST_DIR"));
    let llama = attention_live::llama::Tokenizer::from_json(&std::fs::read_to_string(llama_json).unwrap()).unwrap();
    let she = |ids: &[u32], she_id: u32| ids.iter().position(|&i| i == she_id).unwrap() as i64;
    let cases = [
        (Model::Stories, "she_cat_head", she(&gpt2.encode(DEFAULT_PROMPT), gpt2.encode(" She")[0])),
        (Model::StoriesLlama, "she_cat_head", she(&llama.encode(DEFAULT_PROMPT), llama.encode(" She")[0])),
        (Model::Induction, "induction_head", gpt2.encode(INDUCTION_PROMPT).len() as i64 - 1),
    ];
    for (model, key, token) in cases {
        let f = model.featured();
        let (l, h) = head(&card(model.key()), key);
        assert_eq!(f.head, Some((l as i64, h as i64, token)), "{model:?}: the card's {key} from token {token}");
    }
    assert_eq!(
        (Model::StoriesLlama.featured().prompt, Model::StoriesLlama.featured().compare),
        (DEFAULT_PROMPT, DEFAULT_COMPARE)
    );
    // The chapter's example for the Induction model is its prompt, and it names GPT-2's head.
    assert!(chapter().contains(&format!("\"{INDUCTION_PROMPT}\"")));
    let (l, h, _) = Model::Gpt2.featured().head.unwrap();
    assert!(chapter().contains(&format!("GPT-2 small shows in its layer {l}, head {h}")));
}

/// Switching models moves what the reader left at the old model's featured values to the new
/// model's, and keeps what the reader changed; a link's keys win over the featured ones.
#[test]
fn switching_models_moves_only_the_featured_values() {
    use attention_live::demos::gpt2::{switch_featured, Model, Params, INDUCTION_PROMPT, SPEC};
    use attention_live::state::query::{build_query, parse_query};
    use attention_live::state::{Params as _, Value, Values};
    let defaults = <Params as attention_live::state::Params>::defaults();
    let mut p = defaults.clone();
    p.model = Model::Induction;
    switch_featured(&mut p, Model::Stories);
    assert_eq!((p.prompt.as_str(), p.compare.as_str(), p.layer, p.head, p.token), (INDUCTION_PROMPT, "", 1, 3, 9));
    p.model = Model::StoriesLlama;
    switch_featured(&mut p, Model::Induction);
    assert_eq!((p.prompt.as_str(), p.layer, p.head, p.token), (defaults.prompt.as_str(), 0, 1, 10));
    // The reader's own prompt and head stay.
    p.prompt = "My horse is tall. She likes".into();
    p.head = 2;
    p.model = Model::Stories;
    switch_featured(&mut p, Model::StoriesLlama);
    assert_eq!(
        (p.prompt.as_str(), p.compare.as_str(), p.head),
        ("My horse is tall. She likes", defaults.compare.as_str(), 2)
    );
    // A link's missing keys are the model's own: one naming only the model opens on its
    // featured values, one naming the layer keeps it.
    let open = |q: &str| SPEC.from_link(&parse_query(q)).0;
    let v = open("gpt2.model=induction");
    assert_eq!(
        (v.get("prompt"), v.get("compare")),
        (Some(&Value::Text(INDUCTION_PROMPT.into())), Some(&Value::Text("".into())))
    );
    assert_eq!(["layer", "head", "token"].map(|k| v.get(k).cloned()), [1, 3, 9].map(|x| Some(Value::Int(x))));
    assert_eq!(open("gpt2.model=induction&gpt2.layer=0").get("layer"), Some(&Value::Int(0)));
    // Every state a reader can reach on a model with a featured head comes back from its
    // address-bar link, including the values that are the stories model's defaults.
    let mut q = defaults;
    q.model = Model::Induction;
    (q.layer, q.head, q.token) = (0, 3, 10);
    q.prompt = "A B C D E F G H I J K L".into();
    let mut values = Values::defaults(SPEC.params);
    q.write(&mut values);
    let pairs = SPEC.link_pairs(&values);
    let link = build_query(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    assert_eq!(open(&link), values, "{link}");
}

/// The query token belongs to the prompt: a switch that keeps the reader's prompt keeps it.
#[test]
fn a_switch_keeps_the_query_token_of_the_readers_prompt() {
    use attention_live::demos::gpt2::{switch_featured, Model, Params};
    let mut p = <Params as attention_live::state::Params>::defaults();
    p.model = Model::Induction;
    switch_featured(&mut p, Model::Stories);
    (p.prompt, p.token) = ("A B C A B".into(), 4);
    p.model = Model::Stories;
    switch_featured(&mut p, Model::Induction);
    assert_eq!((p.prompt.as_str(), p.layer, p.head, p.token), ("A B C A B", 0, 3, 4));
}
