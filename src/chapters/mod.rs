//! The book's chapters, in reading order, rendered at build time by `build.rs`.

pub mod offline;
#[cfg(not(target_arch = "wasm32"))]
pub mod plain;
#[cfg(not(target_arch = "wasm32"))]
pub mod render;
pub mod search;
#[cfg(not(target_arch = "wasm32"))]
pub mod security;
#[cfg(not(target_arch = "wasm32"))]
pub mod static_pages;

/// A piece of a chapter's body.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Segment {
    /// Prose, already HTML (math as MathML). Comes from our own files, never from a URL. Empty
    /// in the page's wasm, which takes a page's prose from its static HTML (`ui::prose`).
    Html(&'static str),
    /// A live demo, by registry id. An id with no registered demo shows a notice in place.
    Demo(&'static str),
    /// An exercise (chapter's end, "Check yourself"): its texts are HTML, its checks in `crate::exercises`.
    Exercise(&'static crate::exercises::Exercise),
    /// A directive or exercise block that could not be parsed; the page shows this message in place.
    Bad(&'static str),
}

#[derive(Debug, Clone, Copy)]
pub struct Chapter {
    pub slug: &'static str,
    pub title: &'static str,
    /// `None`: planned, not written yet ("coming" in the table of contents).
    pub body: Option<&'static [Segment]>,
    /// A hash of the page's prose ("" for a coming chapter): its static page carries the prose
    /// with this id, so the page's wasm can tell that it was built with the same text.
    pub prose_id: &'static str,
}

impl Chapter {
    pub fn is_written(&self) -> bool {
        self.body.is_some()
    }

    /// The exercises of this chapter, in order.
    pub fn exercises(&self) -> impl Iterator<Item = &'static crate::exercises::Exercise> {
        self.body.unwrap_or(&[]).iter().filter_map(|s| match s {
            Segment::Exercise(e) => Some(*e),
            _ => None,
        })
    }

    /// The demo ids this chapter embeds, in order.
    pub fn demo_ids(&self) -> impl Iterator<Item = &'static str> {
        self.body.unwrap_or(&[]).iter().filter_map(|s| match s {
            Segment::Demo(id) => Some(*id),
            _ => None,
        })
    }
}

include!(concat!(env!("OUT_DIR"), "/chapters_gen.rs"));

/// The search index as the site serves it (`search.json`, written by `examples/site_pages.rs`;
/// the page fetches it with `SEARCH_INTEGRITY`): `[[slug, page title, heading, anchor, text], …]`.
#[cfg(not(target_arch = "wasm32"))]
pub static SEARCH_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/search.json"));
/// The id of the element that holds a page's prose in its static HTML (`static_pages`).
pub const PROSE_TEMPLATE: &str = "page-prose";
/// Where the site serves the search index.
pub const SEARCH_FILE: &str = "search.json";

pub fn find(slug: &str) -> Option<(usize, &'static Chapter)> {
    CHAPTERS.iter().enumerate().find(|(_, c)| c.slug == slug)
}

/// The written chapters before and after chapter `index`, for "previous / next".
pub fn neighbours(index: usize) -> (Option<&'static Chapter>, Option<&'static Chapter>) {
    let prev = CHAPTERS[..index.min(CHAPTERS.len())].iter().rev().find(|c| c.is_written());
    let next = CHAPTERS.get(index + 1..).and_then(|rest| rest.iter().find(|c| c.is_written()));
    (prev, next)
}

/// The first written chapter: where "start reading" goes.
pub fn first_written() -> Option<&'static Chapter> {
    CHAPTERS.iter().find(|c| c.is_written())
}

/// A page of the "Reference" group after the chapters (notation, bibliography, demo index).
pub fn find_reference(slug: &str) -> Option<&'static Chapter> {
    REFERENCE_PAGES.iter().find(|c| c.slug == slug)
}

/// A page's summary (its first paragraph as plain text, clipped); "" for the home page's slug.
pub fn summary(slug: &str) -> Option<&'static str> {
    SUMMARIES.iter().find(|(s, _)| *s == slug).map(|(_, t)| *t)
}
