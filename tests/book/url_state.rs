use attention_live::demos::{find, nadaraya_watson as nw, self_attention, DEMOS};
use attention_live::numerics::rng::Rng;
use attention_live::state::query::{build_query, decode, encode, parse_query};
use attention_live::state::Params as _;
use attention_live::state::{format_value, Kind, Value, Values};

fn pairs(s: &str) -> Vec<(String, String)> {
    parse_query(s)
}

#[test]
fn percent_coding_round_trips_and_tolerates_garbage() {
    for s in ["plain", "a b&c=d", "<img src=x onerror=alert(1)>", "σ ≈ 0.5 🙂", "%", "100%"] {
        assert_eq!(decode(&encode(s)), s);
    }
    assert_eq!(decode("a+b%20c"), "a b c");
    assert_eq!(decode("%zz%"), "%zz%"); // malformed escapes stay literal
    assert_eq!(decode("%E2%82"), "\u{FFFD}"); // truncated UTF-8 becomes the replacement char
    assert_eq!(build_query([("nw.q", "1.5"), ("lookup.q", "a&b")]), "nw.q=1.5&lookup.q=a%26b");
}

#[test]
fn valid_values_are_read_and_others_fall_back_with_a_notice() {
    let nw = find("nw").unwrap();
    let url =
        "?nw.sigma=0.25&nw.n=abc&nw.kernel=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&nw.zzz=1&lookup.q=red&nw.q=99";
    let (v, notices) = Values::from_pairs(nw.id, nw.params, &pairs(url));
    let p = nw::Params::read(&v);
    assert_eq!(p.sigma, 0.25);
    assert_eq!(p.n, 40, "malformed n falls back to the default");
    assert_eq!(p.kernel, nw::KernelChoice::Gaussian);
    assert_eq!(p.q, 2.5, "out-of-range q falls back");
    let keys: Vec<&str> = notices.iter().map(|n| n.key.as_str()).collect();
    assert_eq!(keys, ["nw.n", "nw.kernel", "nw.zzz", "nw.q"]);
    // The raw text is kept verbatim (the page renders it as text, never as HTML).
    assert!(notices[1].message().contains("<img src=x onerror=alert(1)>"));
    assert!(notices[3].message().contains("outside the range 0 to 5"));
}

#[test]
fn first_duplicate_wins() {
    let nw = find("nw").unwrap();
    let (v, notices) = Values::from_pairs(nw.id, nw.params, &pairs("nw.n=7&nw.n=9"));
    assert_eq!(nw::Params::read(&v).n, 7);
    assert_eq!(notices.len(), 1);
}

/// A random valid value for a parameter.
fn random_value(kind: Kind, rng: &mut Rng) -> Value {
    match kind {
        Kind::Float { min, max, log, .. } => {
            let u = rng.uniform();
            Value::Float(if log {
                (min.ln() + u * (max.ln() - min.ln())).exp().clamp(min, max)
            } else {
                min + u * (max - min)
            })
        }
        Kind::Int { min, max, .. } => Value::Int(min + (rng.next_u64() % (max - min + 1) as u64) as i64),
        Kind::Choice { options, .. } => Value::Choice(options[rng.next_u64() as usize % options.len()].0.to_string()),
        Kind::Text { max_len, .. } => {
            let pool = ['a', 'Z', ' ', '&', '=', '%', '+', '#', 'é', '🙂', '<', '>', '"'];
            let len = rng.next_u64() as usize % (max_len + 1);
            Value::Text((0..len).map(|_| pool[rng.next_u64() as usize % pool.len()]).collect())
        }
        Kind::Seed { .. } => Value::Seed(rng.next_u64() as u32),
        Kind::Bool { .. } => Value::Bool(rng.next_u64().is_multiple_of(2)),
        Kind::Cells { max_rows, max_cols, limit } => {
            // Whole hundredths, which the URL form (4 decimals) keeps exactly.
            let (r, c) = (rng.next_u64() as usize % (max_rows + 1), 1 + rng.next_u64() as usize % max_cols);
            let cell = |rng: &mut Rng| ((rng.uniform() * 2.0 - 1.0) * limit * 100.0).round() / 100.0;
            let rows: Vec<Vec<f64>> = (0..r).map(|_| (0..c).map(|_| cell(rng)).collect()).collect();
            Value::Text(attention_live::state::format_cells(&rows))
        }
    }
}

#[test]
fn every_demo_state_round_trips_through_the_url() {
    let mut rng = Rng::new(2026);
    for spec in DEMOS {
        for _ in 0..200 {
            let mut v = Values::defaults(spec.params);
            for p in spec.params {
                v.set(p.key, random_value(p.kind, &mut rng));
            }
            let all = v.to_pairs(spec.id);
            let q = build_query(all.iter().map(|(k, x)| (k.as_str(), x.as_str())));
            let (back, notices) = Values::from_pairs(spec.id, spec.params, &parse_query(&q));
            assert!(notices.is_empty(), "{}: {q} -> {notices:?}", spec.id);
            assert_eq!(back, v, "{}: {q}", spec.id);
            // the URL bar form (the values that differ from the demo's baseline) restores the
            // same state too, and so does the full form read as a link
            let changed = spec.link_pairs(&v);
            let q = build_query(changed.iter().map(|(k, x)| (k.as_str(), x.as_str())));
            assert_eq!(spec.from_link(&parse_query(&q)).0, v, "{}: {q}", spec.id);
            assert_eq!(spec.from_link(&all).0, v);
        }
    }
}

#[test]
fn random_garbage_never_panics_and_always_yields_valid_state() {
    let mut rng = Rng::new(7);
    let alphabet: Vec<char> = "abcdeqnsigmkrl.=&%?#+-0123456789eE_ \u{0}\u{7f}é🙂<>\"'/\\".chars().collect();
    let keys = ["nw.n", "nw.sigma", "nw.kernel", "nw.seed", "nw.q", "lookup.q", "lookup.beta", "kernels.sigma"];
    for _ in 0..5000 {
        let len = rng.next_u64() as usize % 80;
        let mut s: String = (0..len).map(|_| alphabet[rng.next_u64() as usize % alphabet.len()]).collect();
        // half the time, aim the garbage at a real key so values get parsed
        if rng.next_u64().is_multiple_of(2) {
            s = format!("{}={s}", keys[rng.next_u64() as usize % keys.len()]);
        }
        for spec in DEMOS {
            let (v, _) = Values::from_pairs(spec.id, spec.params, &parse_query(&s));
            for (p, val) in v.iter() {
                assert!(p.parse(&format_value(val)).is_ok(), "{s:?} gave invalid {}={val:?}", p.key);
            }
            // and the demo can compute from whatever state came out
            assert!((spec.data)(&v).is_ok());
        }
    }
}

/// The demos that read a model file compute their real output from any state a link can give
/// them: an answer, or a message saying what is wrong, never a panic.
#[test]
fn model_reading_demos_compute_from_random_link_states() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("static");
    let mut read = |path: &str| std::fs::read(root.join(path)).map_err(|e| format!("{path}: {e}"));
    let mut rng = Rng::new(11);
    let mut answered = 0;
    for spec in DEMOS.iter().filter(|d| ["wpe", "linformer", "gpt2"].contains(&d.id)) {
        for _ in 0..6 {
            let mut v = Values::defaults(spec.params);
            for (i, p) in spec.params.iter().enumerate() {
                // The prompt stays short: a debug build runs the model slowly.
                if !matches!(p.kind, Kind::Text { .. }) {
                    v.set_at(i, random_value(p.kind, &mut rng));
                }
            }
            match (spec.load)(&v, &mut read) {
                Some(Ok(out)) => {
                    assert!(out.is_object());
                    answered += 1;
                }
                Some(Err(message)) => assert!(!message.is_empty(), "{}: {v:?}", spec.id),
                None => {} // a model the page downloads (GPT-2 small, a URL, local files)
            }
        }
    }
    assert!(answered >= 6, "only {answered} of 18 random states computed");
}

/// A typed matrix in a link that cannot be read falls back to none (X drawn from the seed), and
/// the notice says which cell is wrong.
#[test]
fn malformed_typed_cells_fall_back_with_a_notice() {
    let spec = find("self-attn").unwrap();
    let (v, notices) = Values::from_pairs(spec.id, spec.params, &pairs("self-attn.x=1,2;3,zz"));
    assert!(self_attention::Params::read(&v).x.is_empty());
    assert_eq!(notices.len(), 1);
    assert!(notices[0].message().contains("\"zz\" is not a number"), "{}", notices[0].message());
    let (v, notices) = Values::from_pairs(spec.id, spec.params, &pairs("self-attn.x=1,2;3,0.5"));
    assert_eq!((self_attention::Params::read(&v).x, notices.len()), (vec![vec![1.0, 2.0], vec![3.0, 0.5]], 0));
}

/// Every link shared so far must open the same demo in the same state: the links in
/// `fixtures/saved_links.tsv` were written by the first edition together with the state it restored.
#[test]
fn links_saved_from_the_first_edition_restore_the_same_state() {
    let saved = std::fs::read_to_string("tests/fixtures/saved_links.tsv").unwrap();
    let mut checked = 0;
    for line in saved.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [id, link, state, notices] = cols[..] else { panic!("malformed fixture line {line}") };
        let spec = find(id).unwrap_or_else(|| panic!("demo {id} is gone"));
        let (v, got) = Values::from_pairs(spec.id, spec.params, &pairs(link));
        // A key renamed since (`Param::formerly`) holds the saved value under today's key and scale.
        let today: Vec<(String, String)> = pairs(state)
            .into_iter()
            .map(|(k, val)| {
                let renamed = spec.params.iter().find_map(|p| {
                    let (old, offset) = p.formerly?;
                    (k == format!("{}.{old}", spec.id)).then(|| (format!("{}.{}", spec.id, p.key), offset))
                });
                match (renamed, val.parse::<i64>()) {
                    (Some((today, offset)), Ok(x)) => (today, (x - offset).to_string()),
                    _ => (k, val),
                }
            })
            .collect();
        let state = build_query(today.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let state = state.as_str();
        // A parameter added since the link was saved must be at its default; the rest as saved.
        let saved_keys: Vec<String> = pairs(state).into_iter().map(|(k, _)| k).collect();
        let defaults = Values::defaults(spec.params).to_pairs(spec.id);
        let (kept, added): (Vec<_>, Vec<_>) =
            v.to_pairs(spec.id).into_iter().partition(|(k, _)| saved_keys.contains(k));
        for (k, val) in &added {
            assert!(defaults.iter().any(|(dk, dv)| dk == k && dv == val), "{link}: the new {k} is not at its default");
        }
        let restored = build_query(kept.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        assert_eq!(restored, state, "{link}");
        assert_eq!(got.len().to_string(), notices, "{link}");
        checked += 1;
    }
    assert_eq!(checked, 78);
}

#[test]
fn a_prompt_too_long_for_the_link_keeps_its_first_characters_with_a_notice() {
    let spec = find("gpt2").expect("the gpt2 demo");
    let long: String = "Once upon a time ".repeat(300); // 5,100 characters
    let (v, notices) = Values::from_pairs(spec.id, spec.params, &[("gpt2.prompt".into(), long.clone())]);
    let Some(Value::Text(kept)) = v.get("prompt") else { panic!("{:?}", v.get("prompt")) };
    assert_eq!(kept.chars().count(), 4000, "cut, not replaced by the default");
    assert!(long.starts_with(kept.as_str()));
    assert_eq!(notices.len(), 1);
    let m = notices[0].message();
    assert!(m.starts_with("Cut gpt2.prompt=") && m.contains("its first 4000 characters are used"), "{m}");
    // A text with a control character is still refused (cutting would not make it valid).
    let (v, notices) = Values::from_pairs(spec.id, spec.params, &[("gpt2.prompt".into(), format!("{long}\u{7}"))]);
    assert!(matches!(v.get("prompt"), Some(Value::Text(t)) if t.chars().count() == 4000));
    assert_eq!(notices.len(), 1);
    // A prompt's line breaks (typed, or generated by the model) are kept, not replaced by the default.
    let (v, notices) = Values::from_pairs(spec.id, spec.params, &pairs("gpt2.prompt=One%0Atwo%09three"));
    assert_eq!(v.get("prompt"), Some(&Value::Text("One\ntwo\tthree".into())));
    assert!(notices.is_empty());
    let mut v = Values::defaults(spec.params);
    v.set("prompt", Value::Text("Dear cat,\n\nShe likes".into()));
    assert_eq!(v.get("prompt"), Some(&Value::Text("Dear cat,\n\nShe likes".into())));
    // From a control (a paste, a generation that ran on), a text too long is cut too.
    let mut v = Values::defaults(spec.params);
    v.set("prompt", Value::Text(long.clone()));
    assert!(
        matches!(v.get("prompt"), Some(Value::Text(t)) if t.chars().count() == 4000 && long.starts_with(t.as_str()))
    );
}

#[test]
fn a_notice_isolates_the_value_quoted_from_the_link() {
    let spec = find("nw").expect("the nw demo");
    let (_, notices) = Values::from_pairs(spec.id, spec.params, &pairs("nw.zz=%E2%80%AEevil"));
    let (before, raw, after) = notices[0].parts();
    // The page puts `raw` in a <bdi>: the override character stays inside it.
    assert_eq!(raw, "\u{202E}evil");
    assert!(!before.contains('\u{202E}') && !after.contains('\u{202E}'));
    assert_eq!(format!("{before}{raw}{after}"), notices[0].message());
}
