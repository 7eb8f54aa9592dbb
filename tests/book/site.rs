//! The pages around the chapters: plain text and summaries (build time), heading anchors, the
//! search index and its search, the reference pages, and each chapter's references.

use std::collections::HashSet;

use attention_live::chapters::plain::{clip, plain_page, slugify, tex_to_text};
use attention_live::chapters::search::{search, terms, Section};
use attention_live::chapters::{find_reference, summary, Segment, CHAPTERS, REFERENCE_PAGES, SEARCH_INDEX};

#[test]
fn plain_text_splits_at_headings_and_skips_directives() {
    let md = "First *para* with $\\sqrt{d_k}$ and `code`.\nSame para.\n\nSecond.\n\n{{demo: nw}}\n\n\
              ## Why divide by $\\sqrt{d}$\n\nText **here**.\n\n- item one\n- item two\n\n\
              ## Why divide by $\\sqrt{d}$\n\nAgain.\n";
    let p = plain_page(md);
    assert_eq!(p.summary, "First para with √(d_k) and code. Same para.");
    assert_eq!(p.sections.len(), 3);
    assert_eq!(p.sections[0].heading, None);
    assert_eq!(p.sections[0].text, "First para with √(d_k) and code. Same para. Second.");
    assert_eq!(p.sections[1].heading.as_deref(), Some("Why divide by √d"));
    assert_eq!(p.sections[1].anchor, "why-divide-by-d");
    assert_eq!(p.sections[1].text, "Text here. item one item two");
    // a repeated heading gets a distinct anchor
    assert_eq!(p.sections[2].anchor, "why-divide-by-d-2");
    assert!(!p.sections.iter().any(|s| s.text.contains("{{")));
}

#[test]
fn summary_skips_a_leading_heading_and_is_empty_without_prose() {
    assert_eq!(plain_page("## Title\n\nBody text.\n").summary, "Body text.");
    assert_eq!(plain_page("{{demo: nw}}\n").summary, "");
}

#[test]
fn tex_becomes_readable_text() {
    // Hand-written expectations: symbols for Greek letters and operators, fonts dropped.
    let attention = "\\operatorname{softmax}(\\mathbf{Q}\\mathbf{K}^\\top / \\sqrt{d})";
    assert_eq!(tex_to_text(attention), "softmax(QK^⊤ / √d)");
    assert_eq!(tex_to_text("\\frac{1}{2\\sigma^2}"), "1/(2σ^2)");
    assert_eq!(tex_to_text("\\alpha_i = \\exp(\\beta s_i)"), "α_i = exp(β s_i)");
    assert_eq!(tex_to_text("n \\times n"), "n × n");
    assert_eq!(tex_to_text("d_{\\text{head}}"), "d_head");
    // unbalanced input never panics
    assert_eq!(tex_to_text("\\frac{1"), "1/");
    assert_eq!(tex_to_text("\\"), "");
}

#[test]
fn slugs_and_clipping() {
    assert_eq!(slugify("Step 1: scoring a query against a key"), "step-1-scoring-a-query-against-a-key");
    assert_eq!(slugify("√"), "section");
    assert_eq!(clip("short", 10), "short");
    assert_eq!(clip("one two three four five", 12), "one two…");
    assert_eq!(clip("αβγδε", 3), "αβ…");
}

#[test]
fn every_page_has_a_summary_and_every_heading_its_anchor_in_the_html() {
    let pages = CHAPTERS.iter().chain(REFERENCE_PAGES).filter(|c| c.is_written());
    for c in pages {
        let s = summary(c.slug).unwrap_or_else(|| panic!("{}: no summary", c.slug));
        assert!(s.len() > 40, "{}: summary too short: {s:?}", c.slug);
        assert!(!s.contains('$') && !s.contains('\\'), "{}: raw LaTeX in the summary: {s}", c.slug);
        let html: String =
            c.body.unwrap().iter().filter_map(|s| if let Segment::Html(h) = s { Some(*h) } else { None }).collect();
        let demos: HashSet<&str> = c.demo_ids().collect();
        let mut anchors = HashSet::new();
        for sec in SEARCH_INDEX.iter().filter(|s| s.slug == c.slug && !s.anchor.is_empty()) {
            assert!(anchors.insert(sec.anchor), "{}: anchor {} twice", c.slug, sec.anchor);
            assert!(!demos.contains(sec.anchor), "{}: heading anchor {} is also a demo's id", c.slug, sec.anchor);
            assert!(
                html.contains(&format!(" id=\"{}\">", sec.anchor)),
                "{}: no element with id {}",
                c.slug,
                sec.anchor
            );
        }
        assert!(anchors.len() >= 2 || find_reference(c.slug).is_some(), "{}: no headings indexed", c.slug);
    }
    assert!(summary("").is_some_and(|s| !s.is_empty()), "the home page has a summary");
}

#[test]
fn reference_pages_exist_and_are_not_chapters() {
    for slug in ["notation", "references", "demos"] {
        let p = find_reference(slug).unwrap_or_else(|| panic!("no reference page {slug}"));
        assert!(p.is_written());
        assert!(!CHAPTERS.iter().any(|c| c.slug == slug), "{slug} is also a chapter");
        assert_eq!(p.demo_ids().count(), 0, "{slug}: reference pages embed no demo");
    }
}

#[test]
fn search_finds_words_by_prefix_and_ranks_headings_first() {
    assert_eq!(terms("  Nadaraya–Watson, σ! "), ["nadaraya", "watson", "σ"]);
    assert!(search(SEARCH_INDEX, "", 8).is_empty());
    assert!(search(SEARCH_INDEX, " ,.; ", 8).is_empty());
    let hits = search(SEARCH_INDEX, "nadaraya", 8);
    assert!(!hits.is_empty());
    // the heading "The Nadaraya–Watson estimator" ranks first
    assert_eq!(hits[0].section.slug, "kernel-regression");
    assert_eq!(hits[0].section.heading, "The Nadaraya–Watson estimator");
    assert_eq!(hits[0].section.href(), "/kernel-regression/#the-nadaraya-watson-estimator");
    // prefix of a word: "mask" finds "masking"; a word's middle does not match ("ask")
    assert!(search(SEARCH_INDEX, "mask", 50).iter().any(|h| h.section.slug == "masking"));
    // every word must match
    assert!(search(SEARCH_INDEX, "nadaraya zzzzqx", 8).is_empty());
    // the excerpt holds the matched word as written in the text
    let h = search(SEARCH_INDEX, "induction", 8);
    assert!(h.iter().any(|h| h.matched.eq_ignore_ascii_case("induction")));
    assert!(search(SEARCH_INDEX, "the", 5).len() <= 5);
}

#[test]
fn excerpts_stay_on_character_boundaries() {
    static IDX: &[Section] = &[Section {
        slug: "x",
        page_title: "X",
        heading: "",
        anchor: "",
        text: concat!(
            "αααααααααααααααααααααααααααααααααααααααααααααααααααααααααα",
            "αααααααααααααααααααααααααααααααααααααααααααααααααααααααααα",
            " softmax ",
            "βββββββββββββββββββββββββββββββββββββββββββββββββββββββββββ",
            "βββββββββββββββββββββββββββββββββββββββββββββββββββββββββββ",
        ),
    }];
    let h = search(IDX, "softmax", 1);
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].matched, "softmax");
    assert!(h[0].before.starts_with('…') && h[0].after.ends_with('…'));
    assert_eq!(h[0].section.href(), "/x/");
    // the start of a word only: "max" is inside "softmax", not at a word's start
    assert!(search(IDX, "max", 1).is_empty());
    assert_eq!(search(IDX, "SOFT", 1).len(), 1);
}

/// Each chapter ends with its references, and each entry there is, word for word, an entry of
/// the book's bibliography (chapters/references.md), so the two never drift apart.
#[test]
fn chapters_end_with_references_found_in_the_bibliography() {
    let bib = std::fs::read_to_string("chapters/references.md").unwrap();
    let bib_items: Vec<&str> = bib.lines().filter(|l| l.starts_with("- ")).collect();
    for c in CHAPTERS.iter().filter(|c| c.is_written()) {
        let md = std::fs::read_to_string(format!("chapters/{}.md", c.slug)).unwrap();
        let at = md.rfind("\n## References\n").unwrap_or_else(|| panic!("{}: no References section", c.slug));
        assert!(!md[at + 1..].contains("\n## "), "{}: References is not the last section", c.slug);
        let items: Vec<&str> = md[at..].lines().filter(|l| l.starts_with("- ")).collect();
        assert!(!items.is_empty(), "{}: References lists nothing", c.slug);
        // Papers from before the arXiv era may have no free copy to link; the rest link one.
        assert!(items.iter().any(|i| i.contains("](http")), "{}: no reference links a copy", c.slug);
        for item in items {
            let entry = bib_items
                .iter()
                .find(|b| b.starts_with(item))
                .unwrap_or_else(|| panic!("{}: not in the bibliography: {item}", c.slug));
            assert!(
                entry.contains(&format!("](/{}/)", c.slug)),
                "{}: the bibliography does not say it cites {item}",
                c.slug
            );
        }
        assert!(md[at..].contains("](/notation/)"), "{}: References does not link the notation page", c.slug);
    }
}

mod static_html {
    use attention_live::chapters::static_pages::{escape, fill, pages};
    use attention_live::chapters::CHAPTERS;

    const TEMPLATE: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  \
        <meta name=\"description\" content=\"An interactive textbook.\">\n  <title>Attention, live</title>\n\
        <script type=\"module\">import init from '/app.js';</script>\n</head>\n<body>\n  \
        <noscript>needs JS</noscript>\n</body>\n</html>\n";

    fn attr(html: &str, prop: &str) -> String {
        let key = format!("property=\"{prop}\" content=\"");
        let at = html.find(&key).unwrap_or_else(|| panic!("no {prop}")) + key.len();
        html[at..at + html[at..].find('"').unwrap()].to_string()
    }

    #[test]
    fn every_chapter_gets_its_own_title_description_and_summary() {
        let all = pages();
        let mut titles = std::collections::HashSet::new();
        for c in CHAPTERS {
            let p = all.iter().find(|p| p.file == format!("{}/index.html", c.slug)).expect("a page per chapter");
            let html = fill(TEMPLATE, p).unwrap();
            assert!(html.contains(&format!("<title>{} — Attention, live</title>", escape(c.title))), "{html}");
            assert_eq!(attr(&html, "og:title"), escape(c.title));
            assert_eq!(attr(&html, "og:url"), format!("/{}/", c.slug));
            assert!(titles.insert(c.title));
            if c.is_written() {
                assert!(html.contains("<p class=\"static-summary\">"), "{}: summary in the body", c.slug);
                assert!(attr(&html, "og:description").len() > 40);
            }
            // one description only (the template's was replaced), the app's script kept
            assert_eq!(html.matches("name=\"description\"").count(), 1);
            assert!(html.contains("import init from '/app.js'"));
            // the body's text sits in the element the app removes
            let body = &html[html.find("<body>").unwrap()..];
            assert!(body.trim_start_matches("<body>").trim_start().starts_with("<div id=\"static-page\""));
        }
        for f in [
            "index.html",
            "404.html",
            "embed/index.html",
            "notation/index.html",
            "references/index.html",
            "demos/index.html",
        ] {
            assert!(all.iter().any(|p| p.file == f), "no {f}");
        }
    }

    #[test]
    fn a_site_address_makes_preview_urls_absolute_with_a_picture() {
        let p = pages().into_iter().find(|p| p.file == "kernel-regression/index.html").unwrap();
        // relative: no picture (a preview needs a full URL), the plain card
        let rel = fill(TEMPLATE, &p).unwrap();
        assert!(!rel.contains("og:image") && rel.contains("content=\"summary\""));
        let abs = fill(TEMPLATE, &p.at_site("https://example.org/")).unwrap();
        assert_eq!(attr(&abs, "og:url"), "https://example.org/kernel-regression/");
        // the chapter's first demo, as scripts/thumbs.mjs names its picture
        let first = CHAPTERS.iter().find(|c| c.slug == "kernel-regression").unwrap().demo_ids().next().unwrap();
        assert_eq!(attr(&abs, "og:image"), format!("https://example.org/thumbs/{first}.jpg"));
        assert!(abs.contains("content=\"summary_large_image\""));
    }

    #[test]
    fn filling_twice_changes_nothing_and_text_is_escaped() {
        let p = pages().into_iter().find(|p| p.file == "404.html").unwrap();
        let once = fill(TEMPLATE, &p).unwrap();
        assert_eq!(fill(&once, &p).unwrap(), once);
        for c in CHAPTERS.iter().filter(|c| c.is_written()) {
            assert!(once.contains(&format!("<a href=\"/{}/\">", c.slug)), "404 lists {}", c.slug);
        }
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        let mut evil = p.clone();
        evil.title = "</title><script>x</script>".into();
        let html = fill(TEMPLATE, &evil).unwrap();
        assert!(!html.contains("<script>x"));
        assert!(fill("<html><body></body></html>", &p).unwrap_err().contains("<title>"));
    }

    /// The page's wasm has no prose (`ui::prose`): each chapter's and reference page's static
    /// HTML carries it, every part in order, under the page's prose id, inert in a template
    /// after the element the app removes; filling twice keeps one copy.
    #[test]
    fn every_written_page_carries_its_prose_for_the_app() {
        use attention_live::chapters::{Segment, PROSE_TEMPLATE, REFERENCE_PAGES};
        let all = pages();
        for c in CHAPTERS.iter().chain(REFERENCE_PAGES) {
            let p = all.iter().find(|p| p.file == format!("{}/index.html", c.slug)).unwrap();
            let html = fill(TEMPLATE, p).unwrap();
            let open = format!("<template id=\"{PROSE_TEMPLATE}\" data-slug=\"{}\" data-prose=\"", c.slug);
            if !c.is_written() {
                assert!(!html.contains(PROSE_TEMPLATE), "{}: a coming chapter has no prose", c.slug);
                continue;
            }
            assert_eq!(c.prose_id.len(), 16, "{}", c.slug);
            let at = html.find(&open).unwrap_or_else(|| panic!("{}: no prose template", c.slug));
            assert!(html[at..].starts_with(&format!("{open}{}\">", c.prose_id)));
            assert!(at > html.find("<div id=\"static-page\"").unwrap());
            let parts: String = c
                .body
                .unwrap()
                .iter()
                .filter_map(|s| if let Segment::Html(h) = s { Some(format!("<div>{h}</div>")) } else { None })
                .collect();
            assert!(!parts.is_empty() && html[at..].contains(&format!("\">{parts}</template>")), "{}", c.slug);
            assert_eq!(fill(&html, p).unwrap(), html, "{}: filling twice", c.slug);
        }
        let ids: std::collections::HashSet<_> =
            CHAPTERS.iter().chain(REFERENCE_PAGES).filter(|c| c.is_written()).map(|c| c.prose_id).collect();
        assert_eq!(ids.len(), CHAPTERS.iter().chain(REFERENCE_PAGES).filter(|c| c.is_written()).count());
        for f in ["index.html", "404.html", "embed/index.html"] {
            let p = all.iter().find(|p| p.file == f).unwrap();
            assert!(!fill(TEMPLATE, p).unwrap().contains(PROSE_TEMPLATE), "{f} has no prose");
        }
    }
}

/// The search index the page fetches (`search.json`, not in the page's wasm): the same
/// sections as `SEARCH_INDEX`, and the hash the page checks it against.
#[test]
fn the_search_file_holds_the_index_and_matches_its_hash() {
    use attention_live::chapters::{SEARCH_INTEGRITY, SEARCH_JSON};
    use sha2::{Digest, Sha256};
    let rows: Vec<[String; 5]> = serde_json::from_str(SEARCH_JSON).expect("search.json is a list of 5-string rows");
    assert_eq!(rows.len(), SEARCH_INDEX.len());
    for (r, s) in rows.iter().zip(SEARCH_INDEX) {
        assert_eq!(
            [s.slug, s.page_title, s.heading, s.anchor, s.text],
            [&r[0], &r[1], &r[2], &r[3], &r[4]].map(|x| x.as_str())
        );
    }
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let digest = Sha256::digest(SEARCH_JSON.as_bytes());
    let mut b64 = String::new();
    for chunk in digest.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            b64.push(if i <= chunk.len() { B64[(n >> (18 - 6 * i)) as usize & 63] as char } else { '=' });
        }
    }
    assert_eq!(SEARCH_INTEGRITY, format!("sha256-{b64}"));
    assert!(SEARCH_JSON.contains("Nadaraya"));
}

/// The structure of the book's MathML: every element that takes a fixed number of children (a
/// fraction, a root, a script) has exactly that number in every equation the site ships, the
/// renderer mends what pulldown-latex breaks for valid LaTeX (an operator name's thin space
/// inside a script element), and refuses every other malformed equation with its source and
/// line, as it refuses an unknown command.
mod mathml_structure {

    use attention_live::chapters::render::{mathml_structure, render_chapter, tex_to_mathml};
    use attention_live::chapters::{Segment, CHAPTERS, HOME_HTML, REFERENCE_PAGES};
    use attention_live::exercises::{Exercise, Task};

    /// Every `<math …>…</math>` in `html`.
    fn equations(html: &str) -> Vec<&str> {
        let mut found = Vec::new();
        let mut rest = html;
        while let Some(start) = rest.find("<math") {
            let len = rest[start..].find("</math>").expect("an equation is never closed") + "</math>".len();
            found.push(&rest[start..start + len]);
            rest = &rest[start + len..];
        }
        found
    }

    /// Every text of an exercise the reader sees, as HTML.
    fn exercise_texts(e: &Exercise) -> Vec<&'static str> {
        let mut texts = vec![e.question, e.solution];
        texts.extend(e.hints);
        match e.task {
            Task::Compute { mistakes, .. } => texts.extend(mistakes.iter().map(|m| m.message)),
            Task::Predict { choices, .. } => texts.extend(choices),
            _ => {}
        }
        texts
    }

    /// Renders one equation, inline, that must render cleanly.
    fn clean(tex: &str) -> String {
        let mut problems = Vec::new();
        let mathml = tex_to_mathml(tex, false, &mut problems);
        assert!(problems.is_empty(), "{tex}: {problems:?}");
        assert!(mathml_structure(&mathml).is_empty(), "{tex}: {mathml}");
        mathml
    }

    #[test]
    fn every_equation_the_site_ships_is_well_formed() {
        let mut checked = 0;
        let mut check = |page: &str, html: &str| {
            for eq in equations(html) {
                let found = mathml_structure(eq);
                assert!(found.is_empty(), "{page}: {found:?} in {eq}");
                checked += 1;
            }
        };
        for page in CHAPTERS.iter().chain(REFERENCE_PAGES).filter(|c| c.is_written()) {
            for segment in page.body.unwrap() {
                match segment {
                    Segment::Html(html) => check(page.slug, html),
                    Segment::Exercise(e) => exercise_texts(e).into_iter().for_each(|t| check(page.slug, t)),
                    Segment::Demo(_) | Segment::Bad(_) => {}
                }
            }
        }
        check("home", HOME_HTML);
        assert!(checked > 1000, "only {checked} equations found");
    }

    #[test]
    fn every_chapter_file_renders_without_problems() {
        // The build refuses a chapter with a problem; this names the file and the line when one does.
        let mut files = 0;
        for entry in std::fs::read_dir("chapters").unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                let rendered = render_chapter(&std::fs::read_to_string(&path).unwrap());
                assert!(rendered.problems.is_empty(), "{}: {:?}", path.display(), rendered.problems);
                files += 1;
            }
        }
        assert!(files >= 15, "only {files} chapter files");
    }

    #[test]
    fn an_operator_name_as_a_script_base_keeps_its_script_structure() {
        // pulldown-latex writes the thin space before an operator name inside the script element
        // the name is the base of; the renderer moves it in front: "log" upright, only the 2 small.
        let entropy = clean(r"H = -\sum_i w_i \log_2 w_i");
        let log2 = r#"<mspace width="0.1667em" /><msub><mi>log</mi><mn>2</mn></msub>"#;
        assert!(entropy.contains(&format!(r#"<msub><mi>w</mi><mi>i</mi></msub>{log2}"#)), "{entropy}");
        assert!(!entropy.contains("<msub><mspace"), "{entropy}");
        let cosine = clean(concat!(
            r"\operatorname{wpe}_p \cdot \operatorname{wpe}_q",
            r" / (\lVert \operatorname{wpe}_p \rVert \, \lVert \operatorname{wpe}_q \rVert)"
        ));
        let wpe_q = r#"<mi>⋅</mi><mspace width="0.1667em" /><msub><mi>wpe</mi><mi>q</mi></msub>"#;
        assert!(cosine.contains(wpe_q), "{cosine}");
        assert_eq!(cosine.matches("<msub><mi>wpe</mi>").count(), 4, "{cosine}");
        // The same for every script element, and in display mode, where `\lim` takes its limit below.
        assert!(clean(r"x \sin^2 y").contains(r#"<mspace width="0.1667em" /><msup><mi>sin</mi><mn>2</mn></msup>"#));
        assert!(clean(r"x \log_2^3 y").contains(r#"<mspace width="0.1667em" /><msubsup><mi>log</mi>"#));
        let mut problems = Vec::new();
        let limit = tex_to_mathml(r"x \lim_{n} y", true, &mut problems);
        assert!(problems.is_empty() && limit.contains(r#"<mspace width="0.1667em" /><munder><mi>lim</mi>"#), "{limit}");
        // An operator name as the script itself: no space between a base and its script.
        assert!(clean(r"x^\sin").contains("<msup><mi>x</mi><mi>sin</mi></msup>"));
        // Nothing else moves: an operator name that is no script base, a space written as `\,`.
        assert!(clean(r"x \log y").contains(r#"<mi>x</mi><mspace width="0.1667em" /><mi>log</mi>"#));
        assert!(clean(r"\sum_i w_i \, x").contains(r#"<mspace width="0.16666667em" /><mi>x</mi>"#));
    }

    #[test]
    fn fixed_arity_elements_with_another_number_of_children_are_refused() {
        // What pulldown-latex writes for `w_i \log_2 w_i` when nothing mends it.
        let unmended = concat!(
            r#"<math display="inline"><msub><mi>w</mi><mi>i</mi></msub>"#,
            r#"<msub><mspace width="0.1667em" /><mi>log</mi><mn>2</mn></msub><mo>⁡</mo><mi>w</mi></math>"#
        );
        assert_eq!(mathml_structure(unmended), ["<msub> has 3 element children (mspace, mi, mn), it takes 2"]);
        for (mathml, want) in [
            ("<math><mfrac><mi>a</mi></mfrac></math>", "<mfrac> has 1 element children (mi), it takes 2"),
            ("<math><mroot><mi>a</mi><mn>3</mn><mn>4</mn></mroot></math>", "<mroot> has 3"),
            ("<math><msup><mi>a</mi></msup></math>", "<msup> has 1"),
            (
                "<math><msubsup><mi>a</mi><mi>b</mi></msubsup></math>",
                "<msubsup> has 2 element children (mi, mi), it takes 3",
            ),
            ("<math><munder><mi>a</mi><mi>b</mi><mi>c</mi></munder></math>", "<munder> has 3"),
            ("<math><mover></mover></math>", "<mover> has 0 element children (), it takes 2"),
            ("<math><munderover><mi>a</mi><mi>b</mi></munderover></math>", "<munderover> has 2"),
            // Nested: the inner element is counted as one child of the outer, and checked itself.
            ("<math><mfrac><msub><mi>a</mi></msub><mn>2</mn></mfrac></math>", "<msub> has 1"),
        ] {
            let found = mathml_structure(mathml);
            assert!(found.len() == 1 && found[0].starts_with(want), "{mathml}: {found:?}");
        }
        // Sound markup passes: elements of any arity, an empty element, text with `<`, comments.
        for mathml in [
            "<math><msqrt><mi>a</mi><mo>+</mo><mi>b</mi></msqrt><mrow></mrow><mspace width=\"1em\" /></math>",
            "<math><mi>j</mi><mo><</mo><mi>t</mi><mo>></mo><mi>x</mi></math>",
            "<math><mfrac linethickness=\"0em\"><mrow><mi>a</mi></mrow><mrow/></mfrac><!-- a > b --></math>",
            "<munderover><mo>∑</mo><mi>i</mi><mi>n</mi></munderover><msub style=\"a>b\"><mi>w</mi><mi>i</mi></msub>",
            "",
            "no markup at all",
        ] {
            assert_eq!(mathml_structure(mathml), Vec::<String>::new(), "{mathml}");
        }
    }

    #[test]
    fn a_malformed_equation_is_refused_with_its_source_and_line() {
        // pulldown-latex accepts `^\displaystyle`, which TeX refuses, and writes a superscript with
        // nothing in the script's place.
        let r = render_chapter("One.\n\nTwo\nthree $x^\\displaystyle y$ four.\n");
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        let p = &r.problems[0];
        assert!(p.starts_with("line 4: malformed MathML for \"x^\\\\displaystyle y\": <msup> has 1 element"), "{p}");
        let attention_live::chapters::render::RawSegment::Html(html) = &r.segments[0] else { unreachable!() };
        assert!(html.contains("[equation could not be rendered]") && !html.contains("<msup"), "{html}");
    }

    #[test]
    fn broken_markup_is_reported_never_panicked_on() {
        for (mathml, want) in [
            ("<math><mi>a</mo></math>", "</mo> closes <mi>"),
            ("<math></math></mi>", "</mi> closes no element"),
            ("<mrow><mi>a</mi>", "<mrow> is never closed"),
            ("<math><mi title=\"a>", "a tag is never ended"),
        ] {
            let found = mathml_structure(mathml);
            assert!(found.len() == 1 && found[0].starts_with(want), "{mathml}: {found:?}");
        }
        // Every cut of a real equation gets an answer; every cut after its first tag is refused.
        let whole = clean(r"H = -\sum_i w_i \log_2 w_i \le \frac{a}{b} < \sqrt[3]{x}");
        for (cut, _) in whole.char_indices().skip(2) {
            assert!(!mathml_structure(&whole[..cut]).is_empty(), "{}", &whole[..cut]);
            let _ = mathml_structure(&whole[cut..]);
        }
        for garbage in ["<", "</", "<>", "< mi>", "<!", "<?x", "<a/", "<\u{00e9}>", "</ >", "<a b='>'>", ">>></a"] {
            let _ = mathml_structure(garbage);
        }
    }
}
