//! "Compare two models" in the chapter's demo (`demos::gpt2::compare`): the `model-b` link key,
//! what the second side runs, and where the shared selection lands in a model whose tokenizer
//! splits the prompt differently (the bundled GPT-2 against the bundled Llama-family model).

use attention_live::demos;
use attention_live::demos::gpt2::compare::{matching_token, moved_note, side_b_params, side_b_selection, side_title};
use attention_live::demos::gpt2::{Model, ModelB, Params, DEFAULT_PROMPT, SPEC};
use attention_live::session::protocol::{Query, Token};
use attention_live::state::query::parse_query;
use attention_live::state::{Params as _, Values};
use pollster::block_on;

use crate::common;

/// The browser test's prompt (tests/browser/gpt2.test.mjs).
const PROMPT: &str = "My cat Bartholomew is small, cute, and fluffy. She likes";

fn from_link(query: &str) -> Params {
    Params::read(&Values::from_pairs(SPEC.id, SPEC.params, &parse_query(query)).0)
}

/// The tokens a bundled model makes of `prompt`, as the worker sends them.
fn tokens(dir: &str, prompt: &str) -> Vec<Token> {
    analysis(dir, prompt).0
}

/// The tokens the model kept of `prompt` (its end, when it is longer than the model's window)
/// and how many it dropped from the start.
fn analysis(dir: &str, prompt: &str) -> (Vec<Token>, usize) {
    let s = demos::bundled_session(dir, &mut common::static_file).unwrap();
    let q = Query { prompt: prompt.into(), top: 5, temperature: 1.0, top_p: 1.0, ..Default::default() };
    let a = block_on(s.analyze(&q)).unwrap().0;
    (a.tokens, a.dropped)
}

fn texts(t: &[Token]) -> Vec<&str> {
    t.iter().map(|t| t.text.as_str()).collect()
}

#[test]
fn old_links_show_one_model_and_the_key_names_the_second() {
    assert_eq!(from_link("").model_b, ModelB::None, "a link without the key: one model, as before");
    assert_eq!(from_link("gpt2.model=stories-llama").model_b, ModelB::None);
    assert_eq!(from_link("gpt2.model-b=stories-llama").model_b, ModelB::StoriesLlama);
    assert_eq!(from_link("gpt2.model-b=nonsense").model_b, ModelB::None);
    let keys: Vec<&str> = ModelB::OPTIONS.iter().map(|o| o.0).collect();
    assert_eq!(keys, ["none", "stories", "induction", "gpt2", "smollm2", "stories-llama"]);
    // Each model is offered under its own key and label.
    for (b, (key, label)) in ModelB::ALL.iter().zip(ModelB::OPTIONS).skip(1) {
        let m = b.model().unwrap();
        assert_eq!((m.key(), m.label()), (*key, *label));
    }
    assert_eq!(ModelB::None.model(), None);
}

#[test]
fn the_second_side_runs_the_prompt_alone_intact_in_its_own_model() {
    let p = from_link("gpt2.model=url&gpt2.base=http://x/m&gpt2.model-b=gpt2&gpt2.ablate=1.2&gpt2.layer=9");
    let b = side_b_params(&p, None);
    assert_eq!((b.model, b.base.as_str(), b.compare.as_str(), b.ablate.as_str()), (Model::Gpt2, "", "", ""));
    assert_eq!((b.prompt.as_str(), b.layer), (p.prompt.as_str(), 9), "the same prompt; the layer until the shape");
    assert_eq!(side_b_params(&p, Some((4, 4))).layer, 3, "inside the loaded model once it is known");
    assert_eq!(side_title('B', b.model), "Model B: GPT-2 small, 124M (download 548 MB)");
}

#[test]
fn the_query_token_is_matched_by_where_it_ends_in_the_text() {
    // The default prompt is made of words both vocabularies hold; a name neither was trained on
    // splits differently.
    let a = tokens("stories", PROMPT);
    let b = tokens("stories-llama", PROMPT);
    eprintln!("GPT-2: {:?}\nLlama: {:?}", texts(&a), texts(&b));
    assert_ne!(texts(&a), texts(&b), "the two tokenizers split the prompt differently");
    assert_eq!(a.iter().map(|t| t.text.as_str()).collect::<String>(), PROMPT);
    assert_eq!(b.iter().map(|t| t.text.as_str()).collect::<String>(), PROMPT);
    // The chapter's example: the name's tokens, between " cat" and " is" in each.
    assert_eq!((&texts(&a)[..2], &texts(&b)[..2]), (&["My", " cat"][..], &["My", " cat"][..]));
    let name = |t: &[Token]| t.iter().position(|t| t.text == " is").unwrap() - 2;
    let says = format!(
        "the bundled GPT-2 reads the name \"Bartholomew\" as {} tokens and the Llama-family model as {}.",
        name(&a),
        name(&b)
    );
    assert_eq!((name(&a), name(&b)), (3, 10));
    let chapter = std::fs::read_to_string(format!("{}/chapters/gpt2-live.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert!(chapter.contains(&says), "the chapter should say {says}");
    // The default query, " She" in GPT-2, is the token that ends with "She" in the other model.
    let she = a.iter().position(|t| t.text == " She").unwrap();
    let there = matching_token(&a, she, &b);
    let upto: String = b[..=there].iter().map(|t| t.text.as_str()).collect();
    assert!(upto.trim_end().ends_with("She"), "{upto:?}");
    assert_eq!(matching_token(&b, there, &a), she, "and back");
    // The last token matches the last; before the other model answers, its last token.
    assert_eq!(matching_token(&a, a.len() - 1, &b), b.len() - 1);
    assert_eq!(matching_token(&[], 10, &b), b.len() - 1);
    assert_eq!(matching_token(&a, 500, &b), b.len() - 1);
    assert_eq!(matching_token(&a, 0, &[]), 0);
}

#[test]
fn a_prompt_longer_than_the_window_is_matched_from_its_end() {
    // Each model keeps the prompt's end and drops as many tokens from its start as it needs:
    // the two kept texts start at different places.
    let long = format!("{} {PROMPT}", "The dog likes bones and the cat likes milk.".repeat(20));
    let (a, cut_a) = analysis("stories", &long);
    let (b, cut_b) = analysis("stories-llama", &long);
    assert!(cut_a > 0 && cut_b > 0, "both windows are too short for the prompt: {cut_a}, {cut_b}");
    let (text_a, text_b) = (texts(&a).concat(), texts(&b).concat());
    assert_ne!(text_a.len(), text_b.len(), "the kept texts start at different places");
    assert!(long.ends_with(&text_a) && long.ends_with(&text_b));
    // The last " She" and the name's first token, in either direction.
    let she = a.iter().rposition(|t| t.text == " She").unwrap();
    let there = matching_token(&a, she, &b);
    assert!(texts(&b[..=there]).concat().ends_with(" She"), "{:?}", texts(&b[..=there]));
    assert_eq!(matching_token(&b, there, &a), she);
    let name = a.iter().rposition(|t| t.text == " cat").unwrap() + 1;
    let there = matching_token(&a, name, &b);
    let upto = texts(&a[..=name]).concat();
    let tail = &upto[upto.len() - 4..];
    assert!(texts(&b[..=there]).concat().ends_with(tail), "{tail:?} in {:?}", texts(&b[..=there]));
    // A place before the start of what the other model kept: its first token.
    let first_in_b = long.len() - text_b.len();
    let before = (0..a.len()).find(|&i| long.len() - texts(&a[i..]).concat().len() + a[i].text.len() < first_in_b);
    let before = before.expect("GPT-2 keeps text that the Llama-family model dropped");
    assert_eq!(matching_token(&a, before, &b), 0);
}

#[test]
fn a_layer_or_head_the_second_model_lacks_moves_inside_with_a_note() {
    let a = tokens("stories", DEFAULT_PROMPT);
    let b = tokens("induction", DEFAULT_PROMPT);
    let p = from_link("gpt2.model-b=induction&gpt2.layer=3&gpt2.head=2");
    let fit = side_b_selection(&p, &a, &b, 2, 4);
    assert_eq!((fit.layer, fit.head), (1, 2));
    assert_eq!(moved_note(&fit).as_deref(), Some("This model has layers 0 to 1: showing layer 1."));
    let p = from_link("gpt2.model-b=induction&gpt2.layer=1&gpt2.head=2");
    assert_eq!(moved_note(&side_b_selection(&p, &a, &b, 2, 4)), None);
    let p = from_link("gpt2.layer=3&gpt2.head=3");
    assert_eq!(
        moved_note(&side_b_selection(&p, &a, &b, 2, 2)).as_deref(),
        Some("This model has layers 0 to 1: showing layer 1; this model has heads 0 to 1: showing head 1.")
    );
}
