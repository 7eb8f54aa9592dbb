//! The compute worker's messages (`session::protocol`): their JSON wire form, which the page and
//! the worker must read alike, and the packed attention buffer, encoded as the worker sends it
//! and decoded as the page reads it.

use attention_live::gpt2::tokenizer::Tokenizer;
use attention_live::gpt2::{Capture, ForwardOptions};
use attention_live::session::protocol::{
    Attention, AttentionLayout, Backend, BackendChoice, Phase, Query, Reply, Request, Source,
};
use attention_live::session::Gpt2Session as Session;
use ndarray::Array3;

use crate::common;

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
        let r = Reply::Progress { phase, loaded: 3, total: Some(9), load: 2 };
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
            family: Default::default(),
            n_layer: 4,
            n_head: 4,
            n_kv_head: None,
            n_embd: 128,
            n_positions: 128,
            params: 1,
            char_vocab: None,
            load: 1,
        };
        assert!(json(&r).get("char_vocab").is_none(), "GPT-2's replies are as before");
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
        Request::Load {
            name: "gpt2".into(),
            base: "/m/".into(),
            expect: None,
            cache: true,
            only_cached: true,
            load: 3,
        },
        Request::LoadBytes { name: "file".into(), config: "{}".into(), tokenizer: None, load: 4 },
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

#[test]
fn load_numbers_cross_the_wire_and_older_messages_still_read() {
    // A page or worker from before load numbers sends none: they read as 0 (no load in particular).
    let old = r#"{"type":"load","name":"stories","base":"/models/stories/"}"#;
    assert!(matches!(Request::decode(old), Ok(Request::Load { load: 0, .. })));
    let old = r#"{"type":"error","id":null,"message":"x"}"#;
    assert_eq!(Reply::decode(old).map(|r| r.load()), Ok(0));
    let r = Reply::Progress { phase: Phase::Download, loaded: 1, total: None, load: 7 };
    assert_eq!(over_the_wire(&r).load(), 7);
    let r = Reply::Error { id: None, message: "bad".into(), load: 9 };
    assert_eq!(over_the_wire(&r).load(), 9);
    // Replies about no load say 0.
    assert_eq!(Reply::Stopped { id: 3 }.load(), 0);
}

#[test]
fn download_checks_refuse_oversized_short_long_and_web_page_bodies() {
    use attention_live::session::download::*;
    // The reservation is capped whatever a server declares (3.25 GB, 2^64 - 1): it fits in 32 bits.
    assert_eq!(reserve_for(Some(3_250_000_000)), MAX_RESERVE_BYTES as usize);
    assert_eq!(reserve_for(Some(u64::MAX)), MAX_RESERVE_BYTES as usize);
    assert_eq!(reserve_for(Some(1000)), 1000);
    assert_eq!(reserve_for(None), 0);
    // Past the first reservation, a declared length is reserved at once and exactly: GPT-2 small's
    // 548,105,171 bytes in one buffer of that size, not 1 GiB reached by doubling.
    let small = 548_105_171u64;
    assert_eq!(grow_to(Some(small), 64 << 20, 65_536), small as usize);
    // More than declared, more than the maximum, or no length: doubling.
    assert_eq!(grow_to(Some(1000), 1000, 10), 2000);
    assert_eq!(grow_to(Some(MAX_FILE_BYTES + 1), 1 << 26, 10), 1 << 27);
    assert_eq!(grow_to(None, 100, 10), 200);
    assert_eq!(grow_to(None, 0, 10), 10);
    assert!(MAX_RESERVE_BYTES <= u32::MAX as u64 && MAX_FILE_BYTES < 1 << 32);
    // gpt2-large (3.25 GB) is refused before downloading, with the limit stated.
    let e = check_declared("https://h/large/model.safetensors", Some(3_250_000_000)).unwrap_err();
    assert!(e.contains("3.25 GB") && e.contains("1.6 GB at most"), "{e}");
    assert!(check_declared("u", Some(548_105_171)).is_ok() && check_declared("u", None).is_ok());
    // Without a Content-Length, the limit holds on the bytes received.
    assert!(check_received("u", MAX_FILE_BYTES + 1, None).is_err());
    assert!(check_received("u", MAX_FILE_BYTES, None).is_ok());
    // A body longer than declared is refused as it arrives; a shorter one at its end.
    assert!(check_received("u", 101, Some(100)).unwrap_err().contains("more than the 100 bytes"));
    assert!(check_received("u", 100, Some(100)).is_ok());
    assert!(check_complete("u", 60, Some(100)).unwrap_err().contains("closed early"));
    assert!(check_complete("u", 100, Some(100)).is_ok() && check_complete("u", 5, None).is_ok());
    // Sizes past 2^32 are compared as they are, not wrapped.
    assert!(check_received("u", (1 << 32) + 5, Some(5)).is_err());
    // An HTML page served with status 200, by its type or by its first bytes.
    assert!(is_web_page(Some("text/html; charset=utf-8"), b""));
    assert!(is_web_page(Some("Text/HTML"), b""));
    assert!(is_web_page(None, b"\n  <!DOCTYPE html><html>"));
    assert!(is_web_page(Some("application/octet-stream"), b"<html><body>404</body></html>"));
    assert!(!is_web_page(Some("application/json"), b"{\"n_layer\": 4}"));
    assert!(!is_web_page(None, &[0x40, 0, 0, 0, 0, 0, 0, 0, b'{', b'"']));
    assert!(!is_web_page(None, b""));
    assert!(web_page_error("https://h/m/").contains("the server sent a web page, not a model file"));
}

/// A generation stops at an end-of-text token, and its literal never reaches the prompt.
#[test]
fn generation_stops_at_end_of_text_without_writing_it() {
    use attention_live::session::protocol::Token;
    use attention_live::session::until_end_of_text;
    let token = |id: u32, text: &str| Token { id, text: text.into() };
    assert_eq!(until_end_of_text(&token(13, "."), " a cat.".into()), (" a cat.".into(), false));
    for end in ["<|endoftext|>", "</s>", "<|eot_id|>", "<|im_end|>"] {
        let (text, ended) = until_end_of_text(&token(2, end), format!(" a cat.{end}"));
        assert_eq!((text.as_str(), ended), (" a cat.", true), "{end}");
    }
    // The same characters inside a longer token are text, not an end.
    assert_eq!(until_end_of_text(&token(7, "</s>x"), "a</s>x".into()), ("a</s>x".into(), false));
}
