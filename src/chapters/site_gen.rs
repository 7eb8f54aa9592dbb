//! Build-time only (`build.rs` includes this file): the data that goes with each page's prose.
//! Heading ids in the rendered HTML (so search results and links can point at a section), the
//! search index of every page's sections, each page's summary (its first paragraph, for link
//! previews and the static HTML), and the reference pages listed in `chapters/REFERENCE`.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::plain::{clip, plain_page, PlainPage};
use crate::render::{render_chapter, RawSegment};

/// What the pages add to `chapters_gen.rs` besides their bodies.
#[derive(Default)]
pub struct Site {
    sections: String,
    summaries: String,
    /// The search index as JSON (`search.json`, which the page fetches): one array per
    /// section, `[slug, page title, heading, anchor, text]`.
    search_json: String,
    /// For the page's wasm: the prose is left out of the bodies (`Segment::Html("")`) and the
    /// search index out of the code; each route's static HTML carries its prose and the page
    /// fetches the index (`ui::prose`, `ui::search`).
    lean: bool,
}

/// Longest summary kept, in characters: link previews show about this much.
pub const SUMMARY_CHARS: usize = 300;

impl Site {
    /// `lean`: for the page's wasm (no prose, no search index in the code).
    pub fn new(lean: bool) -> Site {
        Site { lean, ..Site::default() }
    }

    /// A written page: its body as Rust code (`Some(&[Segment::…])`) and its prose's id (a hash
    /// of its prose, which the static page carries beside the prose), its headings given ids,
    /// its sections added to the search index and its summary recorded. Problems (bad LaTeX,
    /// headings the HTML and the plain text disagree on) go to `problems`.
    pub fn page(
        &mut self,
        slug: &str,
        title: &str,
        md: &str,
        segments: Vec<RawSegment>,
        problems: &mut Vec<String>,
    ) -> (String, String) {
        let plain = plain_page(md);
        let mut prose = Sha256::new();
        let anchors: Vec<&str> =
            plain.sections.iter().filter(|s| s.heading.is_some()).map(|s| s.anchor.as_str()).collect();
        let mut next = 0;
        let mut code = String::from("Some(&[");
        for s in segments {
            let _ = match s {
                RawSegment::Html(h) => {
                    let h = with_heading_ids(&h, &anchors, &mut next);
                    if h.contains("<template") || h.contains("</template") {
                        problems.push(format!(
                            "{slug}: a <template> tag in the prose (its static page holds the prose in one)"
                        ));
                    }
                    prose.update(h.as_bytes());
                    prose.update([0]);
                    write!(code, "Segment::Html({:?}),", if self.lean { "" } else { h.as_str() })
                }
                RawSegment::Demo(id) => write!(code, "Segment::Demo({id:?}),"),
                RawSegment::Exercise(e) => write!(code, "Segment::Exercise(&{}),", e.rust_code()),
                RawSegment::Bad(msg) => write!(code, "Segment::Bad({msg:?}),"),
            };
        }
        code.push_str("])");
        if next != anchors.len() {
            problems.push(format!("{slug}: {} headings in the text but {next} in the HTML", anchors.len()));
        }
        self.add_plain(slug, title, &plain);
        let id: String = prose.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
        (code, id)
    }

    /// The home page's summary (slug ""), not indexed for search.
    pub fn home(&mut self, md: &str) {
        let plain = plain_page(md);
        let _ = writeln!(self.summaries, "    ({:?}, {:?}),", "", clip(&plain.summary, SUMMARY_CHARS));
    }

    fn add_plain(&mut self, slug: &str, title: &str, plain: &PlainPage) {
        let _ = writeln!(self.summaries, "    ({slug:?}, {:?}),", clip(&plain.summary, SUMMARY_CHARS));
        for s in &plain.sections {
            let _ = writeln!(
                self.sections,
                "    crate::chapters::search::Section {{ slug: {slug:?}, page_title: {title:?}, \
                 heading: {:?}, anchor: {:?}, text: {:?} }},",
                s.heading.as_deref().unwrap_or(""),
                s.anchor,
                s.text
            );
            let fields = [slug, title, s.heading.as_deref().unwrap_or(""), s.anchor.as_str(), s.text.as_str()];
            let row: Vec<String> = fields.iter().map(|f| json_string(f)).collect();
            let sep = if self.search_json.is_empty() { "[" } else { ",\n" };
            let _ = write!(self.search_json, "{sep}[{}]", row.join(","));
        }
    }

    /// The search index as JSON, for `search.json`.
    pub fn search_json(&self) -> String {
        if self.search_json.is_empty() {
            "[]\n".to_string()
        } else {
            format!("{}]\n", self.search_json)
        }
    }

    /// `REFERENCE_PAGES`: the pages after the chapters (notation, bibliography, demo index),
    /// from `chapters/REFERENCE` (same `slug | title | file` lines as ORDER).
    pub fn reference_pages(&mut self, dir: &std::path::Path, problems: &mut Vec<String>) -> String {
        let mut code = String::from("pub static REFERENCE_PAGES: &[Chapter] = &[\n");
        let list = std::fs::read_to_string(dir.join("REFERENCE")).unwrap_or_default();
        for (lineno, line) in list.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let parts: Vec<&str> = line.split('|').map(str::trim).collect();
            let [slug, title, source] = parts[..] else {
                problems.push(format!("chapters/REFERENCE line {}: expected `slug | title | file`", lineno + 1));
                continue;
            };
            println!("cargo:rerun-if-changed=chapters/{source}");
            let md = match std::fs::read_to_string(dir.join(source)) {
                Ok(md) => md,
                Err(e) => {
                    problems.push(format!("chapters/{source}: {e}"));
                    continue;
                }
            };
            let rendered = render_chapter(&md);
            problems.extend(rendered.problems.iter().map(|p| format!("chapters/{source}: {p}")));
            let (body, id) = self.page(slug, title, &md, rendered.segments, problems);
            let _ =
                writeln!(code, "    Chapter {{ slug: {slug:?}, title: {title:?}, body: {body}, prose_id: {id:?} }},");
        }
        code.push_str("];\n");
        code
    }

    /// `SEARCH_INDEX` (not in the page's wasm), `SEARCH_INTEGRITY` (the SHA-256 of
    /// `search.json`, as a fetch's `integrity`) and `SUMMARIES` as Rust code.
    pub fn code(&self) -> String {
        let hash = base64(&Sha256::digest(self.search_json().as_bytes()));
        let index = if self.lean {
            String::new()
        } else {
            format!("pub static SEARCH_INDEX: &[crate::chapters::search::Section] = &[\n{}];\n", self.sections)
        };
        format!(
            "{index}/// The SHA-256 of `search.json` (`SEARCH_JSON` natively), as a fetch's `integrity`.\n\
             pub static SEARCH_INTEGRITY: &str = \"sha256-{hash}\";\n\
             /// Each page's summary by slug (\"\" for the home page).\n\
             pub static SUMMARIES: &[(&str, &str)] = &[\n{}];\n",
            self.summaries
        )
    }
}

/// Gives the `<h1>`…`<h6>` tags of `html` the ids `anchors[*next..]`, in order. The renderer
/// writes bare `<h2>` tags (heading attributes are off), so the tags are found exactly.
pub fn with_heading_ids(html: &str, anchors: &[&str], next: &mut usize) -> String {
    let mut out = String::with_capacity(html.len() + 64);
    let mut rest = html;
    while let Some(at) = find_heading(rest) {
        out.push_str(&rest[..at]);
        let tag = &rest[at..at + 4]; // "<h2>"
        let level = &tag[2..3];
        match anchors.get(*next) {
            Some(id) => {
                let _ = write!(out, "<h{level} id=\"{id}\">");
                *next += 1;
            }
            None => out.push_str(tag),
        }
        rest = &rest[at + 4..];
    }
    out.push_str(rest);
    out
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Standard base64 with padding (for an `integrity` value).
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() { A[(n >> (18 - 6 * i)) as usize & 63] as char } else { '=' });
        }
    }
    out
}

fn find_heading(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    (0..b.len().saturating_sub(3))
        .find(|&i| b[i] == b'<' && b[i + 1] == b'h' && (b'1'..=b'6').contains(&b[i + 2]) && b[i + 3] == b'>')
}
