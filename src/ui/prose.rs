//! A page's prose, which the page's wasm does not carry: every route's static HTML has it
//! already (`chapters::static_pages`, inert in a `<template id="page-prose">`), and carrying it
//! twice made the first download a third larger. The page the reader arrived on gives its own
//! at start-up ([`take_from_document`]); another page's is read from its route's file
//! (`/<slug>/index.html`, which the service worker keeps for offline reading) the first time
//! the reader opens it, and kept for the session. A page whose prose cannot be had shows a
//! message in its place; its demos and exercises work all the same.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::chapters::{Chapter, Segment, PROSE_TEMPLATE};

/// A page's prose: each `Segment::Html` of its body, in order, as HTML.
pub type Prose = Rc<Vec<String>>;

#[derive(Clone)]
enum State {
    /// On its way; each signal here changes when it ends (the view that asked first may be gone:
    /// the router makes a new one when it switches between its routes).
    Loading(Vec<RwSignal<u32>>),
    Ready(Prose),
    Failed(String),
}

thread_local! {
    static PAGES: RefCell<HashMap<&'static str, State>> = RefCell::new(HashMap::new());
}

fn html_segments(page: &Chapter) -> usize {
    page.body.unwrap_or(&[]).iter().filter(|s| matches!(s, Segment::Html(_))).count()
}

/// The prose in `doc`'s template, if it is `page`'s, of this build, with one part per segment.
fn read(doc: &web_sys::Document, page: &'static Chapter) -> Result<Prose, String> {
    let tpl = doc
        .get_element_by_id(PROSE_TEMPLATE)
        .and_then(|e| e.dyn_into::<web_sys::HtmlTemplateElement>().ok())
        .ok_or("its page holds no text")?;
    if tpl.get_attribute("data-slug").as_deref() != Some(page.slug)
        || tpl.get_attribute("data-prose").as_deref() != Some(page.prose_id)
    {
        return Err("its page is from another version of the book: reload the page".into());
    }
    let parts = tpl.content().children();
    let prose: Vec<String> = (0..parts.length()).filter_map(|i| parts.item(i)).map(|e| e.inner_html()).collect();
    if prose.len() != html_segments(page) {
        return Err("its page does not match this version of the book: reload the page".into());
    }
    Ok(Rc::new(prose))
}

/// At start-up, before the static page is removed: the prose of the page the reader arrived on.
pub fn take_from_document() {
    let doc = document();
    let Some(tpl) = doc.get_element_by_id(PROSE_TEMPLATE) else { return };
    let slug = tpl.get_attribute("data-slug").unwrap_or_default();
    let page = crate::chapters::find(&slug).map(|(_, c)| c).or_else(|| crate::chapters::find_reference(&slug));
    if let Some(page) = page {
        if let Ok(prose) = read(&doc, page) {
            PAGES.with(|p| p.borrow_mut().insert(page.slug, State::Ready(prose)));
        }
    }
    tpl.remove();
}

async fn fetch(page: &'static Chapter) -> Result<Prose, String> {
    // The prose id in the query: the browser's HTTP cache never answers with another build's page
    // (the service worker and static hosts ignore the query).
    let url = format!("/{}/index.html?v={}", page.slug, page.prose_id);
    let offline = || {
        if window().navigator().on_line() {
            "it could not be downloaded: check the connection and reload the page".to_string()
        } else {
            "the browser is offline and has not kept this page yet".to_string()
        }
    };
    let resp: web_sys::Response =
        JsFuture::from(window().fetch_with_str(&url)).await.map_err(|_| offline())?.unchecked_into();
    if !resp.ok() {
        return Err(format!("its page answered HTTP {}", resp.status()));
    }
    let text = JsFuture::from(resp.text().map_err(|_| offline())?).await.map_err(|_| offline())?;
    let text = text.as_string().unwrap_or_default();
    let parser = web_sys::DomParser::new().map_err(|_| "the browser cannot read its page")?;
    let doc = parser
        .parse_from_string(&text, web_sys::SupportedType::TextHtml)
        .map_err(|_| "the browser cannot read its page")?;
    read(&doc, page)
}

/// `page`'s prose: `Some(Ok)` when it is here, `Some(Err(why))` when it could not be had, and
/// `None` while it loads (the first call starts the download; `ready` changes when it ends, and
/// is tracked here, so a view that called this runs again then).
pub fn get(page: &'static Chapter, ready: RwSignal<u32>) -> Option<Result<Prose, String>> {
    if html_segments(page) == 0 {
        return Some(Ok(Rc::new(Vec::new())));
    }
    let state = PAGES.with(|p| p.borrow().get(page.slug).cloned());
    match state {
        Some(State::Ready(p)) => Some(Ok(p)),
        // Not tried again before a reload (the message says so): a view that runs again must
        // not start a download each time.
        Some(State::Failed(e)) => Some(Err(e)),
        Some(State::Loading(_)) => {
            ready.track();
            PAGES.with(|p| {
                if let Some(State::Loading(waiting)) = p.borrow_mut().get_mut(page.slug) {
                    waiting.push(ready);
                }
            });
            None
        }
        None => {
            ready.track();
            PAGES.with(|p| p.borrow_mut().insert(page.slug, State::Loading(vec![ready])));
            leptos::task::spawn_local(async move {
                let state = match fetch(page).await {
                    Ok(p) => State::Ready(p),
                    Err(e) => State::Failed(e),
                };
                let before = PAGES.with(|p| p.borrow_mut().insert(page.slug, state));
                if let Some(State::Loading(waiting)) = before {
                    for ready in waiting {
                        ready.try_update(|n| *n = n.wrapping_add(1));
                    }
                }
            });
            None
        }
    }
}

/// What stands in a page's place while its prose loads.
pub fn loading() -> impl IntoView {
    view! { <p class="notice prose-loading" role="status">"Loading the page…"</p> }
}

/// What stands in place of a page's prose that could not be had.
pub fn failed(why: &str) -> impl IntoView {
    view! {
        <div class="notice error prose-missing" role="alert">
            {format!("The text of this page could not be loaded: {why}. Its demos and exercises work without it.")}
        </div>
    }
}
