//! A session of either family (`session::ModelSession`): a Llama-family checkpoint answers the
//! page's questions with what its engine computes (tokens, attention per query head, next-token
//! probabilities, knock-outs, generation with the KV cache), in the replies GPT-2's session
//! sends; the family comes from config.json, and what cannot load is refused with a message.

use std::rc::Rc;

use attention_live::llama::gpu::GpuLlama;
use attention_live::llama::{Capture, ForwardOptions, Llama, Tokenizer};
use attention_live::session::any::{family, ModelLoader, ModelSession};
use attention_live::session::protocol::{Family, Query, Reply, Source};
use pollster::block_on;

use crate::common;

fn fixture(name: &str) -> (String, Vec<u8>) {
    common::checkpoint(&format!("tests/fixtures/llama/{name}"))
}

fn tokenizer300() -> String {
    let path = format!("{}/tests/fixtures/llama/tokenizer300/tokenizer.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

fn llama(name: &str) -> ModelSession {
    let (cfg, bytes) = fixture(name);
    ModelSession::new(&cfg, &bytes, Some(&tokenizer300())).expect("the fixture and its tokenizer load")
}

fn query(prompt: &str) -> Query {
    Query { id: 7, prompt: prompt.into(), top: 5, temperature: 1.0, top_p: 1.0, ..Default::default() }
}

fn softmax(row: &[f32]) -> Vec<f64> {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) as f64;
    let e: Vec<f64> = row.iter().map(|&v| (v as f64 - max).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|v| v / sum).collect()
}

#[test]
fn the_family_comes_from_config_json() {
    assert_eq!(family(r#"{"model_type": "llama"}"#).unwrap(), Family::Llama);
    assert_eq!(family(r#"{"architectures": ["LlamaForCausalLM"]}"#).unwrap(), Family::Llama);
    assert_eq!(family(r#"{"model_type": "gpt2"}"#).unwrap(), Family::Gpt2);
    assert_eq!(family(r#"{"n_layer": 2}"#).unwrap(), Family::Gpt2, "the book's own checkpoints say nothing");
    let e = family(r#"{"model_type": "mistral"}"#).unwrap_err().to_string();
    assert!(e.contains("\"mistral\"") && e.contains("GPT-2") && e.contains("llama"), "{e}");
    let e = family(r#"{"architectures": ["BertModel"]}"#).unwrap_err().to_string();
    assert!(e.contains("BertModel") && e.contains("LlamaForCausalLM"), "{e}");
}

#[test]
fn a_llama_session_gives_the_engines_tokens_attention_and_probabilities() {
    let (cfg, bytes) = fixture("gqa");
    let model = Llama::load(&cfg, &bytes).unwrap();
    let tok = Tokenizer::from_json(&tokenizer300()).unwrap();
    let s = llama("gqa");
    assert_eq!(s.family(), Family::Llama);
    let prompt = "the cat sat on the mat";
    let (a, att) = block_on(s.analyze(&query(prompt))).unwrap();
    let ids = tok.encode(prompt);
    assert_eq!(a.tokens.iter().map(|t| t.id).collect::<Vec<_>>(), ids);
    assert_eq!((a.n_layer, a.n_head), (2, 6), "one matrix per query head, 6 heads over 2 KV heads");

    let opts = ForwardOptions { capture: Capture::All, ..Default::default() };
    let out = model.forward(&ids, &mut model.new_cache(), &opts).unwrap();
    for l in 0..2 {
        let want = out.attentions[l].as_ref().unwrap();
        for h in 0..6 {
            let got = att.full(l, h).expect("every layer is sent for a short prompt");
            let diff = (&got - &want.index_axis(ndarray::Axis(0), h)).iter().fold(0f32, |m, d| m.max(d.abs()));
            assert!(diff < 1e-6, "layer {l} head {h}: {diff}");
        }
    }
    let probs = softmax(out.logits.row(0).as_slice().unwrap());
    let best = probs.iter().enumerate().fold((0, 0.0), |b, (i, &p)| if p > b.1 { (i, p) } else { b });
    assert_eq!(a.next[0].id as usize, best.0);
    assert!((a.next[0].prob - best.1).abs() < 1e-6, "{} against {}", a.next[0].prob, best.1);
    assert_eq!(a.next[0].text, tok.token_text(best.0 as u32));
}

#[test]
fn a_knocked_out_head_changes_the_next_token_and_keeps_a_baseline() {
    let s = llama("mqa");
    let plain = block_on(s.analyze(&query("the cat"))).unwrap().0;
    assert!(plain.baseline.is_none());
    let mut q = query("the cat");
    q.ablate = (0..6).map(|h| (1, h)).collect();
    let (knocked, _) = block_on(s.analyze(&q)).unwrap();
    assert_eq!(knocked.baseline.as_ref(), Some(&plain.next), "the baseline is the plain run");
    assert_ne!(knocked.next, plain.next, "knocking out a layer's heads changes the prediction");
}

#[test]
fn greedy_generation_with_the_cache_is_the_engines_greedy_decoding() {
    let (cfg, bytes) = fixture("gqa");
    let model = Llama::load(&cfg, &bytes).unwrap();
    let tok = Tokenizer::from_json(&tokenizer300()).unwrap();
    let s = llama("gqa");
    let q = Query { temperature: 0.0, ..query("the cat") };
    let mut got = Vec::new();
    let mut last = String::new();
    block_on(s.generate(&q, 8, |t, text| {
        got.push(t.id);
        last = text;
    }))
    .unwrap();
    assert_eq!(got, model.greedy(&tok.encode("the cat"), 8).unwrap());
    assert_eq!(last, tok.decode(&got));
}

#[test]
fn generation_past_the_window_slides_instead_of_failing() {
    let s = llama("gqa"); // a window of 64 positions
    let q = Query { temperature: 1.0, seed: 3, ..query("the cat") };
    let mut n = 0;
    block_on(s.generate(&q, 80, |_, _| n += 1)).expect("the window slides");
    assert_eq!(n, 80);
}

#[test]
fn the_loaded_reply_names_the_family_and_the_kv_heads() {
    let r = llama("gqa").loaded("tiny", Source::File);
    let json: serde_json::Value = serde_json::from_str(&r.encode()).unwrap();
    assert_eq!(json["family"], "llama");
    assert_eq!(json["n_kv_head"], 2);
    assert_eq!(json["n_head"], 6);
    let Reply::Loaded { family, n_kv_head, .. } = Reply::decode(&r.encode()).unwrap() else { panic!("{r:?}") };
    assert_eq!((family, n_kv_head), (Family::Llama, Some(2)));

    let (cfg, bytes) = common::checkpoint("static/models/induction");
    let gpt2 = ModelSession::new(&cfg, &bytes, None).unwrap();
    let json: serde_json::Value = serde_json::from_str(&gpt2.loaded("induction", Source::Cache).encode()).unwrap();
    assert_eq!(json["family"], "gpt2");
    assert!(json.get("n_kv_head").is_none(), "GPT-2's reply has no KV heads of its own");
    // A reply written before families existed reads as GPT-2.
    let mut old = json.clone();
    old.as_object_mut().unwrap().remove("family");
    let Reply::Loaded { family, .. } = Reply::decode(&old.to_string()).unwrap() else { panic!() };
    assert_eq!(family, Family::Gpt2);
}

#[test]
fn what_cannot_load_is_refused_with_a_message() {
    let (cfg, bytes) = fixture("gqa");
    let err = |r: Result<ModelSession, _>| r.err().map(|e: attention_live::formats::LoadError| e.to_string()).unwrap();
    let e = err(ModelSession::new(&cfg, &bytes, None));
    assert!(e.starts_with("tokenizer.json is missing"), "{e}");
    let big = std::fs::read_to_string(format!(
        "{}/tests/fixtures/llama/tokenizer/tokenizer.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let e = err(ModelSession::new(&cfg, &bytes, Some(&big)));
    assert!(e.contains("1200 tokens") && e.contains("300 rows"), "{e}");
    let e = err(ModelSession::new(&cfg, &bytes, Some("[]")));
    assert!(e.starts_with("tokenizer.json is not a valid tokenizer"), "{e}");
    let e = err(ModelSession::new(&cfg, &bytes, Some(r#"{"decoder": {"type": "Metaspace"}}"#)));
    assert!(e.starts_with("tokenizer.json: decoder Metaspace is not supported"), "{e}");
    let mistral = cfg.replace("\"llama\"", "\"mistral\"");
    let e = err(ModelSession::new(&mistral, &bytes, Some(&tokenizer300())));
    assert!(e.contains("mistral") && e.contains("Llama family"), "{e}");
}

/// The worker's path: any family's file fed to `ModelLoader` as it downloads, then finished with
/// the tokenizer file the family needs, answers as the session loaded from the whole file, and
/// refuses what that session refuses.
#[test]
fn a_model_loaded_while_it_downloads_answers_as_the_whole_file_does() {
    let streamed = |cfg: &str, bytes: &[u8], tok: Option<&str>| {
        let mut loader = ModelLoader::new(cfg, Some(bytes.len() as u64))?;
        for piece in bytes.chunks(777) {
            loader.feed(piece)?;
        }
        loader.finish(tok)
    };
    let (cfg, bytes) = fixture("gqa");
    let tok = tokenizer300();
    let s = streamed(&cfg, &bytes, Some(&tok)).unwrap();
    assert_eq!(s.family(), Family::Llama);
    let (a, _) = block_on(s.analyze(&query("the cat sat"))).unwrap();
    let (b, _) = block_on(llama("gqa").analyze(&query("the cat sat"))).unwrap();
    assert_eq!((&a.tokens, &a.next), (&b.tokens, &b.next));
    let e = streamed(&cfg, &bytes, None).err().unwrap();
    assert!(e.to_string().starts_with("tokenizer.json is missing"), "{e}");
    let (cfg, bytes) = common::checkpoint("tests/fixtures/gpt2/a");
    let s = streamed(&cfg, &bytes, None).unwrap();
    assert_eq!(s.family(), Family::Gpt2);
    let e = streamed(&cfg.replace("\"gpt2\"", "\"bert\""), &bytes, None).err().unwrap();
    assert!(e.to_string().contains("bert"), "{e}");
}

#[test]
fn a_llama_session_on_the_gpu_answers_as_on_the_cpu() {
    let Some(gpu) = common::gpu().map(Rc::new) else { return };
    let (cpu, on_gpu) = (llama("gqa"), llama("gqa"));
    block_on(on_gpu.attach_gpu_with(gpu, false)).expect("the self-test passes");
    assert_eq!(on_gpu.backend(), "webgpu");
    let q = query("the cat sat");
    let (a, att_a) = block_on(cpu.analyze(&q)).unwrap();
    let (b, att_b) = block_on(on_gpu.analyze(&q)).unwrap();
    assert_eq!(a.tokens, b.tokens);
    for (x, y) in a.next.iter().zip(&b.next) {
        assert_eq!(x.id, y.id);
        assert!((x.prob - y.prob).abs() < 1e-4);
    }
    let diff = att_a.data().iter().zip(att_b.data()).fold(0f32, |m, (x, y)| m.max((x - y).abs()));
    assert!(diff < 1e-4, "attention differs by {diff}");
    // A GPU failure moves the session to the CPU with a notice, and the run is still answered.
    on_gpu.inject_gpu_fault();
    let (c, _) = block_on(on_gpu.analyze(&q)).expect("the CPU answers");
    assert_eq!(c.next[0].id, a.next[0].id);
    assert_eq!(on_gpu.backend(), "cpu");
    assert!(on_gpu.take_notice().is_some_and(|n| n.contains("now runs on the CPU")));
}

mod menu {
    //! The chapter's model menu: both families, the links that name them, the status line.
    use attention_live::demos::gpt2::status::{next, plan_load, shape_line, Event, Plan, Status};
    use attention_live::demos::gpt2::SPEC;
    use attention_live::demos::gpt2::{model_base, Model, Params};
    use attention_live::session::manifest::{smollm2_135m, HUB_SMOLLM2, SMOLLM2_PINS};
    use attention_live::session::protocol::{Family, Request, Source};
    use attention_live::state::query::parse_query;
    use attention_live::state::{Params as _, Values};

    fn from_link(query: &str) -> Params {
        Params::read(&Values::from_pairs(SPEC.id, SPEC.params, &parse_query(query)).0)
    }

    #[test]
    fn old_keys_keep_their_meaning_and_the_llama_models_have_their_own() {
        let keys: Vec<&str> = Model::OPTIONS.iter().map(|o| o.0).collect();
        assert_eq!(keys, ["stories", "induction", "gpt2", "url", "file", "trained", "smollm2", "stories-llama"]);
        assert_eq!(Model::Smollm2.label(), "SmolLM2-135M (Llama family, download ~270 MB)");
        assert_eq!(Model::StoriesLlama.label(), "Pet stories, Llama family (bundled)");
        assert_eq!(model_base("smollm2", ""), Some(HUB_SMOLLM2.to_string()));
        assert_eq!(model_base("smollm2", "http://127.0.0.1:8000/m"), Some("http://127.0.0.1:8000/m/".into()));
        assert_eq!(model_base("stories-llama", ""), Some("/models/stories-llama/".into()));
        assert_eq!(model_base("gpt2", ""), Some(attention_live::session::manifest::HUB_GPT2.to_string()));
        assert_eq!(model_base("stories", ""), Some("/models/stories/".into()));
        // A link's values: the new keys parse, and an old link's model is what it was.
        assert_eq!(from_link("gpt2.model=smollm2").model, Model::Smollm2);
        assert_eq!(from_link("gpt2.model=stories-llama").model, Model::StoriesLlama);
        assert_eq!(from_link("gpt2.model=url").model, Model::Url);
        assert_eq!(from_link("gpt2.model=gpt2").model, Model::Gpt2);
    }

    #[test]
    fn smollm2_downloads_from_the_hub_with_consent_and_is_kept() {
        let plan = plan_load(Model::Smollm2, "", true, &Status::Starting);
        let Plan::Send(Request::Load { name, base, expect, cache, only_cached, .. }) = plan else { panic!("{plan:?}") };
        assert_eq!((name.as_str(), base.as_str(), cache, only_cached), ("smollm2", HUB_SMOLLM2, true, true));
        // Pinned only once scripts/llama/pin_smollm2.py has filled the pins in; never a made-up pin.
        assert_eq!(expect, smollm2_135m());
        assert_eq!(expect.is_some(), SMOLLM2_PINS.is_some());
        if let Some(m) = expect {
            assert!(m.tokenizer.is_some(), "the third file is pinned too");
        }
        // The same files from a folder the reader gives are held to the same pins, as GPT-2 small's.
        let plan = plan_load(Model::Smollm2, "http://127.0.0.1:9/smol", false, &Status::Starting);
        let Plan::Send(Request::Load { base, expect: pins, only_cached, .. }) = plan else { panic!("{plan:?}") };
        assert_eq!((base.as_str(), pins, only_cached), ("http://127.0.0.1:9/smol/", smollm2_135m(), false));
        // The bundled Llama-family model: from the site, checked against what the build recorded.
        let plan = plan_load(Model::StoriesLlama, "", true, &Status::Starting);
        let Plan::Send(Request::Load { base, cache, only_cached, .. }) = plan else { panic!("{plan:?}") };
        assert_eq!((base.as_str(), cache, only_cached), ("/models/stories-llama/", false, false));
    }

    #[test]
    fn the_status_line_names_the_family_and_the_kv_heads() {
        assert_eq!(shape_line(Family::Llama, 30, 9, Some(3)), "Llama family · 30 layers × 9 heads (3 KV heads)");
        assert_eq!(shape_line(Family::Llama, 2, 6, Some(1)), "Llama family · 2 layers × 6 heads (1 KV head)");
        assert_eq!(shape_line(Family::Gpt2, 12, 12, None), "GPT-2 · 12 layers × 12 heads");
        let (cfg, bytes) = super::fixture("gqa");
        let s = super::ModelSession::new(&cfg, &bytes, Some(&super::tokenizer300())).unwrap();
        let loading = Status::Loading {
            name: "url".into(),
            phase: attention_live::session::protocol::Phase::Parse,
            loaded: 0,
            total: None,
            rate: None,
        };
        let ready = next(&loading, Event::Reply(&s.loaded("url", Source::Network)));
        assert!(
            matches!(ready, Status::Ready { family: Family::Llama, n_kv_head: Some(2), n_head: 6, .. }),
            "{ready:?}"
        );
    }
}

#[test]
fn the_thumbnails_of_a_long_prompt_are_the_captured_weights_pooled_on_either_backend() {
    use attention_live::numerics::attention::max_pool_into;
    use attention_live::session::LlamaSession;
    let (cfg, bytes) = fixture("gqa");
    let s = LlamaSession::new(&cfg, &bytes, &tokenizer300()).unwrap();
    let ids: Vec<u32> = (0..40u32).map(|i| (i * 37 + 5) % 300).collect();
    let opts = ForwardOptions { capture: Capture::All, ..Default::default() };
    let out = s.model.forward(&ids, &mut s.model.new_cache(), &opts).unwrap();
    let gpu = common::gpu().map(|g| block_on(GpuLlama::upload(Rc::new(g), &s.model)).expect("the upload"));
    for n in [16, 64] {
        let opts = ForwardOptions { thumbnails: Some(n), ..Default::default() };
        let mut runs = vec![("cpu", s.model.forward(&ids, &mut s.model.new_cache(), &opts).unwrap().thumbnails)];
        if let Some(g) = &gpu {
            runs.push(("gpu", block_on(g.forward(&ids, &mut g.new_cache(ids.len()), &opts)).unwrap().thumbnails));
        }
        for (backend, thumbs) in runs {
            assert_eq!(thumbs.len(), 2);
            for (l, th) in thumbs.iter().enumerate() {
                let side = 40.min(n);
                assert_eq!(th.dim(), (6, side, side));
                let full = out.attentions[l].as_ref().unwrap();
                for h in 0..6 {
                    let mut want = ndarray::Array2::<f32>::zeros((side, side));
                    max_pool_into(full.index_axis(ndarray::Axis(0), h), want.view_mut());
                    let th = th.index_axis(ndarray::Axis(0), h);
                    let diff = (&th - &want).iter().fold(0f32, |m, d| m.max(d.abs()));
                    assert!(diff < 1e-5, "{backend}: layer {l} head {h} at {n}: {diff}");
                }
            }
        }
    }
}
