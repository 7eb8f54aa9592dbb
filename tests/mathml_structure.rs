//! The structure of the book's MathML: every element that takes a fixed number of children (a
//! fraction, a root, a script) has exactly that number in every equation the site ships, the
//! renderer mends what pulldown-latex breaks for valid LaTeX (an operator name's thin space
//! inside a script element), and refuses every other malformed equation with its source and
//! line, as it refuses an unknown command.
#![cfg(not(target_arch = "wasm32"))] // native tests (the browser tests are in tests/browser/)

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
