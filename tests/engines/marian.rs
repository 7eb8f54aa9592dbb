//! The Marian engine against Hugging Face transformers: fixtures made by
//! `scripts/marian/make_fixtures.py` (versions and seeds in that file) from small random
//! `MarianMTModel`s: `tied` (swish, embeddings scaled, the output layer the shared table) and
//! `untied` (relu, unscaled, an encoder with more layers and heads than the decoder, separate
//! tables). Every comparison runs in both CPU weight layouts: row-major, as natively, and packed,
//! as in the browser.

use crate::common::{floats, ids, max_err};
use attention_live::formats::safetensors::SafeTensors;
use attention_live::marian::weights::Weights;
use attention_live::marian::{BeamSettings, Config, Kind, Marian, Options};
use serde_json::Value;

/// Absolute tolerance on logits, attention weights and hidden states: the engine sums in f32 in
/// another order than PyTorch (a few ulps) and the fixture keeps 7 significant digits; any real
/// mistake (positions interleaved, a norm before instead of after, a missing bias) moves the
/// numbers by 1e-2 or more.
const TOL: f32 = 1e-4;

const NAMES: [&str; 2] = ["tied", "untied"];

/// The shared comparison, to this file's tolerance.
fn each_layer<'a>(ours: impl IntoIterator<Item = &'a [f32]>, theirs: &Value, what: &str) {
    crate::common::each_layer(ours, theirs, what, TOL)
}

fn fixture(name: &str) -> (String, Vec<u8>, Value) {
    let d = format!("{}/tests/fixtures/marian/{name}", env!("CARGO_MANIFEST_DIR"));
    let reference = std::fs::read_to_string(format!("{d}/reference.json")).unwrap();
    (
        std::fs::read_to_string(format!("{d}/config.json")).unwrap(),
        std::fs::read(format!("{d}/model.safetensors")).unwrap(),
        serde_json::from_str(&reference).unwrap(),
    )
}

/// The fixture's model in each CPU layout.
fn models(name: &str) -> Vec<Marian> {
    let (config, bytes, _) = fixture(name);
    let cfg = Config::from_json(&config).unwrap();
    let st = SafeTensors::parse(&bytes).unwrap();
    [false, true]
        .map(|packed| Marian::new(cfg.clone(), Weights::from_safetensors_in(&st, &cfg, packed).unwrap()))
        .into()
}

#[test]
fn the_encoder_and_the_decoder_match_transformers_with_every_attention() {
    for name in NAMES {
        let (_, _, r) = fixture(name);
        for m in models(name) {
            let opts = Options { attentions: true, hidden_states: true, all_logits: true, ..Default::default() };
            let enc = m.encode(&ids(&r["source"]), &opts).unwrap();
            each_layer(enc.hidden_states.iter().map(|h| h.as_slice().unwrap()), &r["encoder_hidden_states"], name);
            each_layer(enc.attentions.iter().map(|a| a.as_slice().unwrap()), &r["encoder_attentions"], name);
            let mut cache = m.new_cache(&enc);
            let dec = m.decode(&ids(&r["target"]), &mut cache, &opts).unwrap();
            each_layer(dec.hidden_states.iter().map(|h| h.as_slice().unwrap()), &r["decoder_hidden_states"], name);
            each_layer(dec.self_attentions.iter().map(|a| a.as_slice().unwrap()), &r["decoder_attentions"], name);
            each_layer(dec.cross_attentions.iter().map(|a| a.as_slice().unwrap()), &r["cross_attentions"], name);
            let err = max_err(dec.logits.iter(), &floats(&r["logits"]));
            assert!(err < TOL, "{name} logits: {err}");
        }
    }
}

/// One head of each kind knocked out at a time, as the fixture's forward pre-hook zeroes its slice
/// of `out_proj`'s input: the logits move (by far more than the tolerance) and match.
#[test]
fn a_knocked_out_head_of_each_kind_gives_transformers_logits() {
    for name in NAMES {
        let (_, _, r) = fixture(name);
        let m = &models(name)[1];
        let (source, target) = (ids(&r["source"]), ids(&r["target"]));
        for k in r["knock_outs"].as_array().unwrap() {
            let kind = match k["kind"].as_str().unwrap() {
                "encoder" => Kind::Encoder,
                "decoder" => Kind::Decoder,
                _ => Kind::Cross,
            };
            let at = (kind, k["layer"].as_u64().unwrap() as usize, k["head"].as_u64().unwrap() as usize);
            let opts = Options { all_logits: true, knock_out: vec![at], ..Default::default() };
            let enc = m.encode(&source, &opts).unwrap();
            let logits = m.decode(&target, &mut m.new_cache(&enc), &opts).unwrap().logits;
            let want = floats(&k["logits"]);
            assert!(max_err(logits.iter(), &want) < TOL, "{name} {at:?}");
            assert!(max_err(floats(&r["logits"]).iter(), &want) > 100.0 * TOL, "{name} {at:?} changes the logits");
        }
    }
}

#[test]
fn decoding_a_token_at_a_time_with_the_cache_gives_the_same_logits() {
    let (_, _, r) = fixture("tied");
    let m = &models("tied")[1];
    let enc = m.encode(&ids(&r["source"]), &Options::default()).unwrap();
    let target = ids(&r["target"]);
    let whole = m.decode(&target, &mut m.new_cache(&enc), &Options { all_logits: true, ..Default::default() }).unwrap();
    let mut cache = m.new_cache(&enc);
    for (i, &tok) in target.iter().enumerate() {
        let step = m.decode(&[tok], &mut cache, &Options::default()).unwrap();
        let err = max_err(step.logits.iter(), whole.logits.row(i).as_slice().unwrap());
        assert!(err < 1e-5, "position {i}: {err}");
    }
}

#[test]
fn greedy_decoding_and_beam_search_are_generates() {
    for name in NAMES {
        let (_, _, r) = fixture(name);
        let source = ids(&r["source"]);
        for m in models(name) {
            assert_eq!(m.greedy(&source, 10).unwrap(), ids(&r["greedy"]), "{name} greedy");
            let set = BeamSettings { beams: 4, max_new: 10, length_penalty: 1.0 };
            let (hyps, steps) = m.beam_search(&source, set).unwrap();
            let want = r["beam"].as_array().unwrap();
            assert_eq!(hyps.len(), want.len(), "{name}: hypotheses");
            for (i, (h, w)) in hyps.iter().zip(want).enumerate() {
                assert_eq!(h.tokens, ids(&w["tokens"]), "{name} hypothesis {i}");
                let score = w["score"].as_f64().unwrap() as f32;
                assert!((h.score - score).abs() < TOL, "{name} hypothesis {i}: {} against {score}", h.score);
            }
            assert!(!steps.is_empty() && steps.len() <= 10, "{name}: {} steps", steps.len());
        }
    }
}

#[test]
fn the_positions_are_marians_sines_then_cosines() {
    // Hand arithmetic: position 1 of width 4: angles 1 / 10000^(0/4) = 1 and 1 / 10000^(2/4) = 0.01.
    let p = attention_live::marian::model::sinusoidal_positions(3, 4);
    let want = [0f32, 0.0, 1.0, 1.0, 1f32.sin(), 0.01f32.sin(), 1f32.cos(), 0.01f32.cos()];
    assert_eq!(p.slice(ndarray::s![..2, ..]).iter().copied().collect::<Vec<_>>(), want);
}

#[test]
fn what_the_engine_does_not_run_is_refused_naming_the_field() {
    let (config, bytes, _) = fixture("tied");
    let refused = |c: &str| Marian::load(c, &bytes).err().map(|e| e.to_string()).unwrap_or_default();
    let e = refused(&config.replace("\"swish\"", "\"tanh\""));
    assert!(e.contains("activation_function \"tanh\""), "{e}");
    let e = refused(
        &config.replace("\"share_encoder_decoder_embeddings\": true", "\"share_encoder_decoder_embeddings\": false"),
    );
    assert!(e.contains("share_encoder_decoder_embeddings"), "{e}");
    let e = refused(&config.replace("\"decoder_attention_heads\": 4", "\"decoder_attention_heads\": 5"));
    assert!(e.contains("decoder_attention_heads = 5"), "{e}");
    let e = refused(&config.replace("\"encoder_layers\": 2", "\"encoder_layers\": 1"));
    assert!(e.contains("encoder_layers = 1 but the checkpoint has a layer 1"), "{e}");
    let e = refused(&config.replace("\"pad_token_id\": 119", "\"pad_token_id\": 120"));
    assert!(e.contains("pad_token_id"), "{e}");
    let e = refused(&config.replace("\"marian\"", "\"bart\""));
    assert!(e.contains("\"bart\""), "{e}");
}

mod tokenizer {
    use crate::common::ids;
    use attention_live::marian::Tokenizer;
    use serde_json::Value;

    fn tokenizer() -> (Tokenizer, Value) {
        let d = format!("{}/tests/fixtures/marian/tokenizer", env!("CARGO_MANIFEST_DIR"));
        let read = |f: &str| std::fs::read(format!("{d}/{f}")).unwrap();
        let vocab = String::from_utf8(read("vocab.json")).unwrap();
        let tok = Tokenizer::from_files(&read("source.spm"), &read("target.spm"), &vocab).unwrap();
        (tok, serde_json::from_slice(&read("cases.json")).unwrap())
    }

    /// `MarianTokenizer`'s ids (scripts/marian/make_tokenizer_fixture.py) on accents, combining
    /// marks, digits, punctuation runs, whitespace of every kind, characters the models lack, a
    /// long compound, full-width forms and ligatures (NFKC), a language code, special tokens
    /// written in the text and the empty text, as a source and as a target; and the decoding.
    #[test]
    fn ids_are_marian_tokenizers_on_edge_cases() {
        let (tok, fixture) = tokenizer();
        tok.check_vocab(fixture["vocab_size"].as_u64().unwrap() as usize).unwrap();
        for case in fixture["cases"].as_array().unwrap() {
            let text = case["text"].as_str().unwrap();
            assert_eq!(tok.encode_source(text), ids(&case["source"]), "source {text:?}");
            assert_eq!(tok.encode_target(text), ids(&case["target"]), "target {text:?}");
            assert_eq!(tok.decode(&ids(&case["source"])), case["decoded"].as_str().unwrap(), "decoded {text:?}");
        }
    }

    #[test]
    fn files_that_are_not_a_tokenizer_are_refused_with_the_reason() {
        let d = format!("{}/tests/fixtures/marian/tokenizer", env!("CARGO_MANIFEST_DIR"));
        let spm = std::fs::read(format!("{d}/source.spm")).unwrap();
        let vocab = std::fs::read_to_string(format!("{d}/vocab.json")).unwrap();
        let e = Tokenizer::from_files(b"<html>", &spm, &vocab).err().unwrap();
        assert!(e.0.starts_with("source.spm is not a SentencePiece model"), "{e}");
        let e = Tokenizer::from_files(&spm, &spm, "[1, 2]").err().unwrap();
        assert!(e.0.starts_with("vocab.json is not a map"), "{e}");
        let e = Tokenizer::from_files(&spm, &spm, r#"{"<unk>": 1}"#).err().unwrap();
        assert!(e.0.contains("no </s>"), "{e}");
        let (tok, _) = tokenizer();
        assert!(tok.check_vocab(100).is_err(), "439 tokens do not fit 100 rows");
    }
}

mod session {
    use crate::common::ids;
    use attention_live::marian::Options;
    use attention_live::session::translate::{AttentionKind, TranslateQuery, TranslationSession};

    fn session() -> (TranslationSession, serde_json::Value) {
        let root = env!("CARGO_MANIFEST_DIR");
        let read = |f: &str| std::fs::read(format!("{root}/tests/fixtures/marian/{f}")).unwrap();
        let text = |f: &str| String::from_utf8(read(f)).unwrap();
        let tokenizer =
            (&read("tokenizer/source.spm")[..], &read("tokenizer/target.spm")[..], &text("tokenizer/vocab.json")[..]);
        let s =
            TranslationSession::load(&text("translator/config.json"), &read("translator/model.safetensors"), tokenizer)
                .unwrap();
        (s, serde_json::from_slice(&read("translator/translations.json")).unwrap())
    }

    fn query(text: &str, beams: usize) -> TranslateQuery {
        TranslateQuery { id: 3, text: text.into(), beams, max_new: 12, knock_out: Vec::new() }
    }

    /// Text in, text out, as `transformers` does it: the tokenizer's ids, `generate` (greedy and 4
    /// beams), the decoded translation (scripts/marian/make_tokenizer_fixture.py).
    #[test]
    fn a_sentence_translates_as_transformers_translates_it() {
        let (s, fixture) = session();
        for case in fixture.as_array().unwrap() {
            let text = case["text"].as_str().unwrap();
            for beams in [1, 4] {
                let want = &case[format!("beams{beams}")];
                let t = s.translate(&query(text, beams)).unwrap();
                assert_eq!(t.source.iter().map(|t| t.id).collect::<Vec<_>>(), ids(&case["source"]), "{text}");
                let mut written = vec![want["tokens"][0].as_u64().unwrap() as u32];
                written.extend(t.target.iter().map(|t| t.id));
                assert_eq!(written, ids(&want["tokens"]), "{text}, {beams} beams");
                assert_eq!(t.text, want["text"].as_str().unwrap(), "{text}, {beams} beams");
                assert_eq!(t.hypotheses[0].text, t.text);
                assert_eq!(t.steps.is_empty(), beams == 1);
            }
        }
    }

    /// The three attentions have their shapes, their rows are distributions, and the decoder's are
    /// those of the steps that wrote each token (the cache's pass, row by row).
    #[test]
    fn the_three_attentions_are_those_of_the_steps_that_wrote_the_translation() {
        let (s, _) = session();
        let t = s.translate(&query("Where is the station?", 4)).unwrap();
        let (src, tgt) = (t.source.len(), t.target.len());
        assert_eq!((t.encoder.len(), t.decoder.len(), t.cross.len()), (2, 2, 2));
        assert_eq!(t.encoder[0].dim(), (4, src, src));
        assert_eq!(t.decoder[1].dim(), (4, tgt, tgt));
        assert_eq!(t.cross[1].dim(), (4, tgt, src));
        for a in t.encoder.iter().chain(&t.decoder).chain(&t.cross) {
            for row in a.rows() {
                assert!((row.sum() - 1.0).abs() < 1e-5);
            }
        }
        // Step by step with the cache, as the search ran.
        let m = &s.model;
        let opts = Options { attentions: true, ..Default::default() };
        let encoded = m.encode(&t.source.iter().map(|t| t.id).collect::<Vec<_>>(), &opts).unwrap();
        let mut cache = m.new_cache(&encoded);
        let mut input = m.config.decoder_start_token_id;
        for (i, tok) in t.target.iter().enumerate() {
            let step = m.decode(&[input], &mut cache, &opts).unwrap();
            for l in 0..2 {
                let cross = step.cross_attentions[l].index_axis(ndarray::Axis(1), 0).to_owned();
                let shown = t.cross[l].index_axis(ndarray::Axis(1), i).to_owned();
                assert!((&cross - &shown).iter().all(|d| d.abs() < 1e-5), "token {i} layer {l}");
            }
            input = tok.id;
        }
    }

    /// Cross-attention knocked out in the first decoder layer: the encoder does not see it, the
    /// second layer's self-attention (which reads the first layer's output) does.
    #[test]
    fn a_knocked_out_cross_attention_reaches_the_layers_after_it_and_not_the_encoder() {
        let (s, _) = session();
        let mut q = query("The cat sat on the mat.", 1);
        let plain = s.translate(&q).unwrap();
        q.knock_out = (0..4).map(|h| (AttentionKind::Cross, 0, h)).collect();
        let knocked = s.translate(&q).unwrap();
        assert_eq!(plain.encoder, knocked.encoder);
        assert_eq!(plain.decoder[0].dim(), knocked.decoder[0].dim());
        assert!(plain.decoder[1] != knocked.decoder[1] || plain.target != knocked.target);
    }
}

/// The bundled model (static/models/dates-marian, F16, trained by scripts/marian/train_bundled.py):
/// what the page translates is what `transformers` translates with the shipped files, greedy and
/// with 4 beams, and the last layer's cross-attention is the same.
mod bundled {
    use crate::common::{floats, ids, max_err};
    use attention_live::session::translate::{TranslateQuery, TranslationSession};

    #[test]
    fn the_bundled_model_translates_dates_as_transformers_does() {
        let root = env!("CARGO_MANIFEST_DIR");
        let read = |f: &str| std::fs::read(format!("{root}/static/models/dates-marian/{f}")).unwrap();
        let text = |f: &str| String::from_utf8(read(f)).unwrap();
        let files = (&read("source.spm")[..], &read("target.spm")[..], &text("vocab.json")[..]);
        let s = TranslationSession::load(&text("config.json"), &read("model.safetensors"), files).unwrap();
        let path = format!("{root}/tests/fixtures/marian/dates/reference.json");
        let cases: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for case in cases.as_array().unwrap() {
            let source = case["text"].as_str().unwrap();
            for beams in [1, 4] {
                let want = &case[format!("beams{beams}")];
                let q = TranslateQuery { id: 1, text: source.into(), beams, max_new: 16, knock_out: Vec::new() };
                let t = s.translate(&q).unwrap();
                assert_eq!(t.source.iter().map(|t| t.id).collect::<Vec<_>>(), ids(&case["source"]), "{source}");
                assert_eq!(t.target.iter().map(|t| t.id).collect::<Vec<_>>(), ids(&want["tokens"])[1..], "{source}");
                assert_eq!(t.text, want["text"].as_str().unwrap(), "{source}, {beams} beams");
                if beams == 4 {
                    let cross = t.cross.last().unwrap();
                    let err = max_err(cross.iter(), &floats(&case["cross_attentions_last_layer"]));
                    assert!(err < 1e-4, "{source}: cross-attention off by {err}");
                }
            }
        }
    }
}
