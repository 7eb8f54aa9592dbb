//! Each route's own static HTML: the built `index.html` (Trunk's output, which loads the app)
//! with the page's `<title>`, description, Open Graph tags and a short text (title, summary,
//! links to every page) in the body. A shared link then previews the chapter, a crawler or a
//! reader without JavaScript sees what the page is, and the app replaces the text when it
//! mounts (`#static-page`, removed in `ui::app`). A chapter's or reference page's file also
//! carries the page's prose, inert in a `<template id="page-prose">`: the page's wasm has no
//! prose of its own and takes it from there (`ui::prose`: from the page it was served with,
//! or fetched from the route's file on the way to another page). Also `404.html`, which static
//! hosts serve for an unknown path: the contents with a link to every page.
//!
//! Native only: `examples/site_pages.rs` writes the files after Trunk's build
//! (`scripts/build.sh`).

use super::{summary, Chapter, CHAPTERS, PROSE_TEMPLATE, REFERENCE_PAGES};
use crate::demos::DEMOS;

const SITE: &str = "Attention, live";

/// One file to write under `dist/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticPage {
    /// Relative to `dist/`: `index.html`, `masking/index.html`, `404.html`.
    pub file: String,
    /// The page's own title (the document title adds " — Attention, live").
    pub title: String,
    pub description: String,
    /// `article` for chapters and reference pages, `website` otherwise.
    pub og_type: &'static str,
    /// The page's path from the site's root ("/masking/").
    pub url: String,
    /// What the body shows until the app mounts: a heading line above the title, and whether
    /// to list every demo (the demo index).
    pub kicker: String,
    pub list_demos: bool,
    /// A picture for link previews: the chapter's first demo as `scripts/thumbs.mjs` draws it.
    /// Written as `og:image` only once `at_site` has made it absolute (previews need a full URL).
    pub image: Option<String>,
    /// The page's prose (each `Segment::Html` of its body, in order) and its id
    /// (`Chapter::prose_id`); empty for the home, embed and "not found" pages.
    pub prose: Vec<&'static str>,
    pub prose_id: &'static str,
}

impl StaticPage {
    /// The page as served from `site` (e.g. `https://example.org/book`): absolute `og:url` and
    /// `og:image`.
    pub fn at_site(mut self, site: &str) -> StaticPage {
        let site = site.trim_end_matches('/');
        self.url = format!("{site}{}", self.url);
        self.image = self.image.map(|i| format!("{site}{i}"));
        self
    }
}

/// HTML text and attribute escaping.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

fn page_for(c: &Chapter, kicker: String) -> StaticPage {
    StaticPage {
        file: format!("{}/index.html", c.slug),
        title: c.title.to_string(),
        description: summary(c.slug).unwrap_or_default().to_string(),
        og_type: "article",
        url: format!("/{}/", c.slug),
        kicker,
        list_demos: c.slug == "demos",
        image: c.demo_ids().next().map(|id| format!("/thumbs/{id}.jpg")),
        prose: c
            .body
            .unwrap_or(&[])
            .iter()
            .filter_map(|s| if let super::Segment::Html(h) = s { Some(*h) } else { None })
            .collect(),
        prose_id: c.prose_id,
    }
}

/// Every file: the home page, each written chapter (coming ones get a notice), each reference
/// page, the embed page and 404.html.
pub fn pages() -> Vec<StaticPage> {
    let mut out = vec![StaticPage {
        file: "index.html".into(),
        title: "An interactive textbook".into(),
        description: summary("").unwrap_or_default().to_string(),
        og_type: "website",
        url: "/".into(),
        kicker: SITE.into(),
        list_demos: false,
        image: None,
        prose: Vec::new(),
        prose_id: "",
    }];
    let mut number = 0;
    for c in CHAPTERS {
        if c.is_written() {
            number += 1;
            out.push(page_for(c, format!("Chapter {number}")));
        } else {
            out.push(StaticPage {
                description: format!("“{}” is a planned chapter of {SITE}, not written yet.", c.title),
                ..page_for(c, "Coming".into())
            });
        }
    }
    for p in REFERENCE_PAGES {
        out.push(page_for(p, "Reference".into()));
    }
    out.push(StaticPage {
        file: "embed/index.html".into(),
        title: "Embedded demo".into(),
        description: format!("A live demo from {SITE}, an interactive textbook about attention."),
        og_type: "website",
        url: "/embed/".into(),
        kicker: SITE.into(),
        list_demos: false,
        image: None,
        prose: Vec::new(),
        prose_id: "",
    });
    out.push(StaticPage {
        file: "404.html".into(),
        title: "Not found".into(),
        description: format!("No page of {SITE} is at this address; the contents list every chapter."),
        og_type: "website",
        url: "/404.html".into(),
        kicker: "No such page".into(),
        list_demos: false,
        image: None,
        prose: Vec::new(),
        prose_id: "",
    });
    out
}

/// The contents as plain links: chapters in order, then the reference pages.
fn contents_html() -> String {
    let mut s = String::from("<nav class=\"static-toc\" aria-label=\"Contents\"><h2>Contents</h2><ol>");
    for c in CHAPTERS {
        if c.is_written() {
            s.push_str(&format!("<li><a href=\"/{}/\">{}</a></li>", c.slug, escape(c.title)));
        } else {
            s.push_str(&format!("<li>{} (coming)</li>", escape(c.title)));
        }
    }
    s.push_str("</ol><h2>Reference</h2><ul>");
    for p in REFERENCE_PAGES {
        s.push_str(&format!("<li><a href=\"/{}/\">{}</a></li>", p.slug, escape(p.title)));
    }
    s.push_str("</ul></nav>");
    s
}

fn demos_html() -> String {
    let mut s = String::from("<ul class=\"static-demos\">");
    for d in DEMOS {
        let chapter = CHAPTERS.iter().find(|c| c.demo_ids().any(|x| x == d.id));
        let href =
            chapter.map(|c| format!("/{}/#{}", c.slug, d.id)).unwrap_or_else(|| format!("/embed/?demo={}", d.id));
        s.push_str(&format!(
            "<li><a href=\"{}\">{}</a> (<code>{}</code>{}) · <a href=\"/embed/?demo={}\">embed</a></li>",
            escape(&href),
            escape(d.title),
            d.id,
            chapter.map(|c| format!(", {}", escape(c.title))).unwrap_or_default(),
            d.id
        ));
    }
    s.push_str("</ul>");
    s
}

const META_START: &str = "<!-- page meta -->";
const META_END: &str = "<!-- /page meta -->";

/// `template` (Trunk's `index.html`) made into `page`'s file. Running it on its own output
/// gives the same result, so a rebuild never doubles anything.
pub fn fill(template: &str, page: &StaticPage) -> Result<String, String> {
    let mut html = strip_between(template, META_START, META_END);
    html = strip_static_body(&html);
    html = strip_prose(&html);
    let full_title = format!("{} — {SITE}", page.title);
    let t0 = html.find("<title>").ok_or("the template has no <title>")?;
    let t1 =
        html[t0..].find("</title>").map(|i| t0 + i + "</title>".len()).ok_or("the template's <title> is not closed")?;
    html.replace_range(t0..t1, &format!("<title>{}</title>", escape(&full_title)));
    // The template's own description is replaced by the page's.
    if let Some(d0) = html.find("<meta name=\"description\"") {
        let d1 = html[d0..].find('>').map(|i| d0 + i + 1).ok_or("unclosed description meta tag")?;
        html.replace_range(d0..d1, "");
    }
    let desc = escape(&page.description);
    let image = match &page.image {
        Some(i) if i.starts_with("http") => format!("\n  <meta property=\"og:image\" content=\"{}\">", escape(i)),
        _ => String::new(),
    };
    let card = if image.is_empty() { "summary" } else { "summary_large_image" };
    let meta = format!(
        "{META_START}\n  <meta name=\"description\" content=\"{desc}\">\n  \
         <meta property=\"og:site_name\" content=\"{SITE}\">\n  \
         <meta property=\"og:title\" content=\"{}\">\n  \
         <meta property=\"og:description\" content=\"{desc}\">\n  \
         <meta property=\"og:type\" content=\"{}\">\n  \
         <meta property=\"og:url\" content=\"{}\">{image}\n  \
         <meta name=\"twitter:card\" content=\"{card}\">\n  {META_END}",
        escape(&page.title),
        page.og_type,
        escape(&page.url)
    );
    let t_end = html.find("</title>").ok_or("the template has no <title>")? + "</title>".len();
    html.insert_str(t_end, &format!("\n  {meta}"));
    let body = html.find("<body").ok_or("the template has no <body>")?;
    let body_end = html[body..].find('>').map(|i| body + i + 1).ok_or("unclosed <body> tag")?;
    let summary =
        if page.description.is_empty() { String::new() } else { format!("<p class=\"static-summary\">{desc}</p>") };
    let block = format!(
        "\n<div id=\"static-page\" class=\"static-page\">\n<p class=\"static-site\"><a href=\"/\">{SITE}</a></p>\n\
         <p class=\"static-kicker\">{}</p>\n<h1 class=\"static-title\">{}</h1>\n{summary}\n\
         <p class=\"static-loading\">The interactive page is loading; it needs JavaScript and \
         WebAssembly.</p>\n{}{}\n</div>",
        escape(&page.kicker),
        escape(&page.title),
        if page.list_demos { demos_html() } else { String::new() },
        contents_html()
    );
    html.insert_str(body_end, &block);
    if !page.prose.is_empty() {
        // Inert (never shown, never read aloud): the app takes the prose from here.
        let mut t = format!(
            "\n<template id=\"{PROSE_TEMPLATE}\" data-slug=\"{}\" data-prose=\"{}\">",
            escape(page.file.trim_end_matches("/index.html")),
            page.prose_id
        );
        for h in &page.prose {
            t.push_str("<div>");
            t.push_str(h);
            t.push_str("</div>");
        }
        t.push_str("</template>");
        html.insert_str(body_end + block.len(), &t);
    }
    Ok(html)
}

/// `html` without a page's prose template (so that filling a filled page does not double it).
fn strip_prose(html: &str) -> String {
    let open = format!("\n<template id=\"{PROSE_TEMPLATE}\"");
    match html.find(&open) {
        Some(a) => match html[a..].find("</template>") {
            Some(b) => format!("{}{}", &html[..a], &html[a + b + "</template>".len()..]),
            None => html.to_string(),
        },
        None => html.to_string(),
    }
}

fn strip_between(s: &str, start: &str, end: &str) -> String {
    match (s.find(start), s.find(end)) {
        (Some(a), Some(b)) if b > a => {
            let mut out = s[..a].trim_end_matches([' ', '\n']).to_string();
            out.push_str(&s[b + end.len()..]);
            out
        }
        _ => s.to_string(),
    }
}

fn strip_static_body(s: &str) -> String {
    let open = "\n<div id=\"static-page\"";
    match s.find(open) {
        Some(a) => match s[a..].find("\n</div>") {
            Some(b) => format!("{}{}", &s[..a], &s[a + b + "\n</div>".len()..]),
            None => s.to_string(),
        },
        None => s.to_string(),
    }
}
