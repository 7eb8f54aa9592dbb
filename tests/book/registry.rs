//! Walks the demo registry and the chapters: every demo is well-formed, computes from its
//! defaults, and is embedded somewhere; every directive names a registered demo.

use std::collections::HashSet;

use attention_live::chapters::render::{parse_directive, render_chapter, RawSegment};
use attention_live::chapters::{neighbours, Segment, CHAPTERS};
use attention_live::demos::{chunk_of, chunk_of_page, find, DEMOS};
use attention_live::numerics::rng::Rng;
use attention_live::state::{fmt_num, format_value, Kind, Param, Values};

fn valid_id(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[test]
fn demos_are_well_formed() {
    let mut ids = HashSet::new();
    for d in DEMOS {
        assert!(valid_id(d.id), "bad id {}", d.id);
        assert!(ids.insert(d.id), "duplicate demo id {}", d.id);
        assert!(!d.title.is_empty() && !d.caption.is_empty());
        let mut keys = HashSet::new();
        for p in d.params {
            assert!(valid_id(p.key), "{}: bad key {}", d.id, p.key);
            assert!(keys.insert(p.key), "{}: duplicate key {}", d.id, p.key);
            assert!(!p.label.is_empty());
            let def = p.default_value();
            assert_eq!(p.parse(&format_value(&def)), Ok(def), "{}.{}: default does not parse back", d.id, p.key);
        }
        // The panel's main controls and the ones the view draws name the demo's own keys, apart.
        for k in d.main.iter().chain(d.in_view) {
            assert!(keys.contains(k), "{}: MAIN or IN_VIEW names {k}, which is not one of its keys", d.id);
        }
        assert!(d.main.iter().all(|k| !d.in_view.contains(k)), "{}: a main control drawn in the view", d.id);
        let panel: Vec<&str> = d.panel().iter().map(|(p, _)| p.key).collect();
        assert_eq!(panel.len() + d.in_view.len(), d.params.len(), "{}: every control has one place", d.id);
        assert_eq!(&panel[..d.main.len()], d.main, "{}: the main controls come first", d.id);
        let out = (d.data)(&Values::defaults(d.params)).expect("computes from defaults");
        assert!(out.is_object(), "{}: data is a JSON object", d.id);
    }
}

/// A random valid URL value for a control.
fn random_value(p: &Param, rng: &mut Rng) -> String {
    let u = rng.uniform();
    match p.kind {
        Kind::Float { min, max, .. } => format!("{}", min + u * (max - min)),
        Kind::Int { min, max, .. } => {
            format!("{}", min + ((max - min + 1) as f64 * u).floor().min((max - min) as f64) as i64)
        }
        Kind::Choice { options, .. } => options[(u * options.len() as f64) as usize % options.len()].0.to_string(),
        Kind::Text { max_len, .. } => "the cat sat".chars().take(max_len).collect(),
        Kind::Seed { .. } => format!("{}", (u * 4e9) as u64),
        Kind::Bool { .. } => if u < 0.5 { "0" } else { "1" }.to_string(),
        Kind::Cells { max_rows, max_cols, .. } => {
            let (r, c) = (max_rows.min(2), max_cols.min(3));
            // Cells as the page writes them: the book's short number form.
            let cell = |i: usize| fmt_num(((i as f64 * 0.37 - 0.5) * 100.0).round() / 100.0).to_string();
            (0..r).map(|i| (0..c).map(|j| cell(i * c + j)).collect::<Vec<_>>().join(",")).collect::<Vec<_>>().join(";")
        }
    }
}

/// Every field's Rust type fits its control: reading a demo's values into its typed parameters
/// and writing them back changes nothing, for the defaults and for random valid values.
#[test]
fn typed_parameters_read_and_write_every_value_unchanged() {
    let mut rng = Rng::new(7);
    for d in DEMOS {
        let defaults = Values::defaults(d.params);
        assert_eq!((d.retype)(&defaults), defaults, "{}: defaults", d.id);
        for _ in 0..50 {
            let pairs: Vec<(String, String)> =
                d.params.iter().map(|p| (format!("{}.{}", d.id, p.key), random_value(p, &mut rng))).collect();
            let (v, notices) = Values::from_pairs(d.id, d.params, &pairs);
            assert!(notices.is_empty(), "{}: {notices:?}", d.id);
            assert_eq!((d.retype)(&v), v, "{}: {pairs:?}", d.id);
            // A hidden control is one of the demo's, and never a main one (which decides the rest).
            for key in (d.idle)(&v) {
                assert!(d.params.iter().any(|p| p.key == *key), "{}: idle {key} is no control", d.id);
                assert!(!d.main.contains(key), "{}: main control {key} hidden", d.id);
            }
        }
    }
}

/// Demos whose numbers come from a model file compute their real output natively, from the
/// files the page fetches (`static/`), so the tests and "Download data" see real numbers.
#[test]
fn demos_that_read_a_model_file_compute_their_real_output() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("static");
    let mut read = |path: &str| std::fs::read(root.join(path)).map_err(|e| format!("{path}: {e}"));
    let mut loaded = Vec::new();
    for d in DEMOS {
        if let Some(out) = (d.load)(&Values::defaults(d.params), &mut read) {
            let out = out.unwrap_or_else(|e| panic!("{}: {e}", d.id));
            assert!(out.is_object(), "{}: {out}", d.id);
            loaded.push((d.id, out));
        }
    }
    let out = |id: &str| loaded.iter().find(|(d, _)| *d == id).map(|(_, o)| o.clone()).expect(id);
    // The stories model's table: 128 positions of width 128 (its config), each position most
    // like itself (mean cosine 1 at offset 0).
    let wpe = out("wpe");
    assert_eq!((wpe["wpe"].as_array().unwrap().len(), wpe["wpe"][0].as_array().unwrap().len()), (128, 128));
    assert!((wpe["mean_cosine_by_offset"][0].as_f64().unwrap() - 1.0).abs() < 1e-6);
    // GPT-2 on the stories model: the default prompt's tokens, the next-token candidates as the
    // worker sends them, and the selected head's weights, each row a distribution over the past.
    let g = out("gpt2");
    let t = g["analysis"]["tokens"].as_array().unwrap().len();
    assert!(t > 5 && !g["analysis"]["next"].as_array().unwrap().is_empty());
    for (i, row) in g["attention"].as_array().unwrap().iter().enumerate() {
        let row: Vec<f64> = row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-4 && row[i + 1..].iter().all(|&x| x == 0.0));
    }
    // Linformer: one singular value per token, and the rank-k error shrinks to 0 at full rank.
    let lin = out("linformer");
    let (sigma, err) = (lin["sigma"].as_array().unwrap(), lin["matrix_error"].as_array().unwrap());
    assert_eq!(sigma.len(), lin["tokens"].as_array().unwrap().len());
    assert!(err.last().unwrap().as_f64().unwrap() < 1e-6 && err[0].as_f64().unwrap() > 0.01);
}

#[test]
fn chapters_embed_only_registered_demos_and_every_demo_is_embedded() {
    let registered: HashSet<&str> = DEMOS.iter().map(|d| d.id).collect();
    let mut used = HashSet::new();
    let mut slugs = HashSet::new();
    for c in CHAPTERS {
        assert!(valid_id(c.slug) && slugs.insert(c.slug), "bad or duplicate slug {}", c.slug);
        for s in c.body.unwrap_or(&[]) {
            match s {
                Segment::Demo(id) => {
                    assert!(registered.contains(id), "chapter {} embeds unknown demo {id}", c.slug);
                    // The page fetches the chapter's chunk for it, not another chapter's.
                    let chunk = c.slug.replace('-', "_");
                    assert_eq!(chunk_of(id), Some(chunk.as_str()), "{id}'s view is in the wrong chunk");
                    used.insert(*id);
                }
                Segment::Bad(msg) => panic!("chapter {} has a bad directive: {msg}", c.slug),
                Segment::Html(_) | Segment::Exercise(_) => {}
            }
        }
    }
    assert_eq!(used, registered, "every registered demo appears in a chapter");
}

/// The page starts fetching its demos' chunk from its address, before it is built.
#[test]
fn a_page_knows_its_chunk_from_its_address() {
    assert_eq!(chunk_of_page("/scoring/", ""), Some("scoring"));
    assert_eq!(chunk_of_page("/gpt2-live/", "?gpt2.model=stories"), Some("gpt2_live"));
    assert_eq!(chunk_of_page("/embed/", "?x=1&demo=lookup&caption=0"), Some("soft_lookup"));
    for (path, query) in [("/", ""), ("/notation/", ""), ("/embed/", "?demo=nothing"), ("/embed/", ""), ("/x/", "")] {
        assert_eq!(chunk_of_page(path, query), None, "{path}{query}");
    }
}

#[test]
fn shipped_chapters_have_no_raw_latex_and_render_cleanly() {
    for c in CHAPTERS.iter().filter(|c| c.is_written()) {
        let md = std::fs::read_to_string(format!("chapters/{}.md", c.slug)).unwrap();
        let r = render_chapter(&md);
        assert!(r.problems.is_empty(), "{}: {:?}", c.slug, r.problems);
        for s in c.body.unwrap() {
            if let Segment::Html(h) = s {
                assert!(!h.contains('$'), "{}: a $ reached the HTML", c.slug);
                for cmd in ["\\frac", "\\sum", "\\exp", "\\alpha", "\\sigma", "\\beta", "\\mathbf", "\\left"] {
                    assert!(!h.contains(cmd), "{}: raw LaTeX {cmd} reached the HTML", c.slug);
                }
            }
        }
        assert!(
            c.body.unwrap().iter().any(|s| matches!(s, Segment::Html(h) if h.contains("<math"))),
            "{} has math",
            c.slug
        );
    }
}

#[test]
fn bad_directives_degrade_instead_of_failing() {
    let md = concat!(
        "Intro $x^2$.\n\n{{demo: nw}}\n\n{{demo}}\n\n{{video: x}}\n\n{{demo: Bad_Id!}}\n\n",
        "```\n{{demo: in-code}}\n```\n\nEnd $\\frac{1}$.\n"
    );
    let r = render_chapter(md);
    let kinds: Vec<String> = r
        .segments
        .iter()
        .map(|s| match s {
            RawSegment::Html(_) => "html".into(),
            RawSegment::Demo(id) => format!("demo:{id}"),
            RawSegment::Exercise(e) => format!("exercise:{}", e.id),
            RawSegment::Bad(_) => "bad".into(),
        })
        .collect();
    assert_eq!(kinds, ["html", "demo:nw", "bad", "bad", "bad", "html"]);
    // the fenced directive stayed as code, and the broken equation was reported, not printed raw
    let RawSegment::Html(last) = &r.segments[5] else { unreachable!() };
    assert!(last.contains("{{demo: in-code}}"));
    assert!(!last.contains("\\frac"));
    assert_eq!(r.problems.len(), 1);
    assert_eq!(parse_directive("{{ demo: scoring-1 }}"), Some(Ok("scoring-1".into())));
    assert_eq!(parse_directive("plain text"), None);
}

#[test]
fn previous_and_next_skip_unwritten_chapters() {
    let written: Vec<usize> = (0..CHAPTERS.len()).filter(|&i| CHAPTERS[i].is_written()).collect();
    assert!(written.len() >= 2);
    let (prev, next) = neighbours(written[0]);
    assert!(prev.is_none());
    assert_eq!(next.unwrap().slug, CHAPTERS[written[1]].slug);
    let (prev, _) = neighbours(written[1]);
    assert_eq!(prev.unwrap().slug, CHAPTERS[written[0]].slug);
}

#[test]
fn malformed_chapters_are_refused_with_their_line() {
    // A carriage return where `\r` of `\rVert` was meant: it rendered as the letters "V e r t".
    let r = render_chapter("Intro.\n\nThe norm $\\lVert x \rVert$ here.\n");
    assert!(
        r.problems.iter().any(|p| p.starts_with("line 3, column 20: control character U+000D")),
        "{:?}",
        r.problems
    );
    // A command the renderer does not know, named with its line.
    let r = render_chapter("One.\n\nTwo\nthree $\\frob{x}$.\n");
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert!(r.problems[0].starts_with("line 4: bad LaTeX") && r.problems[0].contains("frob"), "{:?}", r.problems);
    // A display equation on a later line, in a block after a directive.
    let r = render_chapter("A.\n\n{{demo: nw}}\n\nB\n\n$$\n\\nosuchthing\n$$\n");
    assert!(r.problems.len() == 1 && r.problems[0].starts_with("line 7:"), "{:?}", r.problems);
}

#[test]
fn punctuation_after_inline_math_stays_on_its_line() {
    let r = render_chapter("a new input $q$. In the demo, $x$, and $y$ then.\n");
    let RawSegment::Html(h) = &r.segments[0] else { unreachable!() };
    // The full stop and the comma are glued to their equations; the text after them is kept.
    assert_eq!(h.matches("<span class=\"nobr\"><math").count(), 2, "{h}");
    assert!(h.contains("</math>.</span> In the demo, ") && h.contains("</math>,</span> and "), "{h}");
    assert!(h.contains("</math> then."), "no punctuation after $y$: nothing glued, {h}");
}

#[test]
fn crlf_line_endings_are_line_endings() {
    // A chapter saved with Windows line endings is not refused; a lone carriage return is.
    assert!(render_chapter("A $x$.\r\n\r\nB $y$.\r\n").problems.is_empty());
    assert_eq!(render_chapter("A $x$.\r\n\r\nB\ry.\r\n").problems.len(), 1);
}

/// A demo's source, every file of its module (a file, or a folder of files).
fn demo_source(module: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/demos");
    let file = root.join(format!("{module}.rs"));
    if file.exists() {
        return std::fs::read_to_string(file).unwrap();
    }
    let mut text = String::new();
    let mut dirs = vec![root.join(module)];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                text += &std::fs::read_to_string(path).unwrap();
            }
        }
    }
    text
}

/// "Show numbers" is offered by exactly the demos whose view shows tables when it is on: a
/// button that only changes its own label, or numbers shown whatever it says, is a fault.
#[test]
fn show_numbers_is_offered_by_the_demos_that_show_numbers() {
    let registry = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/demos/mod.rs")).unwrap();
    let list = registry.split("registry! {").nth(1).and_then(|r| r.split('}').next()).expect("the registry");
    let modules: Vec<&str> =
        list.split(',').filter_map(|m| m.split(':').next()).map(str::trim).filter(|m| !m.is_empty()).collect();
    assert_eq!(modules.len(), DEMOS.len());
    for module in modules {
        let source = demo_source(module);
        let id = source.split("const ID: &'static str = \"").nth(1).and_then(|r| r.split('"').next()).unwrap();
        let spec = find(id).unwrap_or_else(|| panic!("{module}: no demo {id}"));
        let reads = source.contains("show_numbers");
        assert_eq!(spec.numbers, reads, "{id}: offers Show numbers: {}, its view reads it: {reads}", spec.numbers);
    }
}

/// Every stop of a logarithmic slider shows a label of its own beside the slider (the learning
/// rate's first stops all read "0.0001" when labels had four decimals).
#[test]
fn logarithmic_sliders_label_every_stop_apart() {
    use attention_live::state::fmt_sig;
    for d in DEMOS {
        for p in d.params {
            let Some(stops) = p.log_stops() else { continue };
            let labels: Vec<String> = stops.iter().map(|&x| fmt_sig(x)).collect();
            let distinct: HashSet<&String> = labels.iter().collect();
            assert_eq!(distinct.len(), labels.len(), "{}.{}: {labels:?}", d.id, p.key);
        }
    }
    assert_eq!((fmt_sig(0.000153), fmt_sig(0.3), fmt_sig(1024.0)), ("0.000153".into(), "0.3".into(), "1024".into()));
}
