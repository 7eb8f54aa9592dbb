//! "Compare two models" in the chapter's demo (`demos::gpt2::compare`): the `model-b` link key,
//! what the second side runs, and where the shared selection lands in a model whose tokenizer
//! splits the prompt differently (the bundled GPT-2 against the bundled Llama-family model).
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

use attention_live::demos::gpt2::compare::{matching_token, moved_note, side_b_params, side_b_selection, side_title};
use attention_live::demos::gpt2::{Model, ModelB, Params, DEFAULT_PROMPT, SPEC};
use attention_live::gpt2::model_session::ModelSession;
use attention_live::gpt2::protocol::{Query, Token};
use attention_live::state::query::parse_query;
use attention_live::state::{Params as _, Values};
use pollster::block_on;

mod common;

/// The browser test's prompt (tests/browser/gpt2.test.mjs).
const PROMPT: &str = "My cat Bartholomew is small, cute, and fluffy. She likes";

fn from_link(query: &str) -> Params {
    Params::read(&Values::from_pairs(SPEC.id, SPEC.params, &parse_query(query)).0)
}

/// The tokens a bundled model makes of `prompt`, as the worker sends them.
fn tokens(dir: &str, prompt: &str) -> Vec<Token> {
    let (cfg, bytes) = common::checkpoint(&format!("static/models/{dir}"));
    let tok = std::fs::read_to_string(format!("{}/static/models/{dir}/tokenizer.json", env!("CARGO_MANIFEST_DIR")));
    let s = ModelSession::new(&cfg, &bytes, tok.ok().as_deref()).unwrap();
    let q = Query { prompt: prompt.into(), top: 5, temperature: 1.0, top_p: 1.0, ..Default::default() };
    block_on(s.analyze(&q)).unwrap().0.tokens
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
