//! Turns a chapter's markdown into segments: HTML prose (LaTeX already converted to MathML, so
//! no raw LaTeX ever reaches the page) and demo directives (`{{demo: id}}` on a line of its
//! own). Runs at build time from `build.rs` and in native tests; never in the browser.
//!
//! A directive that cannot be parsed becomes a `Bad` segment: the page shows a notice there
//! and the rest of the chapter renders as usual. So does a malformed exercise block (a fenced
//! block with the info string `exercise`, `crate::exercises::format`); a valid one becomes an
//! `Exercise` segment with its texts rendered like the prose.

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

/// LaTeX to MathML Core. On a parse error, an unknown command or an error element in the
/// output, the problem is recorded (the build refuses it) and a plain-text placeholder is
/// emitted instead of raw LaTeX.
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
        return mathml;
    }
    problems.push(Problem { tex: Some(tex.to_string()), message: format!("bad LaTeX {tex:?}: {}", errors.join("; ")) });
    "<span class=\"math-error\">[equation could not be rendered]</span>".to_string()
}
