//! The GPT-2 demo's page logic, DOM-free: how the model's status follows the worker's replies and
//! the reader's actions, which next-token rows the chart shows (with and without knock-outs), how
//! the layer, head and token selection fits a model and a prompt, and how labels are thinned or
//! clipped so they never run together.

use attention_live::demos::gpt2::status::{
    cut_text, loading_line, next, plan_load, Asked, Event, Loads, Plan, Prompt, Status, PROMPT_MAX,
};
use attention_live::demos::gpt2::{
    clip_label, fit_selection, label_stride, next_rows, query, slider_max, Gpt2Demo, Model, Moved, Params, Prob,
};
use attention_live::demos::Demo;
use attention_live::session::protocol::{Candidate, Phase, Reply, Request, Source};
use attention_live::state::{Params as _, Values};

fn cands(list: &[(u32, f64)]) -> Vec<Candidate> {
    list.iter().map(|&(id, prob)| Candidate { id, text: format!("t{id}"), prob }).collect()
}

#[test]
fn without_knock_outs_the_chart_is_the_top_of_the_list() {
    let next = cands(&[(5, 0.5), (6, 0.3), (7, 0.1), (8, 0.05)]);
    let rows = next_rows(&next, None, 4, 3);
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [5, 6, 7]);
    assert!(rows.iter().all(|r| r.knocked.is_none()));
    assert_eq!(rows[0].intact, Prob::Exact(0.5));
}

#[test]
fn with_knock_outs_a_token_that_falls_keeps_its_row_with_both_probabilities() {
    // Intact: token 1 is the favourite. Knocked out: it falls to 2% (10th of the list of 10
    // asked, so still listed), and tokens 20 and 21 rise into the top 2.
    let base = cands(&[(1, 0.82), (2, 0.05), (3, 0.04), (4, 0.03)]);
    let next = cands(&[
        (20, 0.3),
        (21, 0.2),
        (2, 0.1),
        (9, 0.05),
        (10, 0.04),
        (11, 0.03),
        (12, 0.03),
        (13, 0.03),
        (14, 0.03),
        (1, 0.02),
    ]);
    let rows = next_rows(&next, Some(&base), 10, 2);
    // The union of each model's top 2: {1, 2} ∪ {20, 21}, sorted by the intact probability.
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [1, 2, 20, 21]);
    assert_eq!((rows[0].intact, rows[0].knocked), (Prob::Exact(0.82), Some(Prob::Exact(0.02))));
    assert_eq!((rows[1].intact, rows[1].knocked), (Prob::Exact(0.05), Some(Prob::Exact(0.1))));
    // 20 and 21 are not in the intact list of 4 (of 10 asked): top-k or top-p cut them, so
    // their intact probability is exactly 0 under those settings. Ties go by the knocked-out one.
    assert_eq!((rows[2].intact, rows[2].knocked), (Prob::Exact(0.0), Some(Prob::Exact(0.3))));
    assert_eq!(rows[3].knocked, Some(Prob::Exact(0.2)));
}

#[test]
fn an_unlisted_token_of_a_full_list_is_only_bounded() {
    // A full list (as many as asked) that misses a token: below its last entry, printed "<".
    let base = cands(&[(1, 0.6), (2, 0.3), (3, 0.01)]);
    let next = cands(&[(4, 0.7), (2, 0.2), (5, 0.02)]);
    let rows = next_rows(&next, Some(&base), 3, 2);
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [1, 2, 4]);
    assert_eq!(rows[0].knocked, Some(Prob::Below(0.02)));
    assert_eq!(rows[2].intact, Prob::Below(0.01));
    assert_eq!(rows[0].knocked.unwrap().label(), "<2.0%");
    assert_eq!(rows[0].knocked.unwrap().bar(), 0.0, "a bound draws no bar");
    assert_eq!(Prob::Exact(0.8192).label(), "81.9%");
    // A bound is rounded up: below 0.012% is "<0.1%", never "<0.0%".
    assert_eq!(Prob::Below(0.00012).label(), "<0.1%");
    assert_eq!(Prob::Below(0.0231).label(), "<2.4%");
}

#[test]
fn the_selection_keeps_what_fits_and_moves_the_rest_to_the_last() {
    // The induction model (2 layers × 4 heads) and a 7-token prompt.
    let f = fit_selection(1, 3, 6, 2, 4, 7);
    assert_eq!((f.layer, f.head, f.token, f.moved.len()), (1, 3, 6, 0));
    let f = fit_selection(9, 3, 10, 2, 4, 7);
    assert_eq!((f.layer, f.head, f.token), (1, 3, 6));
    assert_eq!(
        f.moved,
        [
            Moved { key: "layer", wanted: 9, now: 1, why: "this model has layers 0 to 1".into() },
            Moved { key: "token", wanted: 10, now: 6, why: "the prompt has tokens 0 to 6".into() },
        ]
    );
    // Nonsense never panics: negative values go to 0, an empty model or prompt to 0.
    let f = fit_selection(-1, i64::MAX, i64::MIN, 0, 0, 0);
    assert_eq!((f.layer, f.head, f.token), (0, 0, 0));
    assert_eq!(slider_max(12, 12, 1024), [("layer", 11), ("head", 11), ("token", 1023)]);
    assert_eq!(slider_max(2, 4, 0), [("layer", 1), ("head", 3), ("token", 0)]);
}

#[test]
fn labels_are_thinned_so_they_keep_a_gap_and_clipped_to_their_column() {
    // 20 px labels with a 4 px gap: one per cell at 24 px, every second at 23 px, every third at 8 px.
    assert_eq!(label_stride(20.0, 4.0, 24.0), 1);
    assert_eq!(label_stride(20.0, 4.0, 23.0), 2);
    assert_eq!(label_stride(20.0, 4.0, 8.0), 3);
    assert_eq!(label_stride(20.0, 4.0, 0.0), 1);
    // Drawn labels k cells apart never touch: k·spacing ≥ widest + gap.
    for spacing in [3.0, 7.5, 11.0, 19.9, 40.0] {
        let k = label_stride(33.0, 4.0, spacing) as f64;
        assert!(k * spacing >= 37.0 && (k - 1.0) * spacing < 37.0, "spacing {spacing}: k = {k}");
    }
    assert_eq!(clip_label("·fluffy", 10), "·fluffy");
    assert_eq!(clip_label("·fluffy", 4), "·fl…");
    assert_eq!(clip_label("·fluffy", 0), "");
}

fn progress(phase: Phase, loaded: u64, total: Option<u64>, rate: Option<f64>) -> Event<'static> {
    Event::Progress { phase, loaded, total, rate }
}

fn loaded(name: &str) -> Reply {
    Reply::Loaded {
        name: name.into(),
        source: Source::Cache,
        family: Default::default(),
        n_layer: 4,
        n_head: 4,
        n_kv_head: None,
        n_embd: 64,
        n_positions: 256,
        params: 500_000,
        char_vocab: None,
        load: 0,
    }
}

/// Plans the load of `model` from `status` and applies the plan, as the page does.
fn choose(model: Model, base: &str, only_cached: bool, status: &Status) -> (Plan, Status) {
    let plan = plan_load(model, base, only_cached, status);
    let after = next(status, Event::Planned(&plan));
    (plan, after)
}

#[test]
fn a_bundled_model_goes_from_loading_through_progress_to_ready() {
    let (plan, s) = choose(Model::Stories, "", true, &Status::Starting);
    // Bundled models come from the site, never from the browser's storage, and are not asked first.
    match &plan {
        Plan::Send(Request::Load { name, base, cache, only_cached, expect, .. }) => {
            assert_eq!((name.as_str(), base.as_str()), ("stories", "/models/stories/"));
            assert!(!cache && !only_cached);
            // ... checked against the sizes and hashes the build recorded.
            let file = concat!(env!("CARGO_MANIFEST_DIR"), "/static/models/stories/model.safetensors");
            assert_eq!(expect.as_ref().map(|m| m.model.size), Some(std::fs::metadata(file).unwrap().len()));
        }
        other => panic!("expected a load, got {other:?}"),
    }
    assert!(matches!(&s, Status::Loading { name, phase, .. } if name == "stories" && *phase == Phase::Download));
    let s = next(&s, progress(Phase::Download, 1_000_000, Some(4_000_000), Some(2_000_000.0)));
    let (text, pct) = match &s {
        Status::Loading { name, phase, loaded, total, rate, .. } => loading_line(name, *phase, *loaded, *total, *rate),
        other => panic!("still loading, not {other:?}"),
    };
    let want = "Downloading Pet stories (4 layers, bundled): 1.0 MB of 4.0 MB (25%), 2.0 MB/s";
    assert_eq!((text.as_str(), pct), (want, Some(25.0)));
    let s = next(&s, progress(Phase::Verify, 0, Some(4_000_000), Some(3_000.0)));
    assert!(matches!(s, Status::Loading { phase: Phase::Verify, loaded: 0, rate: Some(_), .. }), "{s:?}");
    // Progress as the wire carries it (the client adds the rate) shows too, without a rate.
    let wire = Reply::Progress { phase: Phase::Parse, loaded: 0, total: None, load: 0 };
    assert!(matches!(next(&s, Event::Reply(&wire)), Status::Loading { phase: Phase::Parse, rate: None, .. }));
    let s = next(&s, Event::Reply(&loaded("stories")));
    assert_eq!(s.dims(), Some((4, 4)));
    assert_eq!(s.key(), "ready");
    // Progress after the model is ready (there is none in a real exchange) changes nothing.
    assert_eq!(next(&s, progress(Phase::Download, 9, None, None)), s);
}

#[test]
fn gpt2_small_is_asked_of_the_browser_cache_first_and_downloaded_on_the_readers_go() {
    let (plan, s) = choose(Model::Gpt2, "", true, &Status::Starting);
    assert!(matches!(&plan, Plan::Send(Request::Load { cache: true, only_cached: true, expect: Some(_), .. })));
    let s = next(&s, Event::Reply(&Reply::NotCached { name: "gpt2".into(), size: Some(548_000_000), load: 0 }));
    assert_eq!(s, Status::NotCached { name: "gpt2".into(), size: Some(548_000_000) });
    assert_eq!(s.key(), "not-cached");
    // "Download": the same load, now allowed to go to the network.
    let (plan, s) = choose(Model::Gpt2, "", false, &s);
    assert!(matches!(&plan, Plan::Send(Request::Load { cache: true, only_cached: false, .. })));
    assert_eq!(s.key(), "loading");
}

#[test]
fn cancelling_a_download_fails_it_and_a_cancel_when_nothing_loads_does_nothing() {
    let (_, s) = choose(Model::Url, "https://example.org/ckpt", true, &Status::Starting);
    let s = next(&s, progress(Phase::Download, 10, Some(100), Some(5.0)));
    let cancelled = next(&s, Event::Cancelled);
    assert_eq!(cancelled, Status::Failed("The download was cancelled.".into()));
    let ready = next(&s, Event::Reply(&loaded("url")));
    assert_eq!(next(&ready, Event::Cancelled), ready);
}

#[test]
fn an_error_about_the_model_fails_the_load_and_an_error_about_a_request_does_not() {
    let (_, s) = choose(Model::Induction, "", true, &Status::Starting);
    let failed = next(&s, Event::Reply(&Reply::Error { id: None, message: "no such file".into(), load: 0 }));
    assert_eq!(failed, Status::Failed("no such file".into()));
    assert_eq!(failed.key(), "failed");
    let ready = next(&s, Event::Reply(&loaded("induction")));
    let after = next(&ready, Event::Reply(&Reply::Error { id: Some(7), message: "bad prompt".into(), load: 0 }));
    assert_eq!(after, ready, "an analysis that fails leaves the model loaded");
    let crashed = next(&ready, Event::Reply(&Reply::Crashed { message: "out of memory".into() }));
    assert_eq!(crashed, Status::Failed("out of memory".into()), "a crashed worker has lost its model");
}

#[test]
fn a_reply_about_a_model_no_longer_wanted_is_stale() {
    // The reader picks the stories model, then the induction model before the first arrives.
    let (_, s) = choose(Model::Stories, "", true, &Status::Starting);
    let (_, s) = choose(Model::Induction, "", true, &s);
    let s = next(&s, Event::Reply(&loaded("stories")));
    assert!(matches!(&s, Status::Loading { name, .. } if name == "induction"), "{s:?}");
    let s = next(&s, Event::Reply(&Reply::NotCached { name: "gpt2".into(), size: None, load: 0 }));
    assert_eq!(s.key(), "loading");
    assert_eq!(next(&s, Event::Reply(&loaded("induction"))).dims(), Some((4, 4)));
    // A load that finishes after something else failed on the page (files that could not be
    // read) is the model the worker now has: it shows.
    let failed = next(&s, Event::Failed("could not read config.json".into()));
    assert_eq!(next(&failed, Event::Reply(&loaded("induction"))).key(), "ready");
}

#[test]
fn local_files_wait_for_the_reader_and_stay_once_given() {
    let (plan, s) = choose(Model::File, "", true, &Status::Starting);
    assert_eq!((plan, &s), (Plan::NeedFiles, &Status::NeedFiles));
    assert_eq!(s.key(), "waiting");
    let s = next(&s, Event::FilesSent);
    assert!(matches!(&s, Status::Loading { name, phase, .. } if name == "file" && *phase == Phase::Parse));
    // Choosing "local files" (which sending them does) keeps the load going, and keeps the model.
    let (plan, same) = choose(Model::File, "", true, &s);
    assert_eq!((plan, &same), (Plan::Keep, &s));
    let ready = next(&s, Event::Reply(&loaded("file")));
    assert_eq!(choose(Model::File, "", true, &ready).1, ready);
    // Unreadable files fail with the reason.
    assert_eq!(next(&ready, Event::Failed("no .json file".into())), Status::Failed("no .json file".into()));
    // A URL model without a URL waits for one.
    assert_eq!(choose(Model::Url, "  ", true, &ready), (Plan::NeedUrl, Status::NeedUrl));
}

#[test]
fn an_answer_to_an_earlier_analysis_is_stale() {
    // The worker client numbers every request: the prompt's analyses and the comparison's mix.
    let mut asked = Asked::default();
    assert_eq!(asked.route(1), None, "nothing asked yet");
    asked.record(Prompt::Main, Some(1));
    asked.record(Prompt::Compare, Some(2));
    assert_eq!((asked.route(1), asked.route(2)), (Some(Prompt::Main), Some(Prompt::Compare)));
    asked.record(Prompt::Main, Some(3));
    assert_eq!(asked.route(1), None, "the prompt changed since: its answer is dropped");
    assert_eq!(asked.route(3), Some(Prompt::Main));
    assert_eq!(asked.route(2), Some(Prompt::Compare), "the comparison's latest is still wanted");
    // The comparison prompt emptied: its last answer, arriving late, must not bring it back.
    asked.record(Prompt::Compare, None);
    assert_eq!(asked.route(2), None);
}

#[test]
fn the_loading_line_counts_bytes_only_where_there_are_bytes() {
    let (text, pct) = loading_line("gpt2", Phase::Download, 137_000_000, Some(548_000_000), Some(2_500_000.0));
    assert_eq!(text, "Downloading GPT-2 small, 124M (download 548 MB): 137.0 MB of 548.0 MB (25%), 2.5 MB/s");
    assert_eq!(pct, Some(25.0));
    let (text, pct) = loading_line("stories", Phase::Verify, 5, Some(10), Some(1.0));
    assert_eq!((text.as_str(), pct), ("Checking the file's SHA-256 Pet stories (4 layers, bundled)", None));
    let (text, _) = loading_line("nonsense", Phase::Cache, 2_000_000, None, Some(1.0));
    assert_eq!(text, "Reading the copy stored in this browser model: 2.0 MB");
}

#[test]
fn the_typed_parameters_make_the_query_the_worker_gets() {
    let mut p = Params::defaults();
    assert_eq!((p.model, p.layer, p.head, p.token, p.top_k), (Model::Stories, 0, 3, 10, 0));
    p.ablate = "1.2 x 0.3 1.2".into();
    p.top_k = 5;
    let q = query(&p, 9);
    assert_eq!((q.id, q.ablate.as_slice(), q.top_k, q.top), (9, &[(1, 2), (0, 3)][..], 5, 100));
    // Written and read back through the URL values, nothing is lost.
    let mut v = Values::defaults(Params::TABLE);
    p.write(&mut v);
    assert_eq!(Params::read(&v), p);
    let data = Gpt2Demo::data(&p).unwrap();
    assert_eq!((data["model"].as_str(), data["query"]["top_k"].as_u64()), (Some("stories"), Some(5)));
}

#[test]
fn a_slow_download_that_ends_after_another_model_was_chosen_is_dropped() {
    let mut loads = Loads::default();
    // The reader asks for a URL model (load 1), then, while it downloads, the bundled stories
    // model (load 2), which loads first.
    let mut slow = match plan_load(Model::Url, "https://slow.example/m/", false, &Status::Starting) {
        Plan::Send(req) => req,
        other => panic!("{other:?}"),
    };
    loads.number(&mut slow);
    let s = next(&Status::Starting, Event::Planned(&Plan::Send(slow.clone())));
    let (plan, _) = choose(Model::Stories, "", true, &s);
    let Plan::Send(mut quick) = plan else { panic!("{plan:?}") };
    loads.number(&mut quick);
    let (Request::Load { load: first, .. }, Request::Load { load: second, .. }) = (&slow, &quick) else {
        panic!("{slow:?} {quick:?}")
    };
    assert!(second > first, "every load gets a later number");
    let s = next(&s, Event::Planned(&Plan::Send(quick.clone())));
    let mut stories = loaded("stories");
    if let Reply::Loaded { load, .. } = &mut stories {
        *load = *second;
    }
    assert!(loads.wants_reply(&stories));
    let s = next(&s, Event::Reply(&stories));
    assert!(matches!(&s, Status::Ready { name, .. } if name == "stories"));
    // 9 s later the slow download's model, progress and errors arrive: all dropped, the page
    // keeps saying (and running) the stories model.
    let mut late = loaded("url");
    if let Reply::Loaded { load, .. } = &mut late {
        *load = *first;
    }
    assert!(!loads.wants_reply(&late), "a superseded load's model is not shown");
    let progress = Reply::Progress { phase: Phase::Download, loaded: 9, total: None, load: *first };
    assert!(!loads.wants_reply(&progress) && !loads.wants(*first));
    assert!(!loads.wants_reply(&Reply::Error { id: None, message: "x".into(), load: *first }));
    // A message about no load in particular still counts.
    assert!(loads.wants_reply(&Reply::Error { id: None, message: "unreadable".into(), load: 0 }));
    // Other requests are not numbered.
    let mut stop = Request::Stop;
    loads.number(&mut stop);
    assert!(loads.wants(*second));
    // Local files are numbered too.
    let mut files = Request::LoadBytes { name: "file".into(), config: "{}".into(), tokenizer: None, load: 0 };
    loads.number(&mut files);
    assert!(matches!(files, Request::LoadBytes { load, .. } if load == second + 1));
    assert!(!loads.wants(*second));
}

#[test]
fn a_worker_that_dies_while_preparing_the_model_leaves_a_failed_status_not_a_spinner() {
    let (_, s) = choose(Model::Stories, "", true, &Status::Starting);
    let s = next(&s, Event::Reply(&Reply::Progress { phase: Phase::Parse, loaded: 0, total: None, load: 1 }));
    assert!(matches!(s, Status::Loading { phase: Phase::Parse, .. }));
    let died = next(&s, Event::Failed("the compute worker stopped: RuntimeError: unreachable".into()));
    assert_eq!(died.key(), "failed");
    // Retry with a dead worker starts a fresh one: the status says so until it loads the model.
    assert_eq!(next(&died, Event::Restarting), Status::Starting);
    // Retry plans the same load again from the failed state.
    let again = plan_load(Model::Stories, "", true, &died);
    assert!(matches!(again, Plan::Send(Request::Load { .. })));
    assert_eq!(next(&died, Event::Planned(&again)).key(), "loading");
}

#[test]
fn a_prompt_past_the_limit_is_cut_to_its_first_characters() {
    assert_eq!(PROMPT_MAX, 4000);
    let long: String = "ab€".repeat(2000); // 6000 characters, some of 3 bytes
    let (cut, was) = cut_text(&long, PROMPT_MAX);
    assert!(was);
    assert_eq!(cut.chars().count(), PROMPT_MAX);
    assert!(long.starts_with(&cut));
    assert_eq!(cut_text("short", PROMPT_MAX), ("short".to_string(), false));
    let exact = "x".repeat(PROMPT_MAX);
    assert_eq!(cut_text(&exact, PROMPT_MAX), (exact.clone(), false));
    // The demo's prompt parameter has the same limit.
    let table = <Params as attention_live::state::Params>::TABLE;
    let p = table.iter().find(|p| p.key == "prompt").expect("a prompt parameter");
    assert!(matches!(p.kind, attention_live::state::Kind::Text { max_len: PROMPT_MAX, .. }));
}

#[test]
fn stored_files_are_listed_as_models_with_their_sizes() {
    use attention_live::demos::gpt2::status::stored_models;
    let hub = attention_live::session::manifest::HUB_GPT2;
    let files = vec![
        (format!("{hub}config.json"), 665),
        (format!("{hub}model.safetensors"), 548_105_171),
        ("http://127.0.0.1:8080/models/trained/config.json".to_string(), 300),
        ("http://127.0.0.1:8080/models/trained/model.safetensors".to_string(), 1_000_000),
        ("https://mirror.example/gpt2/model.safetensors".to_string(), 7),
    ];
    let models = stored_models(&files, "http://127.0.0.1:8080");
    assert_eq!(models.len(), 3);
    assert_eq!((models[0].label.as_str(), models[0].bytes), ("GPT-2 small, from the Hugging Face hub", 548_105_836));
    assert_eq!(models[1].label, Model::Trained.label(), "the training lab's model is listed too");
    assert_eq!(models[1].bytes, 1_000_300);
    assert_eq!(models[2].label, "https://mirror.example/gpt2/");
    assert!(stored_models(&[], "http://x").is_empty());
}

/// "Generate" keeps its continuation apart from the prompt, counts its tokens and says why it
/// ended; adding it to the prompt keeps the prompt's limit.
#[test]
fn a_continuation_counts_its_tokens_and_says_why_it_ended() {
    use attention_live::demos::gpt2::continuation::{tail, Continuation, End};
    use attention_live::demos::gpt2::status::PROMPT_MAX;
    let mut c = Continuation::start("My cat".into());
    c.step(" likes", " likes".into(), false);
    assert_eq!((c.tokens, c.end, c.note().as_str()), (1, None, "Generating… 1 token so far."));
    c.step("<|endoftext|>", " likes".into(), false);
    assert_eq!((c.tokens, c.end), (1, Some(End::EndOfText)));
    assert!(c.note().contains("ended the text"), "{}", c.note());
    c.stop();
    assert_eq!(c.end, Some(End::EndOfText), "a Stop after the end changes nothing");
    let mut d = Continuation::start(String::new());
    d.step("a", "a".into(), true);
    assert_eq!(d.note(), "1 token generated.");
    let mut e = Continuation::start("x".into());
    e.stop();
    assert_eq!(e.note(), "Stopped after 0 tokens.");
    assert_eq!(c.appended(), ("My cat likes".to_string(), false));
    let long = Continuation { prompt: "a".repeat(PROMPT_MAX - 1), text: "bcd".into(), tokens: 1, end: None };
    assert_eq!(long.appended().0.chars().count(), PROMPT_MAX);
    assert!(long.appended().1);
    assert_eq!(tail("abcdef", 3), "…def");
    assert_eq!(tail("ab", 3), "ab");
}
