//! A chapter's markdown as plain text, split at its headings: the text of the search index, the
//! summary in each page's static HTML and link previews, and the anchors of the headings. Runs
//! at build time from `build.rs` and in native tests; never in the browser.
//!
//! Math becomes readable text (`$\sqrt{d}$` → "√d", `$\mathbf{W}_Q$` → "W_Q") rather than LaTeX
//! source, since these strings are shown as they are in search results and link previews.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// One stretch of a page: the text under one heading, up to the next heading. The first
/// section of a page (before any heading) has no heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainSection {
    pub heading: Option<String>,
    /// 2 for `##`, 3 for `###`, … (1 for the rare `#`).
    pub level: u8,
    /// The heading's element id, unique within the page ("" for the untitled first section).
    pub anchor: String,
    /// The paragraphs, list items and table cells under the heading, one space between them.
    pub text: String,
}

/// A page as plain text: its first paragraph and its sections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlainPage {
    /// The first paragraph of prose (for a link preview); "" when the page has none.
    pub summary: String,
    pub sections: Vec<PlainSection>,
}

/// Lines the renderer treats as demo directives (`{{…}}` on a line of its own, outside code
/// fences) are left out, as they are not prose; so are exercise blocks (answer keys are not
/// for the search index or a summary).
fn without_directives(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut in_fence = false;
    let mut in_exercise = false;
    for line in md.lines() {
        if in_exercise || (!in_fence && line.trim() == "```exercise") {
            // The opening line, then everything up to and including the closing fence.
            in_exercise = !(in_exercise && line.trim_start().starts_with("```"));
            out.push('\n');
            continue;
        }
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        let t = line.trim();
        if !in_fence && t.starts_with("{{") && t.ends_with("}}") {
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The same markdown options as the renderer, so headings and paragraphs fall where the page's
/// do.
fn options() -> Options {
    Options::ENABLE_MATH | Options::ENABLE_TABLES | Options::ENABLE_SMART_PUNCTUATION | Options::ENABLE_STRIKETHROUGH
}

/// The heading's id: lower case letters and digits, runs of anything else as one dash
/// ("Why divide by √d" → "why-divide-by-d"). Never empty.
pub fn slugify(heading: &str) -> String {
    let mut s = String::new();
    for c in heading.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    let s = s.trim_end_matches('-').to_string();
    if s.is_empty() {
        "section".to_string()
    } else {
        s
    }
}

/// Splits a page's markdown into plain-text sections, each heading with a unique anchor.
pub fn plain_page(md: &str) -> PlainPage {
    let md = without_directives(md);
    let mut page = PlainPage::default();
    let mut cur = PlainSection { heading: None, level: 0, anchor: String::new(), text: String::new() };
    let mut heading: Option<(u8, String)> = None;
    // Inside the first paragraph: its text so far (None once it has ended).
    let mut para: Option<String> = None;
    let mut seen_para = false;
    let mut in_html_block = false;
    let mut anchors: Vec<String> = Vec::new();
    for ev in Parser::new_ext(&md, options()) {
        let piece: Option<String> = match ev {
            Event::Start(Tag::Heading { level, .. }) => {
                heading = Some((heading_level(level), String::new()));
                None
            }
            Event::End(TagEnd::Heading(_)) => {
                let (level, text) = heading.take().unwrap_or_default();
                let text = squash(&text);
                if cur.heading.is_some() || !cur.text.is_empty() {
                    page.sections.push(finish(cur));
                }
                let base = slugify(&text);
                let mut anchor = base.clone();
                let mut n = 2;
                while anchors.contains(&anchor) {
                    anchor = format!("{base}-{n}");
                    n += 1;
                }
                anchors.push(anchor.clone());
                cur = PlainSection { heading: Some(text), level, anchor, text: String::new() };
                None
            }
            Event::Start(Tag::Paragraph) => {
                if !seen_para && heading.is_none() {
                    para = Some(String::new());
                }
                None
            }
            Event::End(TagEnd::Paragraph) => {
                if let Some(p) = para.take() {
                    page.summary = squash(&p);
                    seen_para = !page.summary.is_empty();
                }
                Some(" ".into())
            }
            Event::Start(Tag::HtmlBlock) => {
                in_html_block = true;
                None
            }
            Event::End(TagEnd::HtmlBlock) => {
                in_html_block = false;
                None
            }
            Event::End(TagEnd::Item | TagEnd::TableCell | TagEnd::BlockQuote(_) | TagEnd::CodeBlock) => {
                Some(" ".into())
            }
            Event::Text(t) | Event::Code(t) if !in_html_block => Some(t.to_string()),
            Event::InlineMath(t) | Event::DisplayMath(t) => Some(tex_to_text(&t)),
            Event::SoftBreak | Event::HardBreak => Some(" ".into()),
            _ => None,
        };
        let Some(piece) = piece else { continue };
        if let Some((_, h)) = heading.as_mut() {
            h.push_str(&piece);
        } else {
            if let Some(p) = para.as_mut() {
                p.push_str(&piece);
            }
            cur.text.push_str(&piece);
        }
    }
    if cur.heading.is_some() || !cur.text.trim().is_empty() {
        page.sections.push(finish(cur));
    }
    page
}

fn finish(mut s: PlainSection) -> PlainSection {
    s.text = squash(&s.text);
    s
}

fn heading_level(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Runs of white space as one space, no space before punctuation that follows math or a
/// closed span, trimmed.
fn squash(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        if !out.is_empty() && !w.starts_with([',', '.', ';', ':', ')', '!', '?']) {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// Cuts `text` to at most `max` characters at a word boundary, with "…" when it was cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    let end = cut.rfind(' ').filter(|&i| i > max / 2).unwrap_or(cut.len());
    format!("{}…", cut[..end].trim_end_matches([',', ';', ':', ' ']))
}

/// LaTeX as readable plain text: Greek letters and operators as their symbols, fonts and
/// `\text{}` dropped to their content, `\frac{a}{b}` as a/b, braces removed. Not a renderer,
/// only legible: `\operatorname{softmax}(\mathbf{Q}\mathbf{K}^\top / \sqrt{d})` →
/// "softmax(QK^⊤ / √d)".
pub fn tex_to_text(tex: &str) -> String {
    let chars: Vec<char> = tex.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let start = i + 1;
                let mut j = start;
                while j < chars.len() && chars[j].is_ascii_alphabetic() {
                    j += 1;
                }
                if j == start {
                    // \, \; \! \{ \} \\ and friends
                    match chars.get(start) {
                        Some('{') => out.push('{'),
                        Some('}') => out.push('}'),
                        Some('%') => out.push('%'),
                        Some('_') => out.push('_'),
                        Some(',' | ';' | ':' | ' ' | '\\') => out.push(' '),
                        _ => {}
                    }
                    i = start + 1;
                    continue;
                }
                let name: String = chars[start..j].iter().collect();
                i = j;
                if name == "frac" || name == "tfrac" || name == "dfrac" {
                    let (a, k) = group(&chars, i);
                    let (b, k) = group(&chars, k);
                    i = k;
                    out.push_str(&format!("{}/{}", paren(&tex_to_text(&a)), paren(&tex_to_text(&b))));
                } else if name == "sqrt" {
                    let (a, k) = group(&chars, i);
                    i = k;
                    out.push('√');
                    out.push_str(&paren(&tex_to_text(&a)));
                } else if let Some(sym) = symbol(&name) {
                    out.push_str(sym);
                } else if matches!(
                    name.as_str(),
                    "left" | "right" | "big" | "Big" | "bigl" | "bigr" | "Bigl" | "Bigr" | "displaystyle"
                ) {
                    // sizing only
                } else if matches!(name.as_str(), "begin" | "end") {
                    let (_, k) = group(&chars, i);
                    i = k;
                    out.push(' ');
                } else {
                    // \mathbf, \mathrm, \text, \operatorname, \hat, … : keep the argument.
                    let (a, k) = group(&chars, i);
                    if k != i {
                        i = k;
                        out.push_str(&tex_to_text(&a));
                    }
                }
            }
            '{' | '}' => i += 1,
            '&' => {
                out.push(' ');
                i += 1;
            }
            '~' => {
                out.push(' ');
                i += 1;
            }
            '^' | '_' => {
                // x^2 stays x^2 and W_Q stays W_Q; a braced argument loses its braces.
                out.push(c);
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    squash_spaces(&out)
}

fn squash_spaces(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `a` in parentheses unless it is a single symbol or word.
fn paren(a: &str) -> String {
    if a.chars().all(|c| c.is_alphanumeric() || c == '.') {
        a.to_string()
    } else {
        format!("({a})")
    }
}

/// The braced group (or single character) starting at `i`, skipping spaces: its content and
/// the index after it. Returns `i` unchanged when there is nothing there.
fn group(chars: &[char], mut i: usize) -> (String, usize) {
    while i < chars.len() && chars[i] == ' ' {
        i += 1;
    }
    match chars.get(i) {
        Some('{') => {
            let mut depth = 0;
            let mut j = i;
            while j < chars.len() {
                match chars[j] {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            return (chars[i + 1..j].iter().collect(), j + 1);
                        }
                    }
                    '\\' => j += 1,
                    _ => {}
                }
                j += 1;
            }
            (chars[i + 1..].iter().collect(), chars.len())
        }
        Some('\\') => {
            let mut j = i + 1;
            while j < chars.len() && chars[j].is_ascii_alphabetic() {
                j += 1;
            }
            (chars[i..j.max(i + 2).min(chars.len())].iter().collect(), j.max(i + 2).min(chars.len()))
        }
        Some(&c) if c != '}' => (c.to_string(), i + 1),
        _ => (String::new(), i),
    }
}

fn symbol(name: &str) -> Option<&'static str> {
    Some(match name {
        "alpha" => "α",
        "beta" => "β",
        "gamma" => "γ",
        "delta" => "δ",
        "Delta" => "Δ",
        "epsilon" | "varepsilon" => "ε",
        "eta" => "η",
        "theta" => "θ",
        "lambda" => "λ",
        "mu" => "μ",
        "pi" => "π",
        "rho" => "ρ",
        "sigma" => "σ",
        "Sigma" => "Σ",
        "tau" => "τ",
        "phi" | "varphi" => "φ",
        "omega" => "ω",
        "sum" => "Σ",
        "prod" => "Π",
        "top" => "⊤",
        "times" => "×",
        "cdot" => "·",
        "cdots" | "ldots" | "dots" => "…",
        "le" | "leq" => "≤",
        "ge" | "geq" => "≥",
        "ne" | "neq" => "≠",
        "approx" => "≈",
        "infty" => "∞",
        "in" => "∈",
        "to" | "rightarrow" => "→",
        "mapsto" => "↦",
        "pm" => "±",
        "propto" => "∝",
        "odot" => "⊙",
        "lVert" | "rVert" | "Vert" => "‖",
        "lvert" | "rvert" | "vert" | "mid" => "|",
        "langle" => "⟨",
        "rangle" => "⟩",
        "exp" => "exp",
        "log" => "log",
        "max" => "max",
        "min" => "min",
        "sin" => "sin",
        "cos" => "cos",
        "tanh" => "tanh",
        "quad" | "qquad" => " ",
        _ => return None,
    })
}
