//! The compute worker's messages (`gpt2::protocol`): their JSON wire form, which the page and
//! the worker must read alike, and the packed attention buffer, encoded as the worker sends it
//! and decoded as the page reads it.
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

use attention_live::gpt2::protocol::{
    Attention, AttentionLayout, Backend, BackendChoice, Phase, Query, Reply, Request, Source,
};
use attention_live::gpt2::session::Session;
use attention_live::gpt2::tokenizer::Tokenizer;
use attention_live::gpt2::{Capture, ForwardOptions};
use ndarray::Array3;

mod common;

fn induction() -> Session {
    let (cfg, bytes) = common::checkpoint("static/models/induction");
    Session::new(&cfg, &bytes).unwrap()
}

/// Sends `reply` as the worker does and reads it as the page does.
fn over_the_wire(reply: &Reply) -> Reply {
    Reply::decode(&reply.encode()).expect("the page reads what the worker writes")
}

#[test]
fn phases_sources_and_backends_keep_their_wire_names() {
    let json = |r: &Reply| serde_json::to_value(r).unwrap();
    for (phase, name) in [
        (Phase::Download, "download"),
        (Phase::Cache, "cache"),
        (Phase::Verify, "verify"),
        (Phase::Parse, "parse"),
        (Phase::Gpu, "gpu"),
    ] {
        let r = Reply::Progress { phase, loaded: 3, total: Some(9) };
        assert_eq!(json(&r)["phase"], name);
        assert_eq!(phase.as_str(), name);
        assert_eq!(over_the_wire(&r), r);
    }
    for (source, name) in [
        (Source::Network, "network"),
        (Source::NetworkStored, "network-stored"),
        (Source::NetworkUnstored, "network-unstored"),
        (Source::Cache, "cache"),
        (Source::File, "file"),
    ] {
        let r = Reply::Loaded {
            name: "stories".into(),
            source,
            n_layer: 4,
            n_head: 4,
            n_embd: 128,
            n_positions: 128,
            params: 1,
        };
        assert_eq!(json(&r)["source"], name);
        assert_eq!(source.as_str(), name);
        assert_eq!(over_the_wire(&r), r);
    }
    for (backend, name) in [(Backend::Webgpu, "webgpu"), (Backend::Cpu, "cpu")] {
        let r = Reply::Backend { backend, detail: "x".into(), notice: None };
        assert_eq!(json(&r)["backend"], name);
        assert_eq!(backend.as_str(), name);
        assert_eq!(over_the_wire(&r), r);
    }
    // A panic reaches the page as a message of its own, answering no request.
    let crashed = Reply::Crashed { message: "panicked at src/gpt2/ops.rs".into() };
    assert_eq!(json(&crashed)["type"], "crashed");
    assert_eq!((over_the_wire(&crashed), crashed.id()), (crashed, None));
    // A phase the page does not know is an error it can show, not a panic.
    let bad = r#"{"type":"progress","phase":"upload","loaded":0,"total":null}"#;
    assert!(Reply::decode(bad).unwrap_err().contains("unreadable reply"));
}

#[test]
fn requests_round_trip_and_carry_their_ids() {
    let q = Query { id: 4, prompt: "Q F K".into(), layer: 1, ablate: vec![(1, 3)], top: 10, ..Default::default() };
    let mut all = vec![
        Request::Load { name: "gpt2".into(), base: "/m/".into(), expect: None, cache: true, only_cached: true },
        Request::LoadBytes { name: "file".into(), config: "{}".into() },
        Request::Backend { choice: BackendChoice::Webgpu, fault: false },
        Request::Analyze(q.clone()),
        Request::Generate { query: q.clone(), steps: 20 },
        Request::Stop,
        Request::AttentionBench { id: 5, n: 128, d: 64 },
        Request::HeadQkv { id: 6, prompt: "x".into(), layer: 0, head: 1 },
    ];
    let ids: Vec<_> = all.iter().map(Request::id).collect();
    assert_eq!(ids, [None, None, None, Some(4), Some(4), None, Some(5), Some(6)]);
    for r in &mut all {
        assert_eq!(&Request::decode(&r.encode().unwrap()).unwrap(), r);
        r.set_id(99);
        assert!(r.id().is_none() || r.id() == Some(99));
    }
    // The choice travels as the URL value the page shows.
    assert_eq!(
        Request::Backend { choice: BackendChoice::Cpu, fault: false }.encode().unwrap(),
        r#"{"type":"backend","choice":"cpu","fault":false}"#
    );
    assert!(Request::decode(r#"{"type":"analyse"}"#).unwrap_err().contains("could not read a request"));
}

#[test]
fn an_analysis_and_its_attention_buffer_cross_the_wire_intact() {
    let s = induction();
    let q = Query { id: 7, prompt: "Q F K B Q F K".into(), top: 5, ..Default::default() };
    let (a, attention) = pollster::block_on(s.analyze(&q)).unwrap();
    let t = a.tokens.len();
    assert_eq!(a.attention, *attention.layout());
    assert_eq!((a.attention.n_layer, a.attention.n_head, a.attention.t), (2, 4, t));
    assert_eq!(a.attention.thumb, None, "a short prompt sends every layer in full");

    // The worker: the analysis as JSON, the weights as a bare buffer beside it.
    let (_, buffer) = attention.clone().into_parts();
    let Reply::Analysis(got) = over_the_wire(&Reply::Analysis(a.clone())) else { panic!("an analysis") };
    assert_eq!(got, a);
    // The page: the layout from the JSON and the buffer give back the same weights.
    let back = Attention::decode(got.attention, buffer).unwrap();
    assert_eq!(back, attention);

    // Each (layer, head, query, key) lands where the forward pass put it.
    let ids = Tokenizer::gpt2().encode(&q.prompt);
    let opts = ForwardOptions { capture: Capture::All, ..Default::default() };
    let out = s.model.forward(&ids, &mut s.model.new_cache(), &opts).unwrap();
    for (l, a) in out.attentions.iter().enumerate() {
        let a = a.as_ref().unwrap();
        for h in 0..4 {
            assert_eq!(back.full(l, h).unwrap(), a.index_axis(ndarray::Axis(0), h));
            assert_eq!(back.weight(l, h, t - 1, 2), Some(a[[h, t - 1, 2]]));
            assert_eq!(back.head_matrix(l, h), back.full(l, h), "no thumbnails: the full matrix");
        }
    }
    assert_eq!(back.weight(2, 0, 0, 0), None, "no third layer");
    assert_eq!(back.weight(0, 4, 0, 0), None, "no fifth head");
    assert_eq!(back.weight(0, 0, t, 0), None, "no query past the prompt");
}

#[test]
fn a_long_prompts_buffer_holds_one_layer_in_full_and_thumbnails_of_all() {
    // What the worker sends when not every layer fits: the selected layer, then every layer's
    // max-pooled thumbnail.
    let s = induction();
    let ids = Tokenizer::gpt2().encode(&"A B C D ".repeat(10));
    let t = ids.len();
    let opts = ForwardOptions { capture: Capture::Layer(1), thumbnails: Some(8), ..Default::default() };
    let out = s.model.forward(&ids, &mut s.model.new_cache(), &opts).unwrap();
    let sent = Attention::encode(2, 4, t, &out.attentions, &out.thumbnails);
    let (layout, buffer) = sent.into_parts();
    assert_eq!(layout.layers, [1]);
    assert_eq!(layout.thumb, Some((8, 8)));
    assert_eq!(layout.len(), Some(4 * t * t + 2 * 4 * 8 * 8));
    let got = Attention::decode(layout, buffer).unwrap();
    for h in 0..4 {
        let full = out.attentions[1].as_ref().unwrap();
        assert_eq!(got.full(1, h).unwrap(), full.index_axis(ndarray::Axis(0), h));
        assert_eq!(got.full(0, h), None, "layer 0 is not sent in full");
        for l in 0..2 {
            assert_eq!(got.thumbnail(l, h).unwrap(), out.thumbnails[l].index_axis(ndarray::Axis(0), h));
        }
        // The model view draws the full matrix where it has one, the thumbnail elsewhere.
        assert_eq!(got.head_matrix(1, h).unwrap().dim(), (t, t));
        assert_eq!(got.head_matrix(0, h).unwrap().dim(), (8, 8));
    }
}

#[test]
fn a_buffer_that_does_not_fit_its_layout_is_refused_with_a_reason() {
    let layout = AttentionLayout { n_layer: 2, n_head: 1, t: 2, layers: vec![0, 1], thumb: None };
    assert!(Attention::decode(layout.clone(), vec![0.25; 8]).is_ok());
    let short = Attention::decode(layout.clone(), vec![0.25; 7]).unwrap_err();
    assert!(short.contains("holds 7 weights") && short.contains("describes 8"), "{short}");
    let outside = AttentionLayout { layers: vec![0, 2], ..layout.clone() };
    assert!(Attention::decode(outside, vec![0.25; 8]).unwrap_err().contains("layers [0, 2] of a 2-layer model"));
    let unsorted = AttentionLayout { layers: vec![1, 0], ..layout.clone() };
    assert!(Attention::decode(unsorted, vec![0.25; 8]).is_err());
    let huge = AttentionLayout { t: usize::MAX / 2, ..layout };
    assert!(Attention::decode(huge, Vec::new()).unwrap_err().contains("overflow"));
    // An analysis with nothing captured is an empty buffer, still well formed.
    let none = Attention::encode(2, 1, 2, &[None, None], &[]);
    assert!(none.layout().is_empty() && none.data().is_empty());
    assert_eq!(Attention::decode(none.layout().clone(), Vec::new()).unwrap(), none);
    let one = Attention::encode(1, 1, 2, &[Some(Array3::from_elem((1, 2, 2), 0.5))], &[]);
    assert_eq!(one.weight(0, 0, 1, 1), Some(0.5));
}
