//! The Marian translation engine on the GPU backend (Mesa's lavapipe here and in CI) against
//! Hugging Face transformers: the fixtures of `tests/engines/marian.rs`
//! (`scripts/marian/make_fixtures.py`: `tied`, swish, scaled embeddings, the output layer the
//! shared table; `untied`, relu, more encoder than decoder layers and heads, separate tables), to
//! the same tolerance as the CPU.
//!
//! The test command fails them where no adapter exists (`common::gpu`).

use crate::common::{self, floats, ids, max_err};

use std::rc::Rc;
use std::sync::Arc;

use attention_live::marian::gpu::GpuMarian;
use attention_live::marian::{BeamSettings, Kind, Marian, Options};
use serde_json::Value;

/// As `tests/engines/marian.rs`: the kernels sum in f32 in another order than PyTorch and the
/// fixture keeps 7 significant digits; a real mistake moves the numbers by 1e-2 or more.
const TOL: f32 = 1e-4;

const NAMES: [&str; 2] = ["tied", "untied"];

fn reference(name: &str) -> (Marian, Value) {
    let d = format!("{}/tests/fixtures/marian/{name}", env!("CARGO_MANIFEST_DIR"));
    let config = std::fs::read_to_string(format!("{d}/config.json")).unwrap();
    let model = Marian::load(&config, &std::fs::read(format!("{d}/model.safetensors")).unwrap()).unwrap();
    let r = serde_json::from_str(&std::fs::read_to_string(format!("{d}/reference.json")).unwrap()).unwrap();
    (model, r)
}

/// The fixture's model on the GPU, or None without an adapter (`common::gpu`).
fn on_gpu(name: &str) -> Option<(GpuMarian, Value)> {
    let gpu = Rc::new(common::gpu()?);
    let (cpu, r) = reference(name);
    Some((pollster::block_on(GpuMarian::upload(gpu, Arc::new(cpu))).expect("upload to the GPU"), r))
}

/// The shared comparison, to this file's tolerance.
fn each_layer<'a>(ours: impl IntoIterator<Item = &'a [f32]>, theirs: &Value, what: &str) {
    common::each_layer(ours, theirs, what, TOL)
}

/// The encoder, the decoder over the whole target and every attention of each kind; then the
/// target again a token at a time through the GPU cache, each step's logits the fixture's row.
#[test]
fn the_encoder_and_the_decoder_match_transformers_on_the_gpu() {
    for name in NAMES {
        let Some((m, r)) = on_gpu(name) else { return };
        let opts = Options { attentions: true, hidden_states: true, all_logits: true, ..Default::default() };
        let (source, target) = (ids(&r["source"]), ids(&r["target"]));
        let (enc, cache) = pollster::block_on(m.encode(&source, &opts, target.len())).unwrap();
        each_layer(enc.hidden_states.iter().map(|h| h.as_slice().unwrap()), &r["encoder_hidden_states"], name);
        each_layer(enc.attentions.iter().map(|a| a.as_slice().unwrap()), &r["encoder_attentions"], name);
        let mut caches = [cache];
        let dec = pollster::block_on(m.decode(&target, &mut caches, &opts)).unwrap();
        each_layer(dec.hidden_states.iter().map(|h| h.as_slice().unwrap()), &r["decoder_hidden_states"], name);
        each_layer(dec.self_attentions.iter().map(|a| a.as_slice().unwrap()), &r["decoder_attentions"], name);
        each_layer(dec.cross_attentions.iter().map(|a| a.as_slice().unwrap()), &r["cross_attentions"], name);
        let want = floats(&r["logits"]);
        let err = max_err(dec.logits.iter(), &want);
        eprintln!("{name} on {}: logits differ by at most {err:.1e}", m.gpu.name);
        assert!(err < TOL, "{name} logits: {err}");
        let (_, cache) = pollster::block_on(m.encode(&source, &Options::default(), target.len())).unwrap();
        let mut caches = [cache];
        let vocab = m.model.config.vocab_size;
        for (i, &tok) in target.iter().enumerate() {
            let step = pollster::block_on(m.decode(&[tok], &mut caches, &Options::default())).unwrap();
            let err = max_err(step.logits.iter(), &want[i * vocab..(i + 1) * vocab]);
            assert!(err < TOL, "{name}: position {i} through the cache: {err}");
        }
    }
}

/// One head of each kind knocked out at a time, as the fixture's forward pre-hook zeroes it.
#[test]
fn a_knocked_out_head_of_each_kind_gives_transformers_logits_on_the_gpu() {
    for name in NAMES {
        let Some((m, r)) = on_gpu(name) else { return };
        let (source, target) = (ids(&r["source"]), ids(&r["target"]));
        for k in r["knock_outs"].as_array().unwrap() {
            let kind = match k["kind"].as_str().unwrap() {
                "encoder" => Kind::Encoder,
                "decoder" => Kind::Decoder,
                _ => Kind::Cross,
            };
            let at = (kind, k["layer"].as_u64().unwrap() as usize, k["head"].as_u64().unwrap() as usize);
            let opts = Options { all_logits: true, knock_out: vec![at], ..Default::default() };
            let (_, cache) = pollster::block_on(m.encode(&source, &opts, target.len())).unwrap();
            let logits = pollster::block_on(m.decode(&target, &mut [cache], &opts)).unwrap().logits;
            let want = floats(&k["logits"]);
            assert!(max_err(logits.iter(), &want) < TOL, "{name} {at:?}");
            assert!(max_err(floats(&r["logits"]).iter(), &want) > 100.0 * TOL, "{name} {at:?} changes the logits");
        }
    }
}

/// Greedy decoding and beam search (4 beams, their caches reordered on the device) give
/// `generate`'s tokens and scores.
#[test]
fn greedy_decoding_and_beam_search_on_the_gpu_are_generates() {
    for name in NAMES {
        let Some((m, r)) = on_gpu(name) else { return };
        let source = ids(&r["source"]);
        let greedy = pollster::block_on(m.greedy_with(&source, 10, &Options::default())).unwrap();
        assert_eq!(greedy, ids(&r["greedy"]), "{name} greedy");
        let set = BeamSettings { beams: 4, max_new: 10, length_penalty: 1.0 };
        let (hyps, steps) = pollster::block_on(m.beam_search_with(&source, set, &Options::default())).unwrap();
        let want = r["beam"].as_array().unwrap();
        assert_eq!(hyps.len(), want.len(), "{name}: hypotheses");
        for (i, (h, w)) in hyps.iter().zip(want).enumerate() {
            assert_eq!(h.tokens, ids(&w["tokens"]), "{name} hypothesis {i}");
            let score = w["score"].as_f64().unwrap() as f32;
            assert!((h.score - score).abs() < TOL, "{name} hypothesis {i}: {} against {score}", h.score);
        }
        // The same steps as the CPU's search, hypothesis for hypothesis.
        let (cpu, _) = reference(name);
        let (_, cpu_steps) = cpu.beam_search(&source, set).unwrap();
        assert_eq!(steps.len(), cpu_steps.len(), "{name}: steps");
        for (a, b) in steps.iter().zip(&cpu_steps) {
            let tokens =
                |s: &attention_live::marian::Step| s.running.iter().map(|h| h.tokens.clone()).collect::<Vec<_>>();
            assert_eq!(tokens(a), tokens(b), "{name}: running beams");
        }
    }
}

/// The page's translation session on the GPU: each sentence of the tokenizer fixture, greedy and
/// with 4 beams, gives the CPU's translation, hypotheses and attentions; a GPU failure moves the
/// session to the CPU, which answers that query and says so once.
#[test]
fn the_translation_session_runs_on_the_gpu_and_falls_back_to_the_cpu() {
    use attention_live::session::translate::{AttentionKind, TranslateQuery, TranslationSession};
    let Some(gpu) = common::gpu() else { return };
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |f: &str| std::fs::read(format!("{root}/tests/fixtures/marian/{f}")).unwrap();
    let text = |f: &str| String::from_utf8(read(f)).unwrap();
    let tokenizer =
        (&read("tokenizer/source.spm")[..], &read("tokenizer/target.spm")[..], &text("tokenizer/vocab.json")[..]);
    let s = TranslationSession::load(&text("translator/config.json"), &read("translator/model.safetensors"), tokenizer)
        .unwrap();
    pollster::block_on(s.attach_gpu(Rc::new(gpu))).expect("the self-test passes");
    let fixture: Value = serde_json::from_slice(&read("translator/translations.json")).unwrap();
    for case in fixture.as_array().unwrap() {
        for beams in [1, 4] {
            let knock_out = vec![(AttentionKind::Cross, 1, 2)];
            let q =
                TranslateQuery { id: 1, text: case["text"].as_str().unwrap().into(), beams, max_new: 12, knock_out };
            let on_gpu = pollster::block_on(s.answer(&q, &|| 0.0)).unwrap();
            let on_cpu = s.translate(&q).unwrap();
            assert!(on_gpu.backend.starts_with("WebGPU"), "{}", on_gpu.backend);
            assert_eq!((&on_gpu.text, &on_gpu.target), (&on_cpu.text, &on_cpu.target), "{beams} beams");
            assert_eq!(on_gpu.hypotheses.len(), on_cpu.hypotheses.len());
            for (a, b) in on_gpu.hypotheses.iter().zip(&on_cpu.hypotheses) {
                assert_eq!(a.text, b.text);
                assert!((a.score.unwrap_or(0.0) - b.score.unwrap_or(0.0)).abs() < TOL);
            }
            for (a, b) in
                [(&on_gpu.encoder, &on_cpu.encoder), (&on_gpu.decoder, &on_cpu.decoder), (&on_gpu.cross, &on_cpu.cross)]
            {
                assert_eq!(a.len(), b.len());
                for (x, y) in a.iter().zip(b.iter()) {
                    assert!(max_err(x.iter(), y.as_slice().unwrap()) < TOL);
                }
            }
        }
    }
    let q =
        TranslateQuery { id: 2, text: "Where is the station?".into(), beams: 4, max_new: 12, knock_out: Vec::new() };
    s.inject_gpu_fault();
    let fell_back = pollster::block_on(s.answer(&q, &|| 0.0)).unwrap();
    assert_eq!(fell_back.backend, "the CPU");
    assert!(fell_back.notice.as_deref().is_some_and(|n| n.starts_with("WebGPU failed (")), "{:?}", fell_back.notice);
    assert_eq!(fell_back.text, s.translate(&q).unwrap().text);
    let after = pollster::block_on(s.answer(&q, &|| 0.0)).unwrap();
    assert_eq!((after.backend.as_str(), after.notice), ("the CPU", None), "once on the CPU, it says so once");
}
