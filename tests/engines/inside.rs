//! Looking inside a model on the CPU: the logit lens, activation patching and the head detectors
//! of both families against the reference script's numbers (`common::inside`), and what the
//! session refuses.

use attention_live::session::inside::{HeadsQuery, LensQuery, PatchQuery, Sweep, MAX_TOKENS};
use pollster::block_on;

use crate::common::inside::{cat_and_dog, gpt2, llama, matches_reference};

#[test]
fn the_lens_patching_and_head_scores_match_pytorch_for_gpt2() {
    for name in ["gpt2-a", "gpt2-b", "stories", "induction"] {
        matches_reference(&gpt2(name), name);
    }
}

#[test]
fn the_lens_patching_and_head_scores_match_pytorch_for_the_llama_family() {
    for name in ["llama-gqa", "stories-llama"] {
        matches_reference(&llama(name), name);
    }
}

#[test]
fn the_bundled_induction_models_induction_head_stands_out() {
    // The page's own sequence (random letters, repeated): the card's induction head (1.3) scores
    // highest, and far above every head of layer 0 (which cannot see the earlier copy's next
    // token without a previous-token head before it).
    let s = gpt2("induction");
    let scores = block_on(s.head_detectors(&HeadsQuery { id: 1, n: 10, seed: 1 })).unwrap();
    assert_eq!(scores.tokens.len(), 20);
    let best = (0..2)
        .flat_map(|l| (0..4).map(move |h| (l, h)))
        .max_by(|a, b| scores.induction[a.0][a.1].total_cmp(&scores.induction[b.0][b.1]));
    assert_eq!(best, Some((1, 3)), "{:?}", scores.induction);
    assert!(scores.induction[1][3] > 0.3, "{:?}", scores.induction);
    let layer0 = scores.induction[0].iter().fold(0.0f32, |m, &v| m.max(v));
    assert!(scores.induction[1][3] > 2.0 * layer0, "{:?}", scores.induction);
}

#[test]
fn patching_refuses_prompts_it_cannot_compare_with_a_message() {
    let s = gpt2("stories");
    let q = |clean: &str, corrupt: &str, answer: &str| PatchQuery {
        id: 1,
        clean: clean.into(),
        corrupt: corrupt.into(),
        answer: answer.into(),
        wrong: String::new(),
        sweep: Sweep::Residual,
    };
    let err = |q: PatchQuery| block_on(s.start_patching(&q)).err().expect("refused").to_string();
    let e = err(q("My cat is small.", "My big dog is small.", ""));
    assert!(e.contains("same number of tokens") && e.contains("5") && e.contains("6"), "{e}");
    let e = err(q("My cat is small.", "My cat is small.", ""));
    assert!(e.contains("same tokens"), "{e}");
    let e = err(q("My cat is small.", "My dog is small.", " fluffy cat"));
    assert!(e.contains("one token") && e.contains("2 tokens"), "{e}");
    let long = "a ".repeat(MAX_TOKENS + 1);
    let e = err(q(&long, &long, ""));
    assert!(e.contains(&format!("at most {MAX_TOKENS} tokens")), "{e}");
}

#[test]
fn a_sweep_runs_only_the_positions_from_the_first_difference_on() {
    // The cat and dog prompts differ at token 1 only: position 0 holds the corrupted run's own
    // metric without a run, and patching the clean embedding in at position 1 (boundary 0) makes
    // the corrupted run the clean one.
    let s = gpt2("stories");
    let q = cat_and_dog(Sweep::Residual);
    let sw = block_on(s.start_patching(&q)).unwrap();
    let (layers, t) = (4, 12);
    assert_eq!(sw.total(), (layers + 1) * (t - 1));
    let p = block_on(s.patching(&q)).unwrap();
    assert_eq!(p.first, 1);
    assert_eq!(p.residual[2][0], p.corrupt_run);
    let restored = p.restored(p.residual[0][1].metric);
    assert!((restored - 1.0).abs() < 1e-4, "patching the differing token's embedding restores {restored}");
}

#[test]
fn the_chapters_story_of_the_cat_and_the_dog_holds() {
    // chapters/inside.md: the default answers are " warm" and " bones"; after block 0 only the
    // last position carries the animal; head 0.3 alone restores the clean answer, no other head
    // moves it; the Induction model's detectors pick out heads 1.3 and 0.1.
    let s = gpt2("stories");
    let q = cat_and_dog(Sweep::Both);
    let p = block_on(s.patching(&q)).unwrap();
    assert_eq!((p.answer.text.as_str(), p.wrong.text.as_str()), (" warm", " bones"));
    let t = p.corrupt.len();
    for b in 1..p.residual.len() {
        for (i, run) in p.residual[b].iter().enumerate() {
            let want = if i == t - 1 { 1.0 } else { 0.0 };
            assert!((p.restored(run.metric) - want).abs() < 0.05, "boundary {b}, position {i}");
        }
    }
    for (l, row) in p.heads.iter().enumerate() {
        for (h, run) in row.iter().enumerate() {
            let want = if (l, h) == (0, 3) { 1.0 } else { 0.0 };
            assert!((p.restored(run.metric) - want).abs() < 0.05, "head {l}.{h}");
        }
    }
    // The lens's first row: the embeddings alone mostly "predict" the token itself (tied tables).
    let lens = block_on(s.lens(&LensQuery { id: 1, prompt: q.clean.clone(), track: String::new() })).unwrap();
    let own = lens.top[0].iter().zip(&lens.tokens).filter(|(top, t)| top[0].id == t.id).count();
    assert!(own * 4 >= lens.tokens.len() * 3, "{own} of {}", lens.tokens.len());
    let s = gpt2("induction");
    let scores = block_on(s.head_detectors(&HeadsQuery { id: 1, n: 10, seed: 1 })).unwrap();
    let best = |g: &Vec<Vec<f32>>| {
        let all = g.iter().enumerate().flat_map(|(l, r)| r.iter().enumerate().map(move |(h, &v)| (v, l, h)));
        all.fold((f32::MIN, 0, 0), |m, x| if x.0 > m.0 { x } else { m })
    };
    assert_eq!((best(&scores.induction).1, best(&scores.induction).2), (1, 3));
    assert_eq!((best(&scores.previous).1, best(&scores.previous).2), (0, 1), "{:?}", scores.previous);
}

/// The real-model chapter's link into this one keeps its model, download folder and prompts; a
/// model this demo cannot load (from a URL or files) gets none. Each tool hides the others'
/// settings.
#[test]
fn the_head_view_links_here_on_its_model_and_prompts() {
    use attention_live::demos::{gpt2, inside, Demo};
    use attention_live::state::query::parse_query;
    use attention_live::state::Params as _;
    let mut g = gpt2::Params::defaults();
    (g.model, g.base, g.prompt, g.compare) =
        (gpt2::Model::Gpt2, "http://127.0.0.1:8/gpt2".into(), "a b".into(), "a c".into());
    let link = inside::link_from_gpt2(&g).unwrap();
    let query = link.strip_prefix("/inside/?").unwrap().strip_suffix("#inside").unwrap();
    let (values, notices) = inside::SPEC.from_link(&parse_query(query));
    assert!(notices.is_empty(), "{notices:?}");
    let p = inside::Params::read(&values);
    assert_eq!(
        (p.model, p.base.as_str(), p.tool),
        (inside::Model::Gpt2, "http://127.0.0.1:8/gpt2", inside::Tool::Lens)
    );
    assert_eq!((p.prompt.as_str(), p.clean.as_str(), p.corrupt.as_str()), ("a b", "a b", "a c"));
    g.model = gpt2::Model::Url;
    assert_eq!(inside::link_from_gpt2(&g), None);
    g.model = gpt2::Model::Stories;
    let p = inside::Params::read(&inside::SPEC.from_link(&parse_query(&inside::link_from_gpt2(&g).unwrap()[8..])).0);
    assert_eq!(p.base, "", "a bundled model has no download folder");
    let hidden = |tool| inside::InsideDemo::idle(&inside::Params { tool, ..p.clone() });
    assert!(hidden(inside::Tool::Lens).contains(&"corrupt") && !hidden(inside::Tool::Lens).contains(&"prompt"));
    assert!(hidden(inside::Tool::Heads).contains(&"prompt") && !hidden(inside::Tool::Heads).contains(&"seed"));
    assert!(hidden(inside::Tool::Patching).contains(&"base") && !hidden(inside::Tool::Patching).contains(&"clean"));
}
