//! Search across the book's pages: an index of sections (page, heading, plain text) built at
//! build time by `build.rs`, searched here in memory. Nothing is sent anywhere.
//!
//! A section matches when every word of the query occurs in it (its page title, heading or
//! text), case-insensitively and as a prefix of a word ("mask" finds "masking"). Hits in a
//! heading or a page title rank above hits in the text.

/// One section of a page, as the index stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub slug: &'static str,
    pub page_title: &'static str,
    /// "" for the opening of a page, before its first heading.
    pub heading: &'static str,
    /// The heading's element id ("" for a page's opening).
    pub anchor: &'static str,
    pub text: &'static str,
}

impl Section {
    /// Where a hit leads: the page, and the heading within it.
    pub fn href(&self) -> String {
        if self.anchor.is_empty() {
            format!("/{}/", self.slug)
        } else {
            format!("/{}/#{}", self.slug, self.anchor)
        }
    }
}

/// A matching section with a short excerpt around the first match in its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub section: &'static Section,
    pub score: u32,
    /// The excerpt: text before the match, the matched word, text after.
    pub before: String,
    pub matched: String,
    pub after: String,
}

/// The query's words, lower case: letters and digits (any script), everything else a break.
pub fn terms(query: &str) -> Vec<String> {
    query.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| w.to_lowercase()).collect()
}

/// Byte offsets where `term` starts a word of `hay` (`hay` already lower case).
fn word_starts<'a>(hay: &'a str, term: &'a str) -> impl Iterator<Item = usize> + 'a {
    hay.match_indices(term)
        .map(|(i, _)| i)
        .filter(move |&i| hay[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric()))
}

/// Searches `index` for `query`; at most `limit` hits, best first (ties keep the book's order).
pub fn search(index: &'static [Section], query: &str, limit: usize) -> Vec<Hit> {
    let words = terms(query);
    if words.is_empty() {
        return Vec::new();
    }
    let mut hits = Vec::new();
    for s in index {
        let title = s.page_title.to_lowercase();
        let heading = s.heading.to_lowercase();
        // ASCII lower case keeps every byte offset, so the excerpt can be cut from the original.
        let text = s.text.to_ascii_lowercase();
        let mut score = 0u32;
        let mut all = true;
        for w in &words {
            let in_heading = word_starts(&heading, w).next().is_some();
            let in_title = word_starts(&title, w).next().is_some();
            let in_text = word_starts(&text, w).take(20).count() as u32;
            if !in_heading && !in_title && in_text == 0 {
                all = false;
                break;
            }
            score += 20 * u32::from(in_heading) + 8 * u32::from(in_title) + in_text;
        }
        if !all {
            continue;
        }
        // The excerpt centres on the first word's first match in the text, if it has one.
        let at = words.iter().find_map(|w| word_starts(&text, w).next().map(|i| (i, w.len())));
        let (before, matched, after) = excerpt(s.text, at);
        hits.push(Hit { section: s, score, before, matched, after });
    }
    // A stable sort keeps the book's order among equal scores.
    hits.sort_by_key(|h| std::cmp::Reverse(h.score));
    hits.truncate(limit);
    hits
}

/// About 60 characters either side of the match, cut at spaces, with "…" where cut.
fn excerpt(text: &str, at: Option<(usize, usize)>) -> (String, String, String) {
    const SIDE: usize = 60;
    let Some((start, len)) = at else {
        let head: String = text.chars().take(2 * SIDE).collect();
        let cut = head.len() < text.len();
        return (format!("{head}{}", if cut { "…" } else { "" }), String::new(), String::new());
    };
    // The match is ASCII-lowercased in place, but the term may end inside a multibyte
    // character of the original: widen to the word's end on a character boundary.
    let mut end = (start + len).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let pre = &text[..start];
    let post = &text[end..];
    let mut before: String = pre.chars().rev().take(SIDE).collect::<Vec<_>>().into_iter().rev().collect();
    if before.len() < pre.len() {
        if let Some(sp) = before.find(' ') {
            before = before[sp + 1..].to_string();
        }
        before.insert(0, '…');
    }
    let mut after: String = post.chars().take(SIDE).collect();
    if after.len() < post.len() {
        if let Some(sp) = after.rfind(' ') {
            after.truncate(sp);
        }
        after.push('…');
    }
    (before, text[start..end].to_string(), after)
}
