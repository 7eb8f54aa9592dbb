//! The demos that read a bundled model's insides through the compute worker's session, run
//! natively on the same files (`Demo::load`), and the numbers the chapters quote from them: RoPE
//! in a real model (positional), the measured KV cache and the instruction's reach (efficient).

use attention_live::demos::Demo;
use attention_live::state::Params as _;

use crate::common;
use common::static_file as read;

fn chapter(name: &str) -> String {
    std::fs::read_to_string(format!("{}/chapters/{name}.md", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn says(text: &str, quote: &str) {
    assert!(text.contains(quote), "the chapter should say “{quote}”");
}

fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

mod rope_model {
    use super::*;
    use attention_live::demos::rope_model::{analyze, prompt, Model, Params, RopeModelDemo};
    use attention_live::session::protocol::{HeadQkv, Token};

    fn scores(model: Model, layer: usize) -> serde_json::Value {
        let mut p = Params::defaults();
        (p.model, p.layer) = (model, layer);
        RopeModelDemo::load(&p, &mut read).unwrap().unwrap()
    }

    /// positional.md, "In a real model": with RoPE the diagonals are constant to float rounding
    /// (about 1e-6 of the range); with GPT-2's learned wpe they are not (over half the range).
    #[test]
    fn only_the_offset_matters_with_rope_and_not_with_wpe() {
        let text = chapter("positional");
        let llama = scores(Model::StoriesLlama, 0);
        assert_eq!(llama["one_token"], true);
        assert_eq!(llama["tokens"].as_array().unwrap().len(), 48);
        let (spread, range) = (num(&llama["spread"]), num(&llama["range"]));
        assert!(spread < 1e-5 * range, "spread {spread} of {range}");
        assert_eq!(format!("{range:.2}"), "0.73");
        // Natively 6.1e-7; the page's build (fused multiply-adds, packed weights) rounds differently.
        assert!(spread < 1e-6, "{spread}");
        says(&text, "the scores span 0.73, and along any diagonal they vary by less than $10^{-6}$, about a millionth");
        let deep = scores(Model::StoriesLlama, 3);
        // "A few millionths": natively 2.2e-6.
        let deep = num(&deep["spread"]);
        assert!((1e-6..5e-6).contains(&deep), "{deep}");
        says(&text, "(a few millionths in layer 3)");
        let gpt2 = scores(Model::Stories, 0);
        let (spread, range) = (num(&gpt2["spread"]), num(&gpt2["range"]));
        assert!(spread > 0.5 * range, "spread {spread} of {range}");
        assert_eq!(format!("{spread:.2} {range:.1}"), "1.03 1.9");
        says(&text, "vary by 1.03 along a diagonal, more than half of their range of 1.9");
        // "Try this": on the main diagonal a copy meets itself, and with wpe that still moves.
        let main = num(&gpt2["spread_by_offset"][0]);
        assert!(main > 0.1 * range, "the main diagonal's spread {main} of {range}");
        says(&text, "look along the main diagonal, where a copy meets itself: its score still changes");
    }

    /// The spread compares pairs with the same tokens only: a two-token word repeating with
    /// period 2 is compared copy with copy, and a score moved by hand shows up as a spread.
    #[test]
    fn the_spread_compares_like_with_like_and_sees_a_changed_score() {
        let d = 2;
        // Queries and keys that depend on the token only (a position-free model): [1, 0] and [0, 1].
        let ids: Vec<u32> = (0..6).map(|i| i % 2).collect();
        let vec_of = |id: u32| if id == 0 { [1.0f32, 0.0] } else { [0.0, 1.0] };
        let mut h = HeadQkv {
            id: 0,
            tokens: ids.iter().map(|&id| Token { id, text: format!("t{id}") }).collect(),
            layer: 0,
            head: 0,
            d,
            q: ids.iter().flat_map(|&i| vec_of(i)).collect(),
            k: ids.iter().flat_map(|&i| vec_of(i)).collect(),
            v: vec![0.0; 12],
        };
        let s = analyze(&h).unwrap();
        assert!(!s.one_token);
        assert_eq!(s.spread, 0.0, "content-only scores are constant within each group");
        assert!(s.range > 0.0);
        h.q[4 * d] = 2.0; // query 4 now scores differently from the other copies of its token
        assert!(analyze(&h).unwrap().spread > 0.5);
        h.q.pop();
        assert!(analyze(&h).is_err(), "a short message is refused, not read out of bounds");
        assert_eq!(prompt("  dog ", 3), " dog dog dog");
        assert_eq!(prompt("", 2), " cat cat");
    }
}

mod kv_cache {
    use super::*;
    use attention_live::demos::kv_cache::{measured_text, KvCacheDemo, Params, RealModel};

    fn measured(model: RealModel) -> serde_json::Value {
        let mut p = Params::defaults();
        p.model = model;
        KvCacheDemo::load(&p, &mut read).unwrap().unwrap()["measured"].clone()
    }

    /// efficient.md: the engines' caches hold what the formula says, and grouped-query attention
    /// halves the Llama-family model's (4 query heads, 2 KV heads).
    #[test]
    fn the_measured_caches_are_the_formulas() {
        let text = chapter("efficient");
        let llama = measured(RealModel::StoriesLlama);
        let c = &llama["cache"];
        // 2 · 4 layers · 2 KV heads · 32 · 37 positions · 4 bytes = 75,776
        assert_eq!(
            (c["layers"].as_u64(), c["kv_heads"].as_u64(), c["head_size"].as_u64()),
            (Some(4), Some(2), Some(32))
        );
        assert_eq!((c["positions"].as_u64(), c["bytes"].as_u64()), (Some(37), Some(2 * 4 * 2 * 32 * 37 * 4)));
        assert_eq!(llama["formula"], c["bytes"]);
        assert_eq!(llama["one_per_head"].as_u64(), Some(151_552));
        assert_eq!(num(&llama["saving"]), 2.0);
        says(&text, "The Llama-family model reads the text as 37 tokens and keeps 75,776 bytes: 2 × 4 layers × 2");
        says(&text, "that is half of the 151,552 bytes");
        let gpt2 = measured(RealModel::Stories);
        // 2 · 4 layers · 4 heads · 32 · 26 positions · 4 bytes = 106,496
        assert_eq!(gpt2["cache"]["bytes"].as_u64(), Some(2 * 4 * 4 * 32 * 26 * 4));
        assert_eq!(gpt2["formula"], gpt2["cache"]["bytes"]);
        assert_eq!(num(&gpt2["saving"]), 1.0);
        says(&text, "stores 106,496 bytes for the same text, which it reads as 26 tokens");
    }

    #[test]
    fn the_readout_says_when_the_formula_fails() {
        use attention_live::demos::kv_cache::measured as m;
        use attention_live::session::protocol::CacheInfo;
        let c = CacheInfo { layers: 4, kv_heads: 2, head_size: 32, positions: 37, bytes_per_value: 4, bytes: 75_776 };
        let good = measured_text(&m(RealModel::StoriesLlama, 4, &c), "the model");
        assert!(good.contains("exactly the formula") && good.contains("151,552 bytes: 2× more"), "{good}");
        let bad = measured_text(&m(RealModel::StoriesLlama, 4, &CacheInfo { bytes: 75_000, ..c }), "the model");
        assert!(bad.contains("NOT the formula"), "{bad}");
    }
}

mod instruction_reach {
    use super::*;
    use attention_live::demos::instruction_reach::{prompt, token_ranges, InstructionReachDemo, Model, Params};

    /// (turns, best head's share, even share) for each prompt.
    fn reach(model: Model) -> Vec<(u64, f64, f64)> {
        let mut p = Params::defaults();
        p.model = model;
        let out = InstructionReachDemo::load(&p, &mut read).unwrap().unwrap();
        let best = |r: &serde_json::Value| {
            r["share"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|l| l.as_array().unwrap().iter().map(num))
                .fold(0.0, f64::max)
        };
        out["reaches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["turns"].as_u64().unwrap(), best(r), num(&r["even"])))
            .collect()
    }

    /// efficient.md, "Attention in today's models": the instruction's share falls with the turns
    /// in between, about as fast as an even spread's.
    #[test]
    fn the_instruction_fades_like_an_even_share() {
        let text = chapter("efficient");
        let pct = |x: f64| format!("{:.0}%", 100.0 * x);
        let llama = reach(Model::StoriesLlama);
        assert_eq!(llama.len(), 9);
        assert!(llama.windows(2).all(|w| w[1].2 < w[0].2), "the even share falls as the text grows");
        let (first, last) = (llama[0], llama[8]);
        assert_eq!((pct(first.1), pct(last.1), pct(last.2)), ("81%".into(), "18%".into(), "20%".into()));
        says(&text, "gives the instruction 81% of the last turn's attention; with 8 turns in between, 18%,");
        says(&text, "18%, where spreading attention evenly would give 20%");
        let gpt2 = reach(Model::Stories);
        let (first, last) = (gpt2[0], gpt2[8]);
        assert_eq!((pct(first.1), pct(last.1), pct(last.2)), ("79%".into(), "16%".into(), "13%".into()));
        says(&text, "The bundled GPT-2 goes from 79% to 16% (evenly: 13%)");
        for (_, best, even) in llama.iter().chain(&gpt2) {
            assert!(*best < 2.0 * even && *best > 0.5 * even, "no head holds on to the instruction: {best} vs {even}");
        }
    }

    #[test]
    fn tokens_are_assigned_to_the_instruction_and_the_last_turn() {
        let p = prompt(1);
        assert!(p.text.starts_with("Every story") && p.text.ends_with("sleeps in the sun."));
        let words: Vec<String> = p.text.split_inclusive(' ').map(String::from).collect();
        let (instr, last) = token_ranges(&p, &words).unwrap();
        let spelled = |r: std::ops::Range<usize>| words[r].concat();
        assert_eq!(spelled(instr).trim(), "Every story is about a cat called Tom.");
        assert_eq!(spelled(last.clone()).trim(), "Now the cat sleeps in the sun.");
        assert_eq!(last.end, words.len());
        let mut cut = words.clone();
        cut.remove(0);
        assert!(token_ranges(&p, &cut).is_err(), "tokens that do not spell the prompt are refused");
    }
}

mod translation {
    use super::*;
    use attention_live::demos::translation::{check_knock_outs, knock_outs, query, Kind, Params, TranslationDemo};
    use attention_live::session::protocol::{AttentionKind, Translation, TranslatorInfo};

    fn run(change: impl FnOnce(&mut Params)) -> serde_json::Value {
        let mut p = Params::defaults();
        change(&mut p);
        TranslationDemo::load(&p, &mut read).unwrap().unwrap()
    }

    fn text(out: &serde_json::Value) -> &str {
        out["text"].as_str().unwrap()
    }

    /// The weight the row of the `nth` written `written` puts on source token `source`.
    fn weight(out: &serde_json::Value, written: (&str, usize), source: &str) -> String {
        let shown = &out["shown"][0];
        let tokens = |k: &str| shown[k].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect::<Vec<_>>();
        let (rows, cols) = (tokens("rows"), tokens("cols"));
        let i = rows.iter().enumerate().filter(|(_, r)| **r == written.0).nth(written.1).unwrap().0;
        let j = cols.iter().position(|c| *c == source).unwrap();
        format!("{:.2}", num(&shown["weights"][i][j]))
    }

    /// why-attention.md, "The real thing": the bundled model's translation, its cross-attention
    /// in the last layer (the heads' mean), the beam's runner-up and the knock-outs, as the prose
    /// and the exercises quote them.
    #[test]
    fn the_real_thing_says_what_the_model_computes() {
        let text_md = chapter("why-attention");
        let out = run(|_| {});
        assert_eq!(text(&out), "1998-03-23");
        assert_eq!(out["shown"][0]["layer"], 2);
        assert_eq!(out["shown"][0]["rows"][0], "\u{2581}", "a piece that is only a space, labelled");
        let quotes = [
            (("19", 0), " nineteen", "0.97"),
            (("9", 0), " ninety", "0.99"),
            (("8", 0), "eight", "1.00"),
            (("3", 0), " march", "0.50"),
            (("2", 0), " twenty", "0.64"),
            (("-", 0), "</s>", "0.95"),
        ];
        for (written, source, want) in quotes {
            assert_eq!(weight(&out, written, source), want, "{written:?} on {source:?}");
        }
        says(&text_md, "The written 19 puts 0.97 of its weight on nineteen, the 9 puts 0.99 on ninety and the 8 puts");
        says(&text_md, "1.00 on eight; then the month's 3 puts 0.50 on march, and the day's 2 puts 0.64 on twenty");
        says(&text_md, "(0.95 for the first one)");
        // The exercise why-real-day: the written 2's strongest source token is twenty (choice A).
        let rows: Vec<&str> = out["shown"][0]["rows"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        let two = rows.iter().position(|r| *r == "2").unwrap();
        let strongest = out["strongest"][0][two].as_u64().unwrap() as usize;
        assert_eq!(out["source"][strongest], " twenty");
        says(&text_md, "solution: twenty, with 0.64 of the row's weight");
        // The beam's runner-up, and greedy decoding's answer.
        assert_eq!(out["hypotheses"][1]["text"], "1998-07-23");
        says(&text_md, "the runner-up, far behind, is 1998-07-23");
        assert_eq!(text(&run(|p| p.beams = 1)), "1998-03-23");
        // Knock-outs: no one head of the last layer's cross-attention is needed, all four are.
        for h in 0..4 {
            assert_eq!(text(&run(|p| p.knock = format!("cross.2.{h}"))), "1998-03-23", "cross.2.{h}");
        }
        let all = |l: usize| (0..4).map(|h| format!("cross.{l}.{h}")).collect::<Vec<_>>().join(" ");
        assert_eq!(text(&run(|p| p.knock = all(2))), "1966-07-12");
        says(&text_md, "Knock out all four (`cross.2.0 cross.2.1 cross.2.2 cross.2.3`) and it becomes 1966-07-12");
        assert_eq!(text(&run(|p| p.knock = all(0))), "1998-03-23");
        let first = run(|p| p.layer = 0);
        let peak = first["shown"][0]["weights"].as_array().unwrap().iter().flat_map(|r| r.as_array().unwrap()).map(num);
        assert_eq!(format!("{:.2}", peak.fold(0.0, f64::max)), "0.52");
        says(&text_md, "(no row puts more than 0.52 on one token)");
        // The model as the prose describes it: its shape and size, its test, its tokens, its data.
        let card: serde_json::Value = serde_json::from_slice(&read("models/dates-marian/card.json").unwrap()).unwrap();
        let arch = &card["architecture"];
        let shape = [&arch["encoder_layers"], &arch["decoder_layers"], &arch["encoder_attention_heads"]];
        assert_eq!(shape.map(|x| x.as_u64().unwrap()), [3, 3, 4]);
        let bytes = read("models/dates-marian/model.safetensors").unwrap().len();
        assert_eq!(format!("{:.1} {:.1}", num(&card["parameters"]) / 1e6, bytes as f64 / 1e6), "1.0 2.0");
        says(&text_md, "3 encoder and 3 decoder layers of 4 heads and about a million parameters (2 MB)");
        assert!(card["validation"].as_str().unwrap().starts_with("1000 dates"));
        assert_eq!((num(&card["exact_match_f32"]), num(&card["exact_match_f16"])), (1.0, 1.0));
        says(&text_md, "On 1,000 held-out dates it is right every time");
        let script = std::fs::read_to_string(format!("{}/scripts/marian/train_bundled.py", env!("CARGO_MANIFEST_DIR")));
        assert!(script.unwrap().contains("rng.randint(1900, 2099)"), "the years it was trained on");
        says(&text_md, "it saw the years 1900 to 2099");
        assert_eq!((&out["source"][0], &out["source"][1]), (&serde_json::json!(" th"), &serde_json::json!("e")));
        says(&text_md, "so \"the\" arrives as th and e");
        let gap = num(&out["hypotheses"][0]["score"]) - num(&out["hypotheses"][1]["score"]);
        assert!(gap > 0.5, "the runner-up is far behind: {gap}");
        assert_eq!(out["complete"], true);
        let old = run(|p| p.text = "the fourteenth of july, seventeen eighty-nine".into());
        assert_eq!(text(&old), "2059-07-14");
        says(&text_md, "\"the fourteenth of july, seventeen eighty-nine\" comes out as 2059-07-14");
    }

    /// The exercise why-real-mask: above the diagonal every decoder self-attention weight is 0,
    /// in every layer and head; the encoder's has no mask (weights above its diagonal).
    #[test]
    fn the_decoder_is_masked_and_the_encoder_is_not() {
        for l in 0..3 {
            for h in 0..4 {
                let out = run(|p| (p.kind, p.layer, p.mean, p.head) = (Kind::Decoder, l, false, h));
                let w = out["shown"][0]["weights"].as_array().unwrap();
                assert_eq!(w.len(), out["target"].as_array().unwrap().len());
                assert_eq!(out["shown"][0]["cols"][0], "start");
                for (i, row) in w.iter().enumerate() {
                    let row: Vec<f64> = row.as_array().unwrap().iter().map(num).collect();
                    assert!(row[i + 1..].iter().all(|&x| x == 0.0), "layer {l} head {h} row {i}");
                    assert!(row[..=i].iter().all(|&x| x > 0.0), "layer {l} head {h} row {i}");
                }
            }
        }
        let enc = run(|p| (p.kind, p.mean) = (Kind::Encoder, true));
        let w = enc["shown"][0]["weights"].as_array().unwrap();
        assert!(num(&w[0][w.len() - 1]) > 0.0, "the encoder's first token reads its last");
    }

    /// why-attention.md: in the bundled model's encoder, layer 1's head 3 fetches the century
    /// (nineteen) and head 0 the day (twenty) for most source tokens, however far away.
    #[test]
    fn two_encoder_heads_fetch_the_century_and_the_day_from_afar() {
        let text_md = chapter("why-attention");
        let fetched = |h: usize, word: &str| {
            let out = run(|p| (p.kind, p.layer, p.mean, p.head) = (Kind::Encoder, 1, false, h));
            let weights = out["shown"][0]["weights"].as_array().unwrap().clone();
            let at = out["source"].as_array().unwrap().iter().position(|t| t == word).unwrap();
            let rows: Vec<f64> = out["strongest"][0]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .filter(|(_, j)| j.as_u64() == Some(at as u64))
                .map(|(i, _)| num(&weights[i][at]))
                .collect();
            (rows.len(), format!("{:.2}", rows.iter().copied().fold(1.0, f64::min)), weights.len())
        };
        assert_eq!(fetched(3, " nineteen"), (10, "0.92".into(), 14));
        says(&text_md, "10 of the 14 source tokens, from th at the start on, put 0.92 or more of their weight on");
        assert_eq!(fetched(0, " twenty").0, 8);
        says(&text_md, "head 0 does the same for the day, with 8 tokens looking most at twenty");
        // All three side by side: the encoder's (S, S), the decoder's (T, T), cross-attention (T, S).
        let all = run(|p| p.kind = Kind::All);
        let dims: Vec<(usize, usize)> = all["shown"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let w = m["weights"].as_array().unwrap();
                (w.len(), w[0].as_array().unwrap().len())
            })
            .collect();
        assert_eq!(dims, vec![(14, 14), (11, 11), (11, 14)]);
    }

    #[test]
    fn knocked_out_heads_are_read_or_refused_with_the_reason() {
        let got = knock_outs("cross.2.1, encoder.0.3 decoder.1.0 cross.2.1").unwrap();
        let want = vec![(AttentionKind::Cross, 2, 1), (AttentionKind::Encoder, 0, 3), (AttentionKind::Decoder, 1, 0)];
        assert_eq!(got, want);
        assert_eq!(knock_outs("  ").unwrap(), vec![]);
        for bad in ["cross.2", "self.1.1", "cross.a.1", "cross.1.1.1", "2.1"] {
            let e = knock_outs(bad).unwrap_err();
            assert!(e.contains(bad) && e.contains("kind.layer.head"), "{bad}: {e}");
        }
        // A bad entry reaches the reader as the demo's error, not as a query; so does an empty text.
        let p = Params { knock: "cross.x".into(), ..Params::defaults() };
        assert!(TranslationDemo::load(&p, &mut read).unwrap().is_err());
        let p = Params { text: "  ".into(), ..Params::defaults() };
        assert_eq!(query(&p).unwrap_err(), "type a text to translate");
        // A head the loaded model does not have is refused, naming what it has.
        let info = TranslatorInfo {
            name: "dates".into(),
            encoder_layers: 3,
            decoder_layers: 3,
            encoder_heads: 4,
            decoder_heads: 4,
            d_model: 128,
            params: 1,
            max_tokens: 64,
            backend: "the CPU".into(),
        };
        assert_eq!(check_knock_outs(&knock_outs("cross.2.3 encoder.0.0").unwrap(), &info), Ok(()));
        let e = check_knock_outs(&knock_outs("cross.3.0").unwrap(), &info).unwrap_err();
        assert!(e.contains("“cross.3.0” is not a head") && e.contains("layers 0 to 2 and heads 0 to 3"), "{e}");
        assert!(check_knock_outs(&knock_outs("decoder.0.4").unwrap(), &info).is_err());
        // The matrix says which heads are knocked out.
        let out = run(|p| p.knock = "cross.2.1 cross.2.3".into());
        assert!(out["shown"][0]["title"].as_str().unwrap().contains("mean of the heads, 2 of them knocked out"));
        let out = run(|p| (p.knock, p.mean, p.head) = ("cross.2.1".into(), false, 1));
        assert!(out["shown"][0]["title"].as_str().unwrap().contains("head 1, knocked out"));
    }

    /// The message and buffer the worker sends read back into the same translation; a buffer of
    /// another length is refused.
    #[test]
    fn a_translation_travels_whole() {
        use attention_live::session::translate::TranslationSession;
        let dir = "models/dates-marian";
        let file = |f: &str| read(&format!("{dir}/{f}")).unwrap();
        let (config, vocab) =
            (String::from_utf8(file("config.json")).unwrap(), String::from_utf8(file("vocab.json")).unwrap());
        let s = TranslationSession::load(
            &config,
            &file("model.safetensors"),
            (&file("source.spm"), &file("target.spm"), &vocab),
        )
        .unwrap();
        let q = attention_live::demos::translation::query(&Params::defaults()).unwrap();
        let t = s.translate(&q).unwrap();
        let (message, data) = t.clone().into_parts();
        let json = serde_json::to_string(&message).unwrap();
        let back = Translation::from_parts(serde_json::from_str(&json).unwrap(), data.clone()).unwrap();
        assert_eq!(back, t);
        let e = Translation::from_parts(message, data[1..].to_vec()).unwrap_err();
        assert!(e.contains("attention buffer"), "{e}");
        // The model card counts torch's parameters, which leave out `final_logits_bias` (a buffer of
        // vocab_size values); the page counts every weight the model uses.
        let card: serde_json::Value = serde_json::from_slice(&file("card.json")).unwrap();
        assert_eq!(s.info("dates").params as u64, card["parameters"].as_u64().unwrap() + 123);
        // "about 300 MB": OPUS-MT English→German's shape in F32.
        let opus = attention_live::marian::Config::opus_mt_en_de().n_params() as f64 * 4.0;
        assert_eq!(format!("{:.0} MB", opus / 1e6), "296 MB");
        says(&chapter("why-attention"), "(about 300 MB, downloaded once and kept)");
    }
}

mod vision {
    use super::*;
    use attention_live::demos::vision::{Params, Picture, Show, VisionDemo};

    fn run(change: impl FnOnce(&mut Params)) -> serde_json::Value {
        let mut p = Params::defaults();
        change(&mut p);
        VisionDemo::load(&p, &mut read).unwrap().unwrap()
    }

    fn top(out: &serde_json::Value) -> (String, String) {
        let t = &out["top"][0];
        (t["label"].as_str().unwrap().to_string(), format!("{:.1}%", num(&t["prob"]) * 100.0))
    }

    /// images.md: the bundled model on the page's drawn pictures (each named right), the star's
    /// probability, the rollout, the learned positions and the knock-outs, as the prose and the
    /// exercise quote them.
    #[test]
    fn attention_on_images_says_what_the_model_computes() {
        let text = chapter("images");
        for pic in Picture::ALL.iter().filter(|p| **p != Picture::Yours) {
            let out = run(|p| p.picture = *pic);
            assert_eq!(out["top"][0]["label"], pic.key(), "the drawn {pic:?} is named right");
            assert!(num(&out["top"][0]["prob"]) > 0.99, "{pic:?}: {}", out["top"]);
        }
        let star = run(|_| {});
        // The last layer's four heads: each its brightest weight on a different patch.
        let heads = run(|p| p.show = Show::Heads);
        let best: Vec<u64> = (0..4).map(|h| heads["maps"][h]["strongest"].as_u64().unwrap()).collect();
        assert!(best.iter().enumerate().all(|(i, b)| !best[..i].contains(b)), "{best:?}");
        says(&text, "each of the last layer's four heads has its brightest weight on a different patch");
        assert_eq!(star["grid"], 8);
        says(&text, &format!("with probability {:.2}%", num(&star["top"][0]["prob"]) * 100.0));
        says(&text, "with probability 99.99%");
        // Rollout to the class token: the star's patches take more than 0.01 each, the paper the rest.
        let roll = run(|p| p.show = Show::Rollout);
        let cls = &roll["maps"][0];
        let v: Vec<f64> = cls["values"].as_array().unwrap().iter().map(num).collect();
        let big = v.iter().filter(|&&x| x > 0.01).count();
        let rest = v.iter().copied().filter(|&x| x <= 0.01);
        let (lo, hi) = rest.fold((1.0f64, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
        let max = v.iter().copied().fold(0.0, f64::max);
        says(&text, &format!("the {big} patches that take more than 0.01"));
        says(&text, &format!("({max:.3}) on patch {}", cls["strongest"]));
        says(&text, &format!("the other {} patches, paper, get {lo:.3} to {hi:.3}", 64 - big));
        assert!(cls["strongest"] == 37 && big == 19);
        // The learned positions: patch 27's neighbours and a corner.
        let pos = run(|p| p.show = Show::Positions);
        let sim = |j: usize| format!("{:.2}", num(&pos["maps"][0]["values"][j]));
        says(
            &text,
            &format!(
                "the patch to its right has similarity {}, the one above it {} and the one below it {}",
                sim(28),
                sim(19),
                sim(35)
            ),
        );
        says(&text, &format!("the top-right corner has −{}", sim(7).trim_start_matches('-')));
        assert!(sim(7).starts_with('-'));
        // Knock-outs: the last layer's four heads, then layers 1 to 3 on the circle.
        let last = run(|p| p.knock = "3.0 3.1 3.2 3.3".into());
        let (label, pct) = top(&last);
        assert_eq!(label, "star");
        says(&text, &format!("the star is still a star, at {pct}"));
        let all = "1.0 1.1 1.2 1.3 2.0 2.1 2.2 2.3 3.0 3.1 3.2 3.3";
        let circle = run(|p| (p.picture, p.knock) = (Picture::Circle, all.into()));
        let (label, pct) = top(&circle);
        says(&text, &format!("it becomes a {label}, at {pct}"));
        assert!(num(&circle["unablated"][0]["prob"]) < 0.001, "without the knock-outs, hardly a square");
        says(&text, &format!("It answers {label}, with probability {:.2}", num(&circle["top"][0]["prob"])));
    }
}
