//! The checked exercises: every block in every chapter parses and renders, every answer key
//! evaluates with the book's own computations, the checker takes the right answer in each
//! form and refuses the recognisable wrong ones, and every goal is met by its witness and not
//! by the demo's defaults. Also the evaluator's grammar and a fuzz run over random text.

use std::collections::HashSet;

use attention_live::chapters::render::{render_chapter, RawSegment};
use attention_live::chapters::{Chapter, CHAPTERS};
use attention_live::demos;
use attention_live::exercises::check::{check_answer, check_choice, check_number, Verdict};
use attention_live::exercises::expr::{eval_key, eval_reader, MAX_DEPTH, MAX_LEN};
use attention_live::exercises::goals::{self, GOALS};
use attention_live::exercises::{format, Exercise, Task, Tolerance};
use attention_live::state::Values;

fn written() -> impl Iterator<Item = &'static Chapter> {
    CHAPTERS.iter().filter(|c| c.is_written())
}

fn all_exercises() -> Vec<(&'static Chapter, &'static Exercise)> {
    written().flat_map(|c| c.exercises().map(move |e| (c, e))).collect()
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * (1.0 + b.abs())
}

#[test]
fn every_exercise_block_in_every_chapter_parses() {
    let mut ids = HashSet::new();
    let mut blocks = 0;
    for c in written() {
        let md = std::fs::read_to_string(format!("chapters/{}.md", c.slug)).unwrap();
        let r = render_chapter(&md);
        for s in &r.segments {
            match s {
                RawSegment::Bad(msg) => panic!("chapters/{}.md: {msg}", c.slug),
                RawSegment::Exercise(e) => {
                    assert!(ids.insert(e.id.clone()), "exercise id \"{}\" is used twice", e.id);
                    blocks += 1;
                }
                _ => {}
            }
        }
        // The shipped statics hold the same exercises, in order.
        let shipped: Vec<&str> = c.exercises().map(|e| e.id).collect();
        let parsed: Vec<&str> = r
            .segments
            .iter()
            .filter_map(|s| if let RawSegment::Exercise(e) = s { Some(&*e.id) } else { None })
            .collect();
        assert_eq!(shipped, parsed, "chapter {}", c.slug);
        let n = shipped.len();
        assert!(n == 0 || (4..=8).contains(&n), "chapter {} has {n} exercises; a chapter has 4 to 8", c.slug);
    }
    assert!(blocks >= 4, "the book has {blocks} exercises");
}

#[test]
fn the_scoring_chapter_has_every_kind() {
    let c = CHAPTERS.iter().find(|c| c.slug == "scoring").unwrap();
    let kinds: HashSet<&str> = c
        .exercises()
        .map(|e| match e.task {
            Task::Compute { .. } => "compute",
            Task::Predict { .. } => "predict",
            Task::Make { .. } => "make",
            Task::Explain => "explain",
        })
        .collect();
    assert_eq!(kinds.len(), 4, "{kinds:?}");
    // The texts are HTML with the math rendered, as in the prose.
    let first = c.exercises().next().unwrap();
    assert!(first.question.contains("<math") && !first.question.contains('$'), "{}", first.question);
    assert!(c.exercises().all(|e| !e.hints.is_empty() && !e.solution.is_empty()));
}

/// What a reader would type: the key's value to a few more digits than the tolerance needs,
/// and rounded to the tolerance's own precision.
fn typed_forms(want: f64, tol: Tolerance) -> Vec<String> {
    let decimals = match tol {
        Tolerance::Abs(t) => (-t.log10()).ceil().max(0.0) as usize,
        Tolerance::Rel(r) => ((-(r * want.abs()).log10()).ceil().max(0.0)) as usize,
    };
    vec![format!("{want:.12}"), format!("{want:.decimals$}"), format!("{want:e}")]
}

#[test]
fn every_answer_key_evaluates_and_is_accepted_in_each_form() {
    // Forms worked out by hand, beside the numbers.
    let by_hand: &[(&str, &[&str])] = &[
        ("scoring-scaled-weight", &["e/(e^2+e+1)", "e^2/(e^3+e^2+e)", "exp(2)/(exp(3)+exp(2)+exp(1))", "0.245"]),
        ("scoring-row-softmax", &["1/(1+e^2)", "e^0/(e^2+e^0)", "0.119", "0.12"]),
    ];
    for (c, e) in all_exercises() {
        let Task::Compute { answer, tolerance, mistakes } = e.task else { continue };
        let want =
            eval_key(answer).unwrap_or_else(|err| panic!("{}/{}: the key does not evaluate: {err}", c.slug, e.id));
        assert!(want.is_finite());
        let hand = by_hand.iter().find(|(id, _)| *id == e.id).map_or(&[][..], |(_, f)| *f);
        let mut forms: Vec<String> = typed_forms(want, tolerance);
        forms.extend(hand.iter().map(|s| s.to_string()));
        if eval_reader(answer).is_ok() {
            forms.push(answer.to_string()); // a key without book functions is itself a valid answer
        }
        for f in &forms {
            assert_eq!(check_answer(e, f), Verdict::Right, "{}: \"{f}\" for {want}", e.id);
        }
        for m in mistakes {
            let x = eval_key(m.expr).unwrap_or_else(|err| panic!("{}: mistake \"{}\": {err}", e.id, m.expr));
            // A mistake the tolerance cannot tell from the answer would be marked right.
            assert!(!tolerance.accepts(x, want), "{}: mistake \"{}\" = {x} is within the tolerance", e.id, m.expr);
            for f in typed_forms(x, tolerance) {
                assert_eq!(check_answer(e, &f), Verdict::Wrong(Some(m.message)), "{}: \"{f}\"", e.id);
            }
        }
        // Just outside the tolerance, either way: wrong, and no mistake's hint claims it.
        let room = match tolerance {
            Tolerance::Abs(t) => t,
            Tolerance::Rel(r) => r * want.abs(),
        };
        for off in [want + 3.0 * room, want - 3.0 * room] {
            let v = check_answer(e, &format!("{off:.12}"));
            assert!(matches!(v, Verdict::Wrong(_)), "{}: {off} gave {v:?}", e.id);
        }
        assert!(matches!(check_answer(e, "two thirds"), Verdict::Unreadable(_)));
    }
}

#[test]
fn the_scoring_keys_state_the_numbers_of_their_solutions() {
    // The hand computation of the solutions, checked against the keys' book functions.
    let w = eval_key("softmax([6, 4, 2], 2, 1/2)").unwrap();
    assert!(close(w, std::f64::consts::E / (std::f64::consts::E.powi(2) + std::f64::consts::E + 1.0)));
    assert_eq!(format!("{w:.3}"), "0.245");
    assert_eq!(eval_key("dot([1, 0, 2, 1], [0, 3, 1, 2])"), Ok(4.0));
    assert_eq!(format!("{:.3}", eval_key("softmax([2, 0], 2)").unwrap()), "0.119");
    // Doubling gap and T changes nothing.
    for i in 1..=5 {
        let (a, b) = (format!("temperature_weight(1, 1, {i})"), format!("temperature_weight(2, 2, {i})"));
        assert!(close(eval_key(&a).unwrap(), eval_key(&b).unwrap()));
    }
    // The ordering exercise: B, D, A, C by the top weight, about 0.98, 0.78, 0.64 and 0.31.
    let top: Vec<f64> = ["(0.5, 2", "(2, 3", "(1, 1", "(4, 1"]
        .iter()
        .map(|s| eval_key(&format!("temperature_weight{s}, 1)")).unwrap())
        .collect();
    assert!(top.windows(2).all(|p| p[0] > p[1]), "{top:?}");
    let quoted: Vec<String> = top.iter().map(|x| format!("{x:.2}")).collect();
    assert_eq!(quoted, ["0.98", "0.78", "0.64", "0.31"]);
    // The make exercise: a gap of 2.3 falls just short at T = 1, 2.4 does it.
    assert!(!goals::met_by_pairs("sharp-at-t-1", &owned(&[("temperature.gap", "2.3")])).unwrap());
    assert!(goals::met_by_pairs("sharp-at-t-1", &owned(&[("temperature.gap", "2.4")])).unwrap());
    assert_eq!(format!("{:.3}", eval_key("temperature_weight(1, 2.3, 1)").unwrap()), "0.900");
    assert_eq!(format!("{:.3}", eval_key("temperature_weight(1, 2.4, 1)").unwrap()), "0.909");
}

#[test]
fn predict_exercises_name_real_choices_and_demo_states() {
    for (c, e) in all_exercises() {
        let Task::Predict { choices, correct, see } = e.task else { continue };
        assert!(correct.len() == 1 || correct.len() == choices.len(), "{}", e.id);
        assert!(correct.iter().all(|&i| i < choices.len()));
        assert!(check_choice(correct, correct));
        let wrong: Vec<usize> = if correct.len() == 1 {
            vec![(correct[0] + 1) % choices.len()]
        } else {
            correct.iter().rev().copied().collect()
        };
        assert!(!check_choice(correct, &wrong), "{}", e.id);
        if let Some(see) = see {
            let spec = demos::find(see.demo).unwrap_or_else(|| panic!("{}: no demo \"{}\"", e.id, see.demo));
            let (_, notices) = Values::from_pairs(see.demo, spec.params, &owned(see.pairs));
            assert!(notices.is_empty(), "{}: {:?}", e.id, notices.iter().map(|n| n.message()).collect::<Vec<_>>());
            assert!(c.demo_ids().any(|d| d == see.demo), "{}: demo \"{}\" is not in the chapter", e.id, see.demo);
        }
    }
}

#[test]
fn every_goal_is_met_by_its_witness_and_not_by_the_defaults() {
    let mut used = 0;
    for (c, e) in all_exercises() {
        let Task::Make { demo, goal, witness } = e.task else { continue };
        used += 1;
        let g = goals::find(goal).unwrap_or_else(|| panic!("{}: no goal \"{goal}\"", e.id));
        assert_eq!(g.demo, demo, "{}", e.id);
        assert!(c.demo_ids().any(|d| d == demo), "{}: demo \"{demo}\" is not in the chapter", e.id);
        assert_eq!(goals::met_by_pairs(goal, &owned(witness)), Ok(true), "{}: the witness", e.id);
        assert_eq!(goals::met_by_pairs(goal, &[]), Ok(false), "{}: the defaults", e.id);
    }
    assert!(used > 0);
}

#[test]
fn the_goal_registry_is_sound() {
    let mut names = HashSet::new();
    for g in GOALS {
        assert!(format::valid_id(g.name) && names.insert(g.name), "bad or duplicate goal {}", g.name);
        let spec = demos::find(g.demo).expect("a registered demo");
        assert_eq!(goals::met(g.name, &Values::defaults(spec.params)), Ok(false), "{} at the defaults", g.name);
    }
    assert_eq!(goals::met_by_pairs("raw-equals-scaled", &owned(&[("scaling.d", "1")])), Ok(true));
    // Along the x axis both scores favour (2, 0.5); equal lengths do not count.
    assert_eq!(goals::met_by_pairs("gauss-dot-agree", &owned(&[("gauss-dot.theta", "0")])), Ok(true));
    let equal = owned(&[("gauss-dot.theta", "0"), ("gauss-dot.equal", "1")]);
    assert_eq!(goals::met_by_pairs("gauss-dot-agree", &equal), Ok(false));
    // Another demo's values, an unknown goal, a bad value: errors, never a panic or a silent default.
    let temp = demos::find("temperature").unwrap();
    assert!(goals::met("raw-equals-scaled", &Values::defaults(temp.params)).is_err());
    assert!(goals::met_by_pairs("no-such-goal", &[]).is_err());
    assert!(goals::met_by_pairs("sharp-at-t-1", &owned(&[("temperature.gap", "99")])).is_err());
    assert!(goals::met_by_pairs("sharp-at-t-1", &owned(&[("scaling.d", "1")])).is_err());
}

#[test]
fn the_reader_grammar() {
    let e = std::f64::consts::E;
    let ok = |s: &str, want: f64| {
        let got = eval_reader(s).unwrap_or_else(|err| panic!("\"{s}\": {err}"));
        assert!(close(got, want), "\"{s}\" = {got}, want {want}");
    };
    ok("0.731", 0.731);
    ok("3/4", 0.75);
    ok("1e-3", 0.001);
    ok("2.5E+2", 250.0);
    ok(".5", 0.5);
    ok("e^2/(1+e^2)", e * e / (1.0 + e * e));
    ok("-2^2", -4.0);
    ok("2^3^2", 512.0);
    ok("2^-1", 0.5);
    ok("--3", 3.0);
    ok("1 − 1/4", 0.75);
    ok("2 × 3 · 4 ÷ 8", 3.0);
    ok("√4 + sqrt(9)", 5.0);
    ok("ln(e) + log2(8) + exp(0)", 5.0);
    ok("2*pi", 2.0 * std::f64::consts::PI);
    ok("π", std::f64::consts::PI);
    ok("E^2/(1+E^2)", e * e / (1.0 + e * e));
    let err = |s: &str, part: &str| {
        let got = eval_reader(s);
        assert!(got.as_ref().is_err_and(|m| m.contains(part)), "\"{s}\": {got:?}, want an error with \"{part}\"");
    };
    err("", "nothing to read");
    err("   ", "nothing to read");
    err("2e", "operator is missing");
    err("2(3)", "operator is missing");
    err("1/0", "division by zero");
    err("1/(1-1)", "division by zero");
    err("sqrt(-1)", "negative");
    err("ln(0)", "not above 0");
    err("(-8)^(1/3)", "fractional power");
    err("0^-1", "negative power");
    err("10^400", "finite");
    // What the reader typed comes back isolated from the sentence (a right-to-left override
    // cannot mirror the verdict), and an invisible or combining character by its code point.
    for (typed, shown) in [("\u{202E}0.5", "U+202E"), ("0.5\u{200B}", "U+200B"), ("\u{301}2", "U+0301")] {
        let msg = eval_reader(typed).unwrap_err();
        assert!(msg.contains(shown) && !msg.contains(typed.trim_matches(|c: char| c.is_ascii())), "{typed:?}: {msg}");
        assert!(!msg.chars().any(|c| matches!(c, '\u{202A}'..='\u{202E}' | '\u{200B}' | '\u{301}')), "{msg:?}");
    }
    let msg = eval_reader("2 # 3").unwrap_err();
    assert!(msg.starts_with("“\u{2068}#\u{2069}” cannot be used here"), "{msg}");
    err("exp(1000)", "finite");
    err("1e999", "too large");
    err("(1+2", "missing \")\"");
    err("1+", "ends too early");
    err("1)", "after the expression");
    err("foo", "unknown name");
    err("sqrt", "needs parentheses");
    err("sqrt(1, 2)", "cannot be used");
    err("sqrt()", "one number");
    err("softmax([1, 2], 1)", "“\u{2068}[\u{2069}”");
    err("softmax(1)", "unknown name");
    err("1..2", "not a number");
    err("2 % 3", "cannot be used");
    err(&"(".repeat(MAX_DEPTH + 1), "nested too deeply");
    err(&"-".repeat(MAX_DEPTH + 1), "nested too deeply");
    err(&"1+".repeat(MAX_LEN), "too long");
}

#[test]
fn the_key_grammar_and_the_book_functions() {
    assert!(close(eval_key("softmax([3, 1], 1)").unwrap(), 1.0 / (1.0 + (-2f64).exp())));
    assert!(close(eval_key("softmax([3, 1], 1, 1/2)").unwrap(), 1.0 / (1.0 + (-1f64).exp())));
    assert_eq!(eval_key("dot([2, 1, 0, 1], [1, 0, 1, 1])"), Ok(3.0));
    assert_eq!(eval_key("receptive_field(5, 3)"), Ok(13.0));
    assert_eq!(eval_key("attention_flops(4, 2)"), Ok(64.0));
    // Llama 2 7B: 2 · 32 · 32 · 128 · 2 bytes per position; 4096 positions are 2 GiB.
    assert_eq!(eval_key("kv_bytes_per_token(\"Llama 2 7B\")"), Ok(524288.0));
    assert_eq!(eval_key("kv_bytes(\"Llama 2 7B\", 4096) / 2^30"), Ok(2.0));
    assert!((eval_key("temperature_entropy(1, 1)").unwrap() - 1.44).abs() < 0.01);
    for (key, part) in [
        ("softmax([1, 2], 3)", "between 1 and 2"),
        ("softmax([], 1)", "should be a list"),
        ("softmax(1, 1)", "should be a list"),
        ("softmax([1, 2])", "takes 2 to 3 arguments"),
        ("dot([1], [1, 2])", "lengths"),
        ("kv_bytes(\"GPT\", 10)", "exactly one"),
        ("kv_bytes(\"Nobody\", 10)", "exactly one"),
        ("kv_bytes(\"Llama 2 7B\", 1.5)", "whole number"),
        ("receptive_field(100000, 100000)", "too large"),
        ("temperature_weight(0, 1, 1)", "above 0"),
        ("nonsense(1)", "unknown name"),
        ("[1, 2]", "only be given to a function"),
        ("\"Llama\"", "only be given to a function"),
        ("\"Llama", "not closed"),
    ] {
        let got = eval_key(key);
        assert!(got.as_ref().is_err_and(|m| m.contains(part)), "{key}: {got:?}, want an error with \"{part}\"");
    }
}

#[test]
fn the_checker_reports_right_wrong_and_unreadable() {
    let mistakes = &[attention_live::exercises::Mistake { expr: "softmax([3, 1], 1)", message: "forgot √d" }];
    let key = "softmax([3, 1], 1, 1/sqrt(4))"; // e / (1 + e) ≈ 0.7311
    let tol = Tolerance::Abs(0.002);
    assert_eq!(check_number(key, tol, mistakes, "0.731"), Verdict::Right);
    assert_eq!(check_number(key, tol, mistakes, "e/(1+e)"), Verdict::Right);
    assert_eq!(check_number(key, tol, mistakes, "e^2/(1+e^2)"), Verdict::Wrong(Some("forgot √d")));
    assert_eq!(check_number(key, tol, mistakes, "0.75"), Verdict::Wrong(None));
    assert!(matches!(check_number(key, tol, mistakes, "0.7.3"), Verdict::Unreadable(_)));
    assert!(matches!(check_number("nonsense(", tol, &[], "1"), Verdict::Unreadable(m) if m.contains("answer key")));
    // Relative tolerance: 1% of 2 GiB.
    let rel = Tolerance::Rel(0.01);
    assert_eq!(check_number("kv_bytes(\"Llama 2 7B\", 4096)", rel, &[], "2*2^30"), Verdict::Right);
    assert_eq!(check_number("kv_bytes(\"Llama 2 7B\", 4096)", rel, &[], "2.14e9"), Verdict::Right);
    assert_eq!(check_number("kv_bytes(\"Llama 2 7B\", 4096)", rel, &[], "2e9"), Verdict::Wrong(None));
    assert_eq!(Tolerance::Abs(0.002).describe(), "±0.002");
    assert_eq!(Tolerance::Rel(0.01).describe(), "±1%");
}

/// A small deterministic generator (xorshift), so a failure replays.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

#[test]
fn fuzz_the_evaluator_never_panics_and_always_answers() {
    // Fragments that make plausible and implausible text alike, plus odd characters.
    let frags = [
        "1",
        "0",
        "2.5",
        "1e-3",
        "1e",
        ".",
        "e",
        "pi",
        "π",
        "√",
        "sqrt(",
        "exp(",
        "ln(",
        "log2(",
        "(",
        ")",
        "+",
        "-",
        "*",
        "/",
        "^",
        "−",
        "×",
        "÷",
        " ",
        "[",
        "]",
        ",",
        "\"",
        "softmax(",
        "dot(",
        "kv_bytes(",
        "\"Llama 2 7B\"",
        "temperature_weight(",
        "receptive_field(",
        "9999999",
        "1e308",
        "-1",
        "x",
        "%",
        "é",
        "\u{0}",
        "😀",
        "e^",
        "0^",
        "[1, 2]",
        "1, 2",
        "attention_flops(",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut ok, mut errs) = (0, 0);
    for round in 0..20_000 {
        let n = 1 + (rng.next() % 24) as usize;
        let text: String = (0..n).map(|_| rng.pick(&frags)).collect();
        for key in [false, true] {
            let r = if key { eval_key(&text) } else { eval_reader(&text) };
            match r {
                Ok(x) => {
                    assert!(x.is_finite(), "round {round}: \"{text}\" gave {x}");
                    ok += 1;
                }
                Err(m) => {
                    assert!(!m.trim().is_empty(), "round {round}: \"{text}\" gave an empty error");
                    errs += 1;
                }
            }
        }
    }
    // Random bytes too, as a string: still an answer either way.
    for _ in 0..5_000 {
        let bytes: Vec<u8> = (0..(rng.next() % 40)).map(|_| (rng.next() % 128) as u8).collect();
        let text = String::from_utf8_lossy(&bytes);
        let _ = eval_reader(&text);
        let _ = eval_key(&text);
    }
    // Deep nesting and long input are refused, not overflowed.
    assert!(eval_reader(&format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000))).is_err());
    assert!(eval_key(&"sqrt(".repeat(500)).is_err());
    assert!(ok > 200 && errs > 200, "ok {ok}, errors {errs}: the fuzz should reach both");
}

#[test]
fn malformed_blocks_become_notices_with_the_reason_and_the_chapter_goes_on() {
    let cases: &[(&str, &str)] = &[
        ("kind: compute\nquestion: q\n", "has no \"id\""),
        ("id: Bad Id\nkind: compute\n", "lower-case"),
        ("id: a\nquestion: q\n", "no \"kind\""),
        ("id: a\nkind: quiz\n", "kind \"quiz\""),
        ("id: a\nkind: compute\ncolour: red\n", "unknown key \"colour\""),
        ("id: a\nkind: compute\nno colon here\n", "expected `key: value`"),
        ("id: a\nid: b\nkind: compute\n", "given twice"),
        ("id: a\nkind: compute\nquestion: q\nhint: h\nsolution: s\ntolerance: 0.1\n", "needs \"answer\""),
        ("id: a\nkind: compute\nquestion: q\nhint: h\nsolution: s\nanswer: 1\n", "needs \"tolerance\""),
        ("id: a\nkind: compute\nquestion: q\nhint: h\nsolution: s\nanswer: 1\ntolerance: -1\n", "above 0"),
        ("id: a\nkind: compute\nquestion: q\nhint: h\nsolution: s\nanswer: 1\ntolerance: x\n", "not a number"),
        ("id: a\nkind: compute\nquestion: q\nhint: h\nsolution: s\nanswer: 1\ntolerance: 1\nmistake: 2\n", "=>"),
        ("id: a\nkind: compute\nquestion: q\nsolution: s\nanswer: 1\ntolerance: 1\n", "one or two hints"),
        ("id: a\nkind: compute\nquestion: q\nhint: 1\nhint: 2\nhint: 3\nsolution: s\n", "one or two hints"),
        ("id: a\nkind: compute\nquestion: q\nhint: h\nanswer: 1\ntolerance: 1\n", "needs \"solution\""),
        ("id: a\nkind: compute\nquestion: q\nhint: h\nsolution: s\nchoice: x\n", "does not belong"),
        ("@Pcorrect: A\n", "2 to 8 choices"),
        ("@Pchoice: y\ncorrect: C\n", "names no"),
        ("@Pchoice: y\nchoice: z\ncorrect: A, B\n", "all 3"),
        ("@Pchoice: y\ncorrect: A, A\n", "twice"),
        ("@Pchoice: y\ncorrect: A\nsee: t=1\n", "demo id"),
        ("@Pchoice: y\ncorrect: A\nsee: a.t=1 b.u=2\n", "two demos"),
        ("@Pchoice: y\ncorrect: A\ndemo: b\n", "no \"see\""),
        ("id: a\nkind: make\nquestion: q\nhint: h\nsolution: s\ndemo: x\ngoal: g\n", "needs \"witness\""),
        ("id: a\nkind: make\nquestion: q\nhint: h\nsolution: s\ndemo: x\ngoal: g\nwitness: y.a=1\n", "not \"x\""),
        ("id: a\nkind: explain\nquestion: q\nhint: h\nsolution: s\n", "does not belong"),
        ("id: a\nkind: explain\nquestion: q\nhint: h\n", "needs \"model\""),
        ("  continued\n", "no key comes before"),
    ];
    // "@P": the start of a predict block, its first choice included.
    let predict = "id: a\nkind: predict\nquestion: q\nhint: h\nsolution: s\nchoice: x\n";
    for (body, part) in cases {
        let body = body.replace("@P", predict);
        let md = format!("Before.\n\n```exercise\n{body}```\n\nAfter.\n");
        let r = render_chapter(&md);
        let kinds: Vec<&RawSegment> = r.segments.iter().collect();
        assert_eq!(kinds.len(), 3, "{body:?}: {kinds:?}");
        let RawSegment::Bad(msg) = kinds[1] else { panic!("{body:?} was accepted: {:?}", kinds[1]) };
        assert!(msg.contains(part), "{body:?}: \"{msg}\" should mention \"{part}\"");
        assert!(matches!(kinds[2], RawSegment::Html(h) if h.contains("After.")));
    }
    // Never closed: a notice, and the prose after it still renders.
    let r = render_chapter("Before.\n\n```exercise\nid: a\n\nAfter.\n");
    assert!(r.segments.iter().any(|s| matches!(s, RawSegment::Bad(m) if m.contains("never closed"))));
    assert!(r.segments.iter().any(|s| matches!(s, RawSegment::Html(h) if h.contains("After."))));
    // An exercise inside another code fence is just code.
    let r = render_chapter("````\n```exercise\nid: a\n```\n````\n");
    assert!(r.segments.iter().all(|s| matches!(s, RawSegment::Html(_))));
}

#[test]
fn a_valid_block_renders_its_texts_and_keeps_its_keys() {
    let md = "```exercise\nid: demo-one\nkind: compute\nquestion: What is $\\sqrt{4}$?\n  Give a number.\n\
              answer: sqrt(4)\ntolerance: 1%\nmistake: 4 => Take the root of $4$.\nhint: It is *small*.\n\
              solution: It is $2$.\n```\n";
    let r = render_chapter(md);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let [RawSegment::Exercise(e)] = &r.segments[..] else { panic!("{:?}", r.segments) };
    assert_eq!(e.id, "demo-one");
    assert!(e.question.contains("<math") && e.question.ends_with("Give a number."), "{}", e.question);
    assert!(!e.question.starts_with("<p>"), "texts are inline HTML: {}", e.question);
    assert_eq!(e.hints, ["It is <em>small</em>."]);
    let format::TaskSpec::Compute { answer, tolerance, mistakes } = &e.task else { panic!() };
    assert_eq!((answer.as_str(), *tolerance), ("sqrt(4)", format::ToleranceSpec::Rel(0.01)));
    assert!(mistakes[0].0 == "4" && mistakes[0].1.contains("<math"));
    assert!(e.rust_code().starts_with("crate::exercises::Exercise { id: \"demo-one\""));
    // Bad LaTeX in an exercise is a problem of the chapter, as in the prose.
    let r = render_chapter("```exercise\nid: x\nkind: explain\nquestion: $\\notacommand$\nhint: h\nmodel: m\n```\n");
    assert!(r.problems.iter().any(|p| p.contains("exercise \"x\"")), "{:?}", r.problems);
}

/// The numbers the solutions of the why-attention exercises state, from the keys' functions,
/// the shipped curve and the trained models.
#[test]
fn the_why_attention_solutions_state_what_the_code_gives() {
    use attention_live::seq2seq::{encode, Models, Variant};
    assert_eq!(eval_key("bottleneck_right(\"fixed\", 15)"), Ok(33.0)); // 16.5% of 200
    assert_eq!(eval_key("bottleneck_right(\"bahdanau\", 15)"), Ok(200.0));
    // Perfect up to 3 letters, 99.5% at 4 (199 of 200), about 72% at 10.
    for len in 1..=3 {
        assert_eq!(eval_key(&format!("bottleneck_right(\"fixed\", {len})")), Ok(200.0));
    }
    assert_eq!(eval_key("bottleneck_right(\"fixed\", 4)"), Ok(199.0));
    assert_eq!(format!("{:.0}", eval_key("bottleneck_right(\"fixed\", 10)").unwrap() / 2.0), "72");
    assert!(
        eval_key("bottleneck_right(\"nobody\", 4)").is_err() && eval_key("bottleneck_right(\"fixed\", 31)").is_err()
    );
    assert!(!goals::met_by_pairs("fixed-last-perfect", &owned(&[("bottleneck.length", "4")])).unwrap());
    // The local-p factor: exp(−9/8) at distance 3, nothing outside the window.
    let f = eval_key("local_gaussian(3, 4)").unwrap();
    assert!((f - (-9.0f64 / 8.0).exp()).abs() < 1e-6, "{f}");
    assert_eq!(format!("{f:.3}"), "0.325");
    assert_eq!(eval_key("local_gaussian(5, 4)"), Ok(0.0));
    // "reversal" with Bahdanau's model: row 2 looks at column S − 2 = 6, not at the s (5).
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/static/models/seq2seq/model.safetensors"));
    let models = Models::load(&bytes.unwrap()).unwrap();
    let src = encode("reversal").unwrap();
    let d = models.get(Variant::Bahdanau).greedy(&src);
    let row = &d.attn[2];
    let top = (0..row.len()).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap();
    assert_eq!((src.len() - 1, top), (8, 6), "{row:?}");
    assert_eq!(attention_live::seq2seq::decode(&src[5..7]), "sa");
}

/// The numbers the solutions of the soft-lookup exercises state.
#[test]
fn the_soft_lookup_solutions_state_what_the_code_gives() {
    let s = eval_key("bigram_score(\"grin\", \"green\")").unwrap();
    assert!(close(s, 3.0 / (5f64.sqrt() * 6f64.sqrt())));
    assert_eq!(format!("{s:.3}"), "0.548");
    // The tie: 2 / (2 √6) each, half the weight each at β = 100 and at β = 10.
    for beta in ["10", "100"] {
        let w = |k: &str| eval_key(&format!("lookup_weight(\"brk\", {beta}, \"{k}\")")).unwrap();
        assert!(close(w("brown"), w("black")));
    }
    assert!((eval_key("lookup_weight(\"brk\", 100, \"brown\")").unwrap() - 0.5).abs() < 1e-6);
    assert_eq!(format!("{:.3}", eval_key("bigram_score(\"brk\", \"black\")").unwrap()), "0.408");
    assert!((eval_key("lookup_channel(\"brk\", 100, 1)").unwrap() - 75.0).abs() < 1e-4);
    // "gren": about 96% on green at β = 10, nearly a fifth on grey at β = 3.
    assert_eq!(format!("{:.2}", eval_key("lookup_weight(\"gren\", 10, \"green\")").unwrap()), "0.96");
    let grey = eval_key("lookup_weight(\"gren\", 3, \"grey\")").unwrap();
    assert!((0.15..0.2).contains(&grey), "{grey}");
    assert!(!goals::met_by_pairs("grey-second-to-green", &owned(&[("lookup.q", "gren")])).unwrap());
    assert!(
        eval_key("lookup_weight(\"brk\", 1, \"mauve\")").is_err() && eval_key("lookup_channel(\"a\", 1, 4)").is_err()
    );
}

/// The numbers the solutions of the kernel-regression exercises state.
#[test]
fn the_kernel_regression_solutions_state_what_the_code_gives() {
    let f = eval_key("nw_estimate([1, 2, 4], [3, 5, 2], 2, \"epanechnikov\", 2)").unwrap();
    assert!(close(f, 29.0 / 7.0));
    assert_eq!(format!("{f:.3}"), "4.143");
    assert!(close(eval_key("nw_weight([1, 2, 4], 2, \"epanechnikov\", 2, 1)").unwrap(), 3.0 / 7.0));
    assert_eq!(eval_key("nw_weight([1, 2, 4], 2, \"epanechnikov\", 2, 3)"), Ok(0.0));
    let w = eval_key("nw_weight([0, 1], 0, \"gaussian\", 0.5, 1)").unwrap();
    assert!(close(w, 1.0 / (1.0 + (-2f64).exp())));
    assert_eq!(format!("{w:.3}"), "0.881");
    // A query out of every boxcar's reach has no estimate: an error, not a number.
    assert!(eval_key("nw_estimate([0, 1], [1, 2], 3, \"boxcar\", 0.5)").is_err());
    assert!(eval_key("kernel(\"cosine\", 1, 1)").is_err() && eval_key("kernel(\"boxcar\", 1, 0)").is_err());
    // σ = 6 covers [0, 5]: the boxcar's estimate is the mean, as the constant kernel's.
    use attention_live::demos::nadaraya_watson::{KernelChoice, NwDemo, Params};
    use attention_live::demos::Demo;
    use attention_live::state::typed::Params as _;
    let at = |kernel, sigma| NwDemo::compute(&Params { kernel, sigma, ..Params::defaults() }).estimate;
    let (wide, flat) = (at(KernelChoice::Boxcar, 6.0), at(KernelChoice::Constant, 6.0));
    assert!(wide.iter().zip(&flat).all(|(a, b)| close(a.unwrap(), b.unwrap())));
    // The make exercise: 6 of the 101 queries without an estimate at σ = 0.2, 13 at 0.15, 44 at 0.05.
    let gaps = |sigma| NwDemo::compute(&Params { kernel: KernelChoice::Boxcar, sigma, ..Params::defaults() }).undefined;
    assert_eq!([gaps(0.2), gaps(0.15), gaps(0.05)], [6, 13, 44]);
}

/// The numbers the solutions of the masking exercises state.
#[test]
fn the_masking_solutions_state_what_the_code_gives() {
    let e = std::f64::consts::E;
    let w = eval_key("padded_weight([2, 1, 0, 0], 2, 1)").unwrap();
    assert!(close(w, e / (e + 1.0)));
    assert_eq!(format!("{w:.3} {:.3}", eval_key("padded_weight([2, 1, 0, 0], 2, 2)").unwrap()), "0.731 0.269");
    assert_eq!(eval_key("padded_weight([2, 1, 0, 0], 2, 3)"), Ok(0.0));
    // A fully masked row: 0/0 with −∞, uniform with −10⁶.
    assert!(eval_key("padded_weight([2, 1, 0, 0], 0, 1)").is_err());
    assert_eq!(eval_key("padded_weight([2, 1, 0, 0], 0, 1, -10^6)"), Ok(0.25));
    assert_eq!(eval_key("causal_hidden(8)"), Ok(28.0));
    // The chapter's 15 of 36 at n = 6.
    assert_eq!(eval_key("causal_hidden(6)"), Ok(15.0));
    // The padding demo's sentence 3 at valid length 0 with −10⁶: 1/4 everywhere in its weights.
    use attention_live::demos::padding::{Fill, PaddingDemo, Params};
    use attention_live::demos::Demo;
    let b = PaddingDemo::compute(&Params { v1: 4, v2: 3, v3: 0, fill: Fill::Big });
    assert!(b.sequences[2].weights.iter().flatten().all(|&x| close(x, 0.25)));
    // With the mask on, rows 0 and 4 differ; at 4 tokens there is no row 4.
    assert!(!goals::met_by_pairs("causal-rows-0-4-equal", &owned(&[("causal.n", "8")])).unwrap());
    let short = owned(&[("causal.causal", "0"), ("causal.n", "4")]);
    assert!(!goals::met_by_pairs("causal-rows-0-4-equal", &short).unwrap());
}

/// The numbers the solutions of the self-attention exercises state.
#[test]
fn the_self_attention_solutions_state_what_the_code_gives() {
    let w = eval_key("xx_weight([2, 0, 1, 1], 2, 1, 1)").unwrap();
    assert!(close(w, 1.0 / (1.0 + (-(2f64.sqrt())).exp())));
    assert_eq!(format!("{w:.3}"), "0.804");
    assert!(eval_key("xx_weight([2, 0, 1], 2, 1, 1)").is_err() && eval_key("xx_weight([2, 0], 2, 2, 1)").is_err());
    assert_eq!(eval_key("attention_flops(8, 4)"), Ok(512.0));
    let b = eval_key("bank_weight(\"alone\", 1, \"bank\")").unwrap();
    assert!(close(b, 1.0 / (1.0 + (-1.8f64).exp())));
    assert_eq!(format!("{b:.3}"), "0.858");
    // The money sentence: 0.98 at β = 0, 1.5 first passed at β = 1.45 on the slider's 0.05 steps.
    assert!(close(eval_key("bank_output(\"money\", 0, 1)").unwrap(), 0.98));
    let first = |beta: f64| eval_key(&format!("bank_output(\"money\", {beta}, 1)")).unwrap();
    assert!(first(1.4) < 1.5 && first(1.45) >= 1.5, "{} {}", first(1.4), first(1.45));
    assert!(!goals::met_by_pairs("bank-leans-money", &owned(&[("bank.beta", "4")])).unwrap()); // the river sentence
    assert!(
        eval_key("bank_weight(\"lake\", 1, \"bank\")").is_err() && eval_key("bank_output(\"money\", 5, 1)").is_err()
    );
    // The shuffle check: near zero in stage 2, far from it in stage 1, with the mask and with encodings.
    use attention_live::demos::self_attention::{Params, SelfAttentionDemo, Stage};
    use attention_live::demos::Demo;
    use attention_live::state::typed::Params as _;
    let gap = |stage, causal, pe| {
        let p = Params { stage, causal, pe, shuffle: true, ..Params::defaults() };
        SelfAttentionDemo::compute(&p).equivariance_gap
    };
    assert!(gap(Stage::Xx, false, false) < 1e-12);
    for (stage, causal, pe) in [(Stage::Fixed, false, false), (Stage::Qkv, true, false), (Stage::Qkv, false, true)] {
        assert!(gap(stage, causal, pe) > 1e-3, "{stage:?} {causal} {pe}");
    }
}

/// A key's value, for the tests that check the numbers quoted in a chapter's exercises.
fn key(expr: &str) -> f64 {
    eval_key(expr).unwrap_or_else(|e| panic!("{expr}: {e}"))
}

#[test]
fn the_multi_head_exercises_quote_their_keys() {
    // Cost: d_head = 4, 8·8·4 = 256 for the scores and as much for the values, 2048 for four heads.
    assert_eq!(key("head_cost(8, 4)"), 512.0);
    assert_eq!(key("heads_total_cost(8, 4)"), 2048.0);
    assert_eq!(key("heads_total_cost(8, 1)"), 2048.0);
    // More heads: 576 per head at h = 2, 144 at h = 8, 1152 in total both times.
    assert_eq!((key("head_cost(6, 2)"), key("head_cost(6, 8)")), (576.0, 144.0));
    assert_eq!((key("heads_total_cost(6, 2)"), key("heads_total_cost(6, 8)")), (1152.0, 1152.0));
    // The tie in head B: e³ / (2e³ + 3), the same on both copies of "the".
    let e3 = 3f64.exp();
    assert!(close(key("two_heads_weight(\"B\", 3, 1, 5, 1)"), e3 / (2.0 * e3 + 3.0)));
    assert!(close(key("two_heads_weight(\"B\", 3, 1, 5, 5)"), e3 / (2.0 * e3 + 3.0)));
    assert_eq!(format!("{:.3}", key("two_heads_weight(\"B\", 3, 1, 5, 1)")), "0.465");
    // "mat" keeps its row without the mask: about 0.988 on the "the" before it.
    for j in 1..=6 {
        let (a, b) =
            (format!("two_heads_weight(\"A\", 6, 1, 6, {j})"), format!("two_heads_weight(\"A\", 6, 0, 6, {j})"));
        assert!(close(key(&a), key(&b)), "{a}");
    }
    assert_eq!(format!("{:.3}", key("two_heads_weight(\"A\", 6, 1, 6, 5)")), "0.988");
    // 99% on the predecessor: e^β ≥ 99 · 5 = 495, β ≥ ln 495 ≈ 6.2; β = 6.5 gives 0.9925.
    assert_eq!(format!("{:.1}", 495f64.ln()), "6.2");
    assert!(close(key("two_heads_weight(\"A\", 6.5, 1, 6, 5)"), 6.5f64.exp() / (6.5f64.exp() + 5.0)));
    assert_eq!(format!("{:.4}", key("two_heads_weight(\"A\", 6.5, 1, 6, 5)")), "0.9925");
    assert_eq!(goals::met_by_pairs("previous-token-99", &owned(&[("two-heads.beta", "6")])), Ok(false));
    let unmasked = owned(&[("two-heads.beta", "6.5"), ("two-heads.causal", "0")]);
    assert_eq!(goals::met_by_pairs("previous-token-99", &unmasked), Ok(true));
    // Bad arguments are errors, never a panic.
    for bad in [
        "head_cost(8, 3)",
        "head_cost(40, 4)",
        "two_heads_weight(\"C\", 3, 1, 5, 1)",
        "two_heads_weight(\"A\", 3, 2, 5, 1)",
        "two_heads_weight(\"A\", 3, 1, 7, 1)",
        "two_heads_weight(\"A\", 3, 1, 0, 1)",
    ] {
        assert!(eval_key(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_positional_exercises_quote_their_keys() {
    use std::f64::consts::PI;
    // Wavelength of pair 3 at d = 16: 2π · 10000^(6/16) ≈ 198.7 positions; ω₃ ≈ 1/31.6.
    assert!(close(key("pe_wavelength(3, 16, 10000)"), 2.0 * PI * 10000f64.powf(6.0 / 16.0)));
    assert_eq!(format!("{:.1}", key("pe_wavelength(3, 16, 10000)")), "198.7");
    assert_eq!(format!("{:.1}", 10000f64.powf(6.0 / 16.0)), "31.6");
    // The turn from p to p + k is ω₁k with ω₁ = 1/√10 ≈ 0.316, the same for every p.
    assert!(close(key("shift_angle(10, -4, 16, 1)"), -4.0 / 10f64.sqrt()));
    assert!(close(key("shift_angle(10, -4, 16, 1)"), key("shift_angle(150, -4, 16, 1)")));
    assert_eq!(format!("{:.3}", key("shift_angle(10, -4, 16, 1)")), "-1.265");
    assert_eq!(format!("{:.3}", 1.0 / 10f64.sqrt()), "0.316");
    // RoPE: ω₁₆ = 1/10000^(32/128) = 1/10, so 10 radians at position 100, over one and a half turns.
    assert!(close(key("rope_angle(100, 16, 128)"), 10.0));
    assert!(close(key("rope_angle(100, 16, 128, 10000)"), 10.0));
    let turns = key("rope_angle(100, 16, 128)") / (2.0 * PI);
    assert!((1.5..1.75).contains(&turns), "{turns} turns");
    // The RoPE demo: the same score at (5, 2) and (20, 17) with RoPE, not with added codes.
    use attention_live::demos::rope::{Method, Params as RopeParams, RopeDemo};
    use attention_live::demos::Demo;
    let score = |method, m, n| RopeDemo::compute(&RopeParams { m, n, method, seed: 1 }).score;
    assert!((score(Method::Rope, 5, 2) - score(Method::Rope, 20, 17)).abs() < 1e-12);
    assert!((score(Method::Added, 5, 2) - score(Method::Added, 20, 17)).abs() > 0.1);
    // The slowest pair: ω = 1/1000 at d = 8 (|k| ≥ 100 needed), 1/100 at d = 4, where |k| ≥ 10 does it.
    assert!(close(key("shift_angle(0, 50, 8, 3)"), 0.05));
    assert!(close(key("shift_angle(0, 20, 4, 1)"), 0.2));
    for (k, met) in [("10", true), ("-10", true), ("9", false), ("50", true)] {
        let pairs = owned(&[("pe-shift.d", "4"), ("pe-shift.k", k)]);
        assert_eq!(goals::met_by_pairs("slowest-pair-turns", &pairs), Ok(met), "k = {k}");
    }
    assert_eq!(goals::met_by_pairs("slowest-pair-turns", &owned(&[("pe-shift.k", "50")])), Ok(false));
    for bad in [
        "pe_wavelength(8, 16, 10000)",
        "pe_wavelength(1, 15, 10000)",
        "shift_angle(10, 60, 16, 1)",
        "shift_angle(10, 4, 12, 1)",
        "rope_angle(100, 64, 128)",
        "rope_angle(1, 0, 8, 0)",
    ] {
        assert!(eval_key(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_transformer_block_exercises_quote_their_keys() {
    use attention_live::demos::collapse::{CollapseDemo, Params as CollapseParams};
    use attention_live::demos::Demo;
    // Layer norm of (0, 0, 0, 8): μ = 2, σ² = 48/4 = 12, last entry 6/√12 = √3 ≈ 1.732, others ≈ −0.577.
    assert_eq!(key("variance([0, 0, 0, 8])"), 12.0);
    assert!((key("layer_norm([0, 0, 0, 8], 4)") - 3f64.sqrt()).abs() < 1e-6);
    assert_eq!(format!("{:.3}", key("layer_norm([0, 0, 0, 8], 4)")), "1.732");
    assert_eq!(format!("{:.3}", key("layer_norm([0, 0, 0, 8], 1)")), "-0.577");
    // GELU(−1): √(2/π)·(−1.044715) ≈ −0.834, tanh ≈ −0.682, result ≈ −0.159; √(2/π) ≈ 0.798.
    let inner = (2.0 / std::f64::consts::PI).sqrt() * -1.044715;
    assert_eq!((format!("{inner:.3}"), format!("{:.3}", inner.tanh())), ("-0.834".into(), "-0.682".into()));
    assert_eq!(format!("{:.3}", (2.0 / std::f64::consts::PI).sqrt()), "0.798");
    assert_eq!(format!("{:.3}", 1.0 + inner.tanh()), "0.318");
    assert_eq!(format!("{:.3}", key("gelu(-1)")), "-0.159");
    // The spread after the last layer, seed 1, n = 8.
    let spread = |layers, residual, ffn, ln| {
        let o = CollapseDemo::compute(&CollapseParams { layers, n: 8, residual, ffn, ln, seed: 1 });
        *o.block.last().unwrap()
    };
    let order = [spread(24, true, true, true), spread(24, true, true, false), spread(24, true, false, false)];
    let attention_only = spread(24, false, false, false);
    assert!(order[0] > order[1] && order[1] > order[2] && order[2] > attention_only, "{order:?}");
    assert_eq!(format!("{:.2}", order[0]), "0.35");
    assert_eq!(format!("{:.2}", order[1]), "0.02");
    assert_eq!(format!("{:.4}", order[2]), "0.0007");
    assert!(spread(3, false, false, false) < 0.001);
    // Residual connections and layer norm without the feed-forward network: about 0.19, then 0.20.
    assert_eq!(format!("{:.2}", spread(24, true, false, true)), "0.19");
    assert_eq!(format!("{:.2}", spread(48, true, false, true)), "0.20");
    assert!(spread(48, true, false, false) < 0.001);
    let pairs =
        owned(&[("collapse.layers", "48"), ("collapse.residual", "1"), ("collapse.ln", "1"), ("collapse.ffn", "1")]);
    assert_eq!(goals::met_by_pairs("spread-without-ffn", &pairs), Ok(false), "the feed-forward network is on");
    for bad in ["layer_norm([1, 2], 3)", "layer_norm([], 1)", "variance(3)", "gelu([1])"] {
        assert!(eval_key(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_efficient_exercises_quote_their_keys() {
    use attention_live::demos::flash_steps::{FlashStepsDemo, Params as FlashParams};
    use attention_live::demos::Demo;
    const GIB: f64 = (1u64 << 30) as f64;
    // Llama 3 8B: 2 · 32 · 8 · 128 · 8192 · 2 = 2^30 bytes; with 32 KV heads, 4 GiB.
    assert_eq!(key("kv_bytes(\"Llama 3 8B\", 8192)"), GIB);
    assert_eq!(key("kv_cache_bytes(32, 8, 128, 8192, 1, 2)"), GIB);
    assert_eq!(key("kv_cache_bytes(32, 32, 128, 8192, 1, 2)"), 4.0 * GIB);
    // The window: 24 · 1023 + 1 = 24,553.
    assert_eq!(key("receptive_field(1024, 24)"), 24_553.0);
    // Flash steps at the defaults, query row 0 (the first): the second tile lifts m from about 1.01 to 2.40,
    // factor ≈ 0.249.
    let o = FlashStepsDemo::compute(&FlashParams { n: 8, d: 4, tile: 3, row: 0, step: 2, seed: 7 });
    let second = &o.steps[1];
    assert_eq!(format!("{:.2}", second.m_before.unwrap()), "1.01");
    assert_eq!(format!("{:.2}", second.m_after), "2.40");
    assert_eq!(format!("{:.3}", second.rescale), "0.249");
    assert!(o.shown == 2 && second.rescale < 1.0);
    // The reach of query 31: 7L ≥ 31 needs L = 5 at w = 8 (4 layers reach 28 back); w = 5 needs 8, w = 4 fails.
    let reach = |w: &str, l: &str| {
        let pairs = [("n", "32"), ("query", "31"), ("window", w), ("layers", l)];
        let pairs: Vec<(String, String)> =
            pairs.iter().map(|(k, v)| (format!("sliding-window.{k}"), v.to_string())).collect();
        goals::met_by_pairs("window-reaches-start", &pairs).unwrap()
    };
    assert!(reach("8", "5") && !reach("8", "4") && reach("5", "8") && !reach("5", "7") && !reach("4", "8"));
    assert_eq!(key("receptive_field(8, 4)") - 1.0, 28.0);
    // 64 sequences: 8 GiB per key-value head at 16-bit, so 64 GiB with 8, 16 with 2; at 8-bit 4 heads fit.
    assert_eq!(key("kv_cache_bytes(32, 1, 128, 8192, 64, 2)"), 8.0 * GIB);
    assert_eq!(key("kv_cache_bytes(32, 8, 128, 8192, 64, 2)"), 64.0 * GIB);
    let batch = |kv: &str, bytes: &str| {
        let pairs = [("batch", "64"), ("kv-heads", kv), ("precision", bytes)];
        let pairs: Vec<(String, String)> =
            pairs.iter().map(|(k, v)| (format!("kv-cache.{k}"), v.to_string())).collect();
        goals::met_by_pairs("batch-64-in-16-gib", &pairs).unwrap()
    };
    assert!(batch("2", "2") && batch("1", "2") && !batch("3", "2") && batch("4", "1") && !batch("5", "1"));
    for bad in [
        "kv_cache_bytes(32, 8, 128, 8192, 1, 3)",
        "kv_cache_bytes(0, 8, 128, 8192, 1, 2)",
        "kv_cache_bytes(32, 8, 128, 8192, 1)",
    ] {
        assert!(eval_key(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_gpt2_live_exercises_quote_their_keys() {
    // Pet stories: heads of 128/4 = 32, 2 · 4 · 32 = 256 numbers per layer, 1024 for 4 layers, 4096 bytes.
    assert_eq!(key("kv_cache_bytes(4, 4, 32, 1, 1, 4)"), 4096.0);
    // Temperature 0.5 doubles the logits: e⁶ / (e⁶ + e⁴ + 1) ≈ 0.879, against ≈ 0.705 at τ = 1.
    let (e4, e6) = (4f64.exp(), 6f64.exp());
    assert!((key("next_token_prob([3, 2, 0], 1, 0.5)") - e6 / (e6 + e4 + 1.0)).abs() < 1e-6);
    assert_eq!(format!("{:.3}", key("next_token_prob([3, 2, 0], 1, 0.5)")), "0.879");
    assert_eq!(format!("{:.3}", key("next_token_prob([3, 2, 0], 1)")), "0.705");
    // Top-p 0.8 on (2, 1, 0, −1): 0.644, 0.237, 0.087, 0.032; two reach 0.881; e/(e + 1) ≈ 0.731.
    let p: Vec<String> =
        (1..=4).map(|i| format!("{:.3}", key(&format!("next_token_prob([2, 1, 0, -1], {i})")))).collect();
    assert_eq!(p, ["0.644", "0.237", "0.087", "0.032"]);
    let two = key("next_token_prob([2, 1, 0, -1], 1) + next_token_prob([2, 1, 0, -1], 2)");
    assert_eq!(format!("{two:.3}"), "0.881");
    let e = std::f64::consts::E;
    assert!((key("next_token_prob([2, 1, 0, -1], 1, 1, 0, 0.8)") - e / (e + 1.0)).abs() < 1e-6);
    assert_eq!(key("next_token_prob([2, 1, 0, -1], 3, 1, 0, 0.8)"), 0.0);
    assert!((key("next_token_prob([2, 1, 0, -1], 1, 1, 1)") - 1.0).abs() < 1e-6, "top-k = 1 keeps one token");
    assert_eq!(key("next_token_prob([2, 1, 0, -1], 2, 1, 1)"), 0.0);
    for bad in ["next_token_prob([3, 2, 0], 4)", "next_token_prob([3, 2, 0], 1, 0)", "next_token_prob([3], 1, 1, 0, 2)"]
    {
        assert!(eval_key(bad).is_err(), "{bad}");
    }
}

/// The training chapter's exercises, worked from the definitions: the scored positions and the
/// sequence lengths of each task, the parameter list with its shapes, and the two head scores.
#[test]
fn the_training_exercises_quote_their_keys() {
    // Copy: scored inputs t = n + 1 ..= 2n − 1; sort and reverse: T = 2n + 1, scored t = n + 1 ..= 2n.
    let copy_scored = |n: usize| (n + 1..2 * n).count();
    assert_eq!((copy_scored(8), copy_scored(4)), (7, 3));
    assert_eq!(key("7"), copy_scored(8) as f64);
    let sorted_t = |n: usize| 2 * n + 2 - 1;
    assert_eq!((sorted_t(5), (5 + 1..=2 * 5).count()), (11, 5));
    // Parameters by name: V = 28, learned positions, MLP off.
    let params = |t: usize, layers: usize, c: usize| {
        let layer = [2 * c, c * 3 * c + 3 * c, c * c + c]; // ln_1, c_attn, c_proj
        28 * c + t * c + layers * layer.iter().sum::<usize>() + 2 * c // wte, wpe, h.*, ln_f
    };
    assert_eq!(params(11, 2, 16), 2896);
    assert_eq!(key("28*16 + 11*16 + 2*(16 + 16 + 16*48 + 48 + 16*16 + 16) + 16 + 16"), 2896.0);
    // The head scores, as the lab defines them; A is lower-triangular, row t over keys 0..=t.
    let prev = |a: &[&[f64]]| (1..a.len()).map(|t| a[t][t - 1]).sum::<f64>() / (a.len() - 1) as f64;
    let induction = |a: &[&[f64]], tok: &[char]| {
        let sums: Vec<f64> = (0..a.len())
            .filter_map(|t| {
                let s: Vec<usize> = (1..t).filter(|&j| tok[j - 1] == tok[t]).collect();
                (!s.is_empty()).then(|| s.iter().map(|&j| a[t][j]).sum::<f64>())
            })
            .collect();
        sums.iter().sum::<f64>() / sums.len() as f64
    };
    let a: [&[f64]; 4] = [&[1.0], &[0.9, 0.1], &[0.1, 0.6, 0.3], &[0.1, 0.2, 0.3, 0.4]];
    assert!(close(prev(&a), key("(0.9 + 0.6 + 0.3)/3")) && close(prev(&a), 0.6));
    let rest = [0.25, 0.25, 0.25, 0.25];
    let b: [&[f64]; 6] = [
        &[1.0],
        &[0.5, 0.5],
        &[1.0 / 3.0; 3],
        &rest,
        &[0.05, 0.10, 0.70, 0.05, 0.10],
        &[0.02, 0.03, 0.05, 0.80, 0.05, 0.05],
    ];
    assert!(b.iter().all(|row| (row.iter().sum::<f64>() - 1.0).abs() < 1e-9));
    let probe: Vec<char> = "^cafca".chars().collect();
    assert!(close(induction(&b, &probe), key("(0.70 + 0.80)/2")) && close(induction(&b, &probe), 0.75));
    // Reverse, n = 4, "^ b o g e > e g o b": position t reads 2n + 1 − t; at 6 that is the g.
    let rev: Vec<char> = "^boge>egob".chars().collect();
    assert_eq!((rev[9 - 6], rev[7]), ('g', 'g'));
    assert!((5..=8).all(|t| rev[9 - t] == rev[t + 1]));
}
