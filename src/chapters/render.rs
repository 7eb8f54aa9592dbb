//! Turns a chapter's markdown into segments: HTML prose (LaTeX already converted to MathML, so
//! no raw LaTeX ever reaches the page) and demo directives (`{{demo: id}}` on a line of its
//! own). Runs at build time from `build.rs` and in native tests; never in the browser.
//!
//! A directive that cannot be parsed becomes a `Bad` segment: the page shows a notice there
//! and the rest of the chapter renders as usual. So does a malformed exercise block (a fenced
//! block with the info string `exercise`, `crate::exercises::format`); a valid one becomes an
//! `Exercise` segment with its texts rendered like the prose.

use std::ops::Range;

use pulldown_cmark::{html, CowStr, Event, Options, Parser};
use pulldown_latex::{config::DisplayMode, mathml::push_mathml, Parser as TexParser, RenderConfig, Storage};

use crate::exercises::format::{self as exercise, Spec};

#[derive(Debug, Clone, PartialEq)]
pub enum RawSegment {
    Html(String),
    Demo(String),
    /// An exercise block, its texts already HTML.
    Exercise(Box<Spec>),
    Bad(String),
}

/// The rendered chapter and any problems found (bad LaTeX). Problems are build warnings and
/// test failures for the chapters we ship.
#[derive(Debug, Default)]
pub struct Rendered {
    pub segments: Vec<RawSegment>,
    pub problems: Vec<String>,
}

/// Parses one directive line, `{{demo: some-id}}`.
pub fn parse_directive(line: &str) -> Option<Result<String, String>> {
    let t = line.trim();
    let inner = t.strip_prefix("{{")?.strip_suffix("}}")?;
    let Some((name, arg)) = inner.split_once(':') else {
        return Some(Err(format!("directive \"{t}\" has no \"name: argument\" form")));
    };
    if name.trim() != "demo" {
        return Some(Err(format!("unknown directive \"{}\"", name.trim())));
    }
    let id = arg.trim();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        return Some(Err(format!("demo id \"{id}\" is not of the form lower-case-letters-digits-and-dashes")));
    }
    Some(Ok(id.to_string()))
}

pub fn render_chapter(md: &str) -> Rendered {
    let mut out = Rendered { problems: control_characters(md), ..Rendered::default() };
    let mut block = String::new();
    let mut block_start = 1; // the chapter's line number of the block's first line
    let mut in_fence = false;
    let lines: Vec<&str> = md.lines().collect();
    let mut skip_to = 0; // the line after an exercise block
    for (i, &line) in lines.iter().enumerate() {
        if i < skip_to {
            continue;
        }
        if !in_fence && line.trim() == "```exercise" {
            flush(&mut block, block_start, &mut out);
            let close = lines[i + 1..].iter().position(|l| l.trim_start().starts_with("```"));
            let Some(close) = close.map(|c| i + 1 + c) else {
                // The rest of the chapter still renders: only the opening line is dropped.
                out.segments.push(RawSegment::Bad(format!("line {}: an exercise block is never closed", i + 1)));
                continue;
            };
            out.segments.push(exercise_segment(&lines[i + 1..close].join("\n"), i + 2, &mut out.problems));
            skip_to = close + 1;
            continue;
        }
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        let directive = if in_fence { None } else { parse_directive(line) };
        match directive {
            None => {
                if block.is_empty() {
                    block_start = i + 1;
                }
                block.push_str(line);
                block.push('\n');
            }
            Some(d) => {
                flush(&mut block, block_start, &mut out);
                out.segments.push(match d {
                    Ok(id) => RawSegment::Demo(id),
                    Err(msg) => RawSegment::Bad(msg),
                });
            }
        }
    }
    flush(&mut block, block_start, &mut out);
    out
}

/// A parsed exercise block with its texts as HTML, or the reason it cannot be used. Bad LaTeX
/// in its texts is a problem, as in the prose.
fn exercise_segment(body: &str, first_line: usize, problems: &mut Vec<String>) -> RawSegment {
    match exercise::parse(body, first_line) {
        Ok(mut spec) => {
            let id = spec.id.clone();
            spec.map_text(|text| {
                let mut found = Vec::new();
                let html = inline_html(text, &mut found);
                problems.extend(found.into_iter().map(|p| format!("exercise \"{id}\": {}", p.message)));
                html
            });
            RawSegment::Exercise(Box::new(spec))
        }
        Err(msg) => RawSegment::Bad(msg),
    }
}

/// Markdown to HTML for one line of text, without the paragraph around it.
pub fn inline_html(text: &str, problems: &mut Vec<Problem>) -> String {
    let html = markdown_to_html(text, problems);
    let trimmed = html.trim_end();
    match trimmed.strip_prefix("<p>").and_then(|h| h.strip_suffix("</p>")) {
        Some(inner) if !inner.contains("<p>") => inner.to_string(),
        _ => trimmed.to_string(),
    }
}

/// Control characters other than tab and newline. A stray one is invisible in an editor and
/// silently breaks an equation: `\rVert` written through a tool that turned `\r` into a
/// carriage return renders as the letters "V e r t".
fn control_characters(md: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, line) in md.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line); // a CRLF line ending is a line ending
        for (col, ch) in line.chars().enumerate() {
            if ch.is_control() && ch != '\t' {
                found.push(format!("line {}, column {}: control character U+{:04X}", i + 1, col + 1, ch as u32));
            }
        }
    }
    found
}

fn flush(block: &mut String, first_line: usize, out: &mut Rendered) {
    if block.trim().is_empty() {
        block.clear();
        return;
    }
    let mut problems = Vec::new();
    let html = markdown_to_html(block, &mut problems);
    for p in problems {
        // The block is a verbatim run of the chapter's lines: find the equation's line in it.
        let line =
            p.tex.as_deref().and_then(|tex| block.find(tex)).map(|at| first_line + block[..at].matches('\n').count());
        out.problems.push(match line {
            Some(line) => format!("line {line}: {}", p.message),
            None => p.message,
        });
    }
    out.segments.push(RawSegment::Html(html));
    block.clear();
}

/// Something in a chapter the renderer refused: the equation's source when it is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub tex: Option<String>,
    pub message: String,
}

/// Markdown to HTML with `$…$` and `$$…$$` rendered as MathML.
pub fn markdown_to_html(md: &str, problems: &mut Vec<Problem>) -> String {
    let opts = Options::ENABLE_MATH
        | Options::ENABLE_TABLES
        | Options::ENABLE_SMART_PUNCTUATION
        | Options::ENABLE_STRIKETHROUGH;
    let mut events = Parser::new_ext(md, opts).peekable();
    let mut out = Vec::new();
    while let Some(ev) = events.next() {
        let next = match ev {
            Event::InlineMath(tex) => {
                let mathml = tex_to_mathml(&tex, false, problems);
                // Punctuation right after an equation stays on its line: a narrow column must
                // not end one line with "input q" and start the next with ". In the demo".
                let punct = match events.peek() {
                    Some(Event::Text(t)) => {
                        t.chars().take_while(|c| ".,;:!?)’”".contains(*c)).map(char::len_utf8).sum()
                    }
                    _ => 0,
                };
                if punct == 0 {
                    Event::InlineHtml(CowStr::from(mathml))
                } else {
                    let Some(Event::Text(t)) = events.next() else { unreachable!("peeked a text event") };
                    let (p, rest) = t.split_at(punct);
                    let glued = Event::InlineHtml(CowStr::from(format!("<span class=\"nobr\">{mathml}{p}</span>")));
                    if rest.is_empty() {
                        glued
                    } else {
                        out.push(glued);
                        Event::Text(CowStr::from(rest.to_string()))
                    }
                }
            }
            Event::DisplayMath(tex) => Event::Html(CowStr::from(tex_to_mathml(&tex, true, problems))),
            other => other,
        };
        out.push(next);
    }
    let mut html = String::new();
    html::push_html(&mut html, out.into_iter());
    html
}

/// LaTeX to MathML Core. On a parse error, an unknown command, an error element in the output
/// or a malformed structure (`mathml_structure`), the problem is recorded (the build refuses
/// it) and a plain-text placeholder is emitted instead of raw LaTeX.
pub fn tex_to_mathml(tex: &str, display: bool, problems: &mut Vec<Problem>) -> String {
    let storage = Storage::new();
    let events: Vec<_> = TexParser::new(tex, &storage).collect();
    let mut errors: Vec<String> = events.iter().filter_map(|e| e.as_ref().err().map(|e| e.to_string())).collect();
    let config = RenderConfig {
        display_mode: if display { DisplayMode::Block } else { DisplayMode::Inline },
        ..Default::default()
    };
    let mut mathml = String::new();
    if errors.is_empty() && push_mathml(&mut mathml, events.into_iter(), config).is_err() {
        errors.push("the MathML writer failed".to_string());
    }
    if errors.is_empty() && mathml.contains("<merror") {
        errors.push("the MathML contains an error element".to_string());
    }
    if errors.is_empty() {
        let mathml = place_operator_spaces(&mathml);
        let malformed = mathml_structure(&mathml);
        if malformed.is_empty() {
            return mathml;
        }
        let message = format!("malformed MathML for {tex:?}: {}", malformed.join("; "));
        problems.push(Problem { tex: Some(tex.to_string()), message });
    } else {
        let message = format!("bad LaTeX {tex:?}: {}", errors.join("; "));
        problems.push(Problem { tex: Some(tex.to_string()), message });
    }
    "<span class=\"math-error\">[equation could not be rendered]</span>".to_string()
}

/// The thin space pulldown-latex writes between an ordinary atom and an operator name after it
/// (`\log`, `\operatorname{…}`).
const OPERATOR_SPACE: &str = "<mspace width=\"0.1667em\" />";

/// The MathML elements that take a fixed number of element children, with that number. With
/// another number a browser still draws something, wrongly: an `msub` with three children
/// draws its second and third children at script size.
const FIXED_ARITY: [(&str, usize); 8] = [
    ("mfrac", 2),
    ("mroot", 2),
    ("msub", 2),
    ("msup", 2),
    ("msubsup", 3),
    ("munder", 2),
    ("mover", 2),
    ("munderover", 3),
];

/// The script elements: a base, then one or two scripts.
const SCRIPTS: [&str; 6] = ["msub", "msup", "msubsup", "munder", "mover", "munderover"];

fn arity(name: &str) -> Option<usize> {
    FIXED_ARITY.iter().find(|(n, _)| *n == name).map(|&(_, arity)| arity)
}

/// pulldown-latex opens a script element before it writes the base, and writes an operator
/// name's leading thin space as part of the name. So when an operator name after an ordinary
/// atom is the base of a script (`w_i \log_2 w_i`, `x \cdot \operatorname{wpe}_q`), the space
/// lands inside the script element as an extra first child,
/// `<msub><mspace …/><mi>log</mi><mn>2</mn></msub>`, which a browser draws as the space with
/// "log" and "2" both at script size; when the name is a script itself (`x^\sin`), the space
/// sits between the base and it. Moves the first kind in front of its script element,
/// `<mspace …/><msub><mi>log</mi><mn>2</mn></msub>`, and drops the second (there is no space
/// between a base and its script). Only in a script element with one child too many; markup
/// this cannot read is returned as it is, for `mathml_structure` to refuse.
fn place_operator_spaces(mathml: &str) -> String {
    // Replacements of byte ranges, in no particular order and never overlapping.
    let mut edits: Vec<(Range<usize>, &str)> = Vec::new();
    // The open elements, outermost first: name, start, and the byte ranges of their children.
    let mut open: Vec<(&str, usize, Vec<Range<usize>>)> = Vec::new();
    for tag in Tags::new(mathml) {
        let Ok(tag) = tag else { return mathml.to_string() };
        let span = match tag.kind {
            TagKind::Open => {
                open.push((tag.name, tag.span.start, Vec::new()));
                continue;
            }
            TagKind::Empty => tag.span,
            TagKind::Close => {
                let Some((name, start, children)) = open.pop().filter(|(name, ..)| *name == tag.name) else {
                    return mathml.to_string();
                };
                let extra = SCRIPTS.contains(&name) && arity(name).is_some_and(|a| children.len() == a + 1);
                let space = children.iter().position(|c| &mathml[c.clone()] == OPERATOR_SPACE).filter(|_| extra);
                if let Some(i) = space {
                    if i == 0 {
                        edits.push((start..start, OPERATOR_SPACE));
                    }
                    edits.push((children[i].clone(), ""));
                }
                start..tag.span.end
            }
        };
        if let Some((_, _, children)) = open.last_mut() {
            children.push(span);
        }
    }
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out = String::with_capacity(mathml.len());
    let mut at = 0;
    for (range, with) in edits {
        out.push_str(&mathml[at..range.start]);
        out.push_str(with);
        at = range.end;
    }
    out.push_str(&mathml[at..]);
    out
}

/// What is wrong with the structure of a piece of MathML, as the build reports it: an element
/// of fixed arity (`FIXED_ARITY`) with another number of element children, a closing tag that
/// closes nothing or another element, an element never closed, a tag never ended. Empty when
/// the structure is sound. Reads the markup the renderer writes (tags, quoted attributes, text);
/// any other input gets an answer too, never a panic.
pub fn mathml_structure(mathml: &str) -> Vec<String> {
    let mut found = Vec::new();
    // The open elements, outermost first, each with the names of its element children so far.
    let mut open: Vec<(&str, Vec<&str>)> = Vec::new();
    for tag in Tags::new(mathml) {
        let tag = match tag {
            Ok(tag) => tag,
            Err(message) => {
                found.push(message);
                break;
            }
        };
        match tag.kind {
            TagKind::Open => {
                if let Some((_, children)) = open.last_mut() {
                    children.push(tag.name);
                }
                open.push((tag.name, Vec::new()));
            }
            TagKind::Empty => {
                if let Some((_, children)) = open.last_mut() {
                    children.push(tag.name);
                }
            }
            TagKind::Close => {
                let name = tag.name;
                match open.pop() {
                    Some((opened, children)) if opened == name => match arity(name) {
                        Some(arity) if children.len() != arity => found.push(format!(
                            "<{name}> has {} element children ({}), it takes {arity}",
                            children.len(),
                            children.join(", ")
                        )),
                        _ => {}
                    },
                    Some((opened, _)) => {
                        found.push(format!("</{name}> closes <{opened}>"));
                        break; // what follows would be counted in the wrong elements
                    }
                    None => {
                        found.push(format!("</{name}> closes no element"));
                        break;
                    }
                }
            }
        }
    }
    if found.is_empty() {
        found.extend(open.iter().rev().map(|(name, _)| format!("<{name}> is never closed")));
    }
    found
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TagKind {
    /// `<mi>`, `<msub style="…">`
    Open,
    /// `</mi>`
    Close,
    /// `<mspace … />`
    Empty,
}

/// One tag of the markup: its element's name, its kind and its byte range.
#[derive(Debug)]
struct Tag<'a> {
    name: &'a str,
    kind: TagKind,
    span: Range<usize>,
}

/// The tags of a piece of markup in order, comments and declarations left out; at a tag that
/// never ends, an error and nothing after it. As in HTML, `<` starts a tag only before a
/// letter, `/` and a letter, `!` or `?`: pulldown-latex writes the relation `<` unescaped,
/// `<mo><</mo>`, and the browser reads it as text.
struct Tags<'a> {
    markup: &'a str,
    at: usize,
}

impl<'a> Tags<'a> {
    fn new(markup: &'a str) -> Self {
        Tags { markup, at: 0 }
    }
}

impl<'a> Iterator for Tags<'a> {
    type Item = Result<Tag<'a>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let start = self.at + self.markup.get(self.at..)?.find('<')?;
            let from = &self.markup[start..];
            let mut after = from[1..].chars();
            let first = after.next();
            let starts_tag = match first {
                Some('/') => after.next().is_some_and(|c| c.is_ascii_alphabetic()),
                Some(c) => c.is_ascii_alphabetic() || c == '!' || c == '?',
                None => false,
            };
            if !starts_tag {
                self.at = start + 1;
                continue;
            }
            let Some(end) = tag_end(from) else {
                self.at = self.markup.len();
                return Some(Err(format!("a tag is never ended: {:?}", clip(from))));
            };
            self.at = start + end + 1;
            let inner = &from[1..end];
            if matches!(first, Some('!' | '?')) {
                continue; // a comment or a declaration: no element
            }
            let (kind, inner) = match (inner.strip_prefix('/'), inner.strip_suffix('/')) {
                (Some(closing), _) => (TagKind::Close, closing),
                (None, Some(empty)) => (TagKind::Empty, empty),
                (None, None) => (TagKind::Open, inner),
            };
            let name = inner.split(|c: char| c.is_ascii_whitespace()).next().unwrap_or("");
            return Some(Ok(Tag { name, kind, span: start..self.at }));
        }
    }
}

/// The index of the `>` that ends the tag `tag` starts with (at its `<`), skipping quoted
/// attribute values; `None` when the input ends first.
fn tag_end(tag: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in tag.char_indices().skip(1) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// The first characters of `text`, for a message.
fn clip(text: &str) -> String {
    let mut clipped: String = text.chars().take(40).collect();
    if clipped.len() < text.len() {
        clipped.push('…');
    }
    clipped
}
