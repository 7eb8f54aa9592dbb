//! The search box in the header: searches the index of every page's sections that the build
//! wrote (`search.json`, `chapters::SEARCH_JSON`), in the page, as the reader types. Nothing is
//! sent anywhere. The index is not in the wasm (it is a fifth of the prose's size again): the
//! box downloads it the first time it gets the focus (the service worker keeps it for offline
//! reading), checked against the hash the build recorded, and keeps it for the session.
//!
//! Keyboard: "/" focuses the box from anywhere but a text field; ↓ and ↑ move through the
//! results, Enter opens the highlighted one, Escape clears the box (a second Escape leaves it).
//! The box is an ARIA combobox whose results are a listbox, so a screen reader announces the
//! highlighted result.

use leptos::ev;
use leptos::prelude::*;
use leptos_router::hooks::use_navigate;
use wasm_bindgen::JsCast;

use std::cell::RefCell;

use crate::chapters::search::{search, Hit, Section};
use crate::chapters::{SEARCH_FILE, SEARCH_INTEGRITY};

/// The index once downloaded (or why it could not be), for every search box of the session.
type Index = Result<&'static [Section], String>;

thread_local! {
    static INDEX: RefCell<Option<Index>> = const { RefCell::new(None) };
}

/// `search.json`'s rows (`[slug, page title, heading, anchor, text]`) as sections, kept for the
/// session (one index, read once).
fn parse_index(text: &str) -> Result<&'static [Section], String> {
    let rows = js_sys::JSON::parse(text).map_err(|_| "the index is not valid JSON")?;
    let rows: js_sys::Array = rows.dyn_into().map_err(|_| "the index is not a list")?;
    let mut out = Vec::with_capacity(rows.length() as usize);
    for row in rows.iter() {
        let row: js_sys::Array = row.dyn_into().map_err(|_| "a row of the index is not a list")?;
        let f = |i: u32| -> &'static str { Box::leak(row.get(i).as_string().unwrap_or_default().into_boxed_str()) };
        out.push(Section { slug: f(0), page_title: f(1), heading: f(2), anchor: f(3), text: f(4) });
    }
    Ok(Box::leak(out.into_boxed_slice()))
}

async fn download_index() -> Index {
    use wasm_bindgen_futures::JsFuture;
    let failed = || {
        if window().navigator().on_line() {
            "the index could not be downloaded (reload the page to try again)".to_string()
        } else {
            "the browser is offline and has not kept the index yet".to_string()
        }
    };
    let init = web_sys::RequestInit::new();
    init.set_integrity(SEARCH_INTEGRITY);
    // A query of the hash: the browser's HTTP cache never answers with another build's index.
    let tag: String = SEARCH_INTEGRITY.chars().skip(7).filter(char::is_ascii_alphanumeric).take(12).collect();
    let url = format!("/{SEARCH_FILE}?v={tag}");
    let resp: web_sys::Response =
        JsFuture::from(window().fetch_with_str_and_init(&url, &init)).await.map_err(|_| failed())?.unchecked_into();
    if !resp.ok() {
        return Err(format!("the index answered HTTP {}", resp.status()));
    }
    let text = JsFuture::from(resp.text().map_err(|_| failed())?).await.map_err(|_| failed())?;
    parse_index(&text.as_string().unwrap_or_default())
}

/// Starts the index's download unless it is here or on its way; `index` gets it.
fn load_index(index: RwSignal<Option<Index>>, started: RwSignal<bool>) {
    if let Some(done) = INDEX.with(|i| i.borrow().clone()) {
        index.set(Some(done));
        return;
    }
    if started.get_untracked() {
        return;
    }
    started.set(true);
    leptos::task::spawn_local(async move {
        let got = download_index().await;
        INDEX.with(|i| *i.borrow_mut() = Some(got.clone()));
        index.try_set(Some(got));
    });
}

/// Results shown at most.
const LIMIT: usize = 8;

/// Whether a key press belongs to a text field (where "/" is a character, not a shortcut).
fn typing_in_field(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA") || el.is_content_editable())
}

#[component]
pub fn SearchBox() -> impl IntoView {
    let query = RwSignal::new(String::new());
    let active = RwSignal::new(0usize);
    let input = NodeRef::<leptos::html::Input>::new();
    let index = RwSignal::new(INDEX.with(|i| i.borrow().clone()));
    let started = RwSignal::new(false);
    let hits = Memo::new(move |_| match index.get() {
        Some(Ok(ix)) => query.with(|q| search(ix, q, LIMIT)),
        _ => Vec::new(),
    });
    let open = move || !query.with(|q| q.trim().is_empty());

    let handle = window_event_listener(ev::keydown, move |ev| {
        if ev.key() != "/"
            || ev.ctrl_key()
            || ev.meta_key()
            || ev.alt_key()
            || ev.default_prevented()
            || typing_in_field(&ev)
        {
            return;
        }
        if let Some(el) = input.get_untracked() {
            ev.prevent_default();
            let _ = el.focus();
            el.select();
        }
    });
    on_cleanup(move || handle.remove());

    let navigate = use_navigate();
    let close = move || {
        query.set(String::new());
        active.set(0);
        if let Some(el) = input.get_untracked() {
            let _ = el.blur();
        }
    };
    let open_hit = move |i: usize| {
        let Some(href) = hits.with_untracked(|h| h.get(i).map(|h| h.section.href())) else { return };
        close();
        navigate(&href, Default::default());
    };
    let go = open_hit.clone();
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let n = hits.with_untracked(Vec::len);
        match ev.key().as_str() {
            "ArrowDown" if n > 0 => {
                ev.prevent_default();
                active.update(|a| *a = (*a + 1) % n);
            }
            "ArrowUp" if n > 0 => {
                ev.prevent_default();
                active.update(|a| *a = (*a + n - 1) % n);
            }
            "Enter" if n > 0 => {
                ev.prevent_default();
                go(active.get_untracked().min(n - 1));
            }
            "Escape" => {
                ev.prevent_default();
                if query.with_untracked(|q| q.is_empty()) {
                    close();
                } else {
                    query.set(String::new());
                }
            }
            _ => {}
        }
    };

    view! {
        <div class="search" role="search">
            <label for="search-box" class="visually-hidden">"Search the book"</label>
            <input id="search-box" type="search" class="search-box" placeholder="Search  /" autocomplete="off"
                spellcheck="false" role="combobox" aria-autocomplete="list" aria-controls="search-results"
                aria-expanded=move || if open() { "true" } else { "false" }
                aria-activedescendant=move || {
                    (open() && hits.with(|h| !h.is_empty())).then(|| format!("search-hit-{}", active.get()))
                }
                aria-keyshortcuts="/"
                node_ref=input
                prop:value=move || query.get()
                on:focus=move |_| load_index(index, started)
                on:input=move |ev| {
                    load_index(index, started);
                    query.set(event_target_value(&ev));
                    active.set(0);
                }
                on:keydown=on_key />
            <div class="search-results" hidden=move || !open()
                // Keep the focus in the box while a result is clicked.
                on:mousedown=|ev| ev.prevent_default()>
                <p class="search-status" role="status">
                    {move || {
                        let n = hits.with(Vec::len);
                        match index.get() {
                            _ if !open() => return String::new(),
                            None => return "Loading the search index…".to_string(),
                            Some(Err(why)) => return format!("Search is not available: {why}."),
                            Some(Ok(_)) => {}
                        }
                        match n {
                            0 => "No section matches every word.".to_string(),
                            1 => "1 section".to_string(),
                            n => format!("{n} sections{}", if n == LIMIT { " (the best)" } else { "" }),
                        }
                    }}
                </p>
                <ul id="search-results" role="listbox" aria-label="Search results">
                    {move || {
                        let go = open_hit.clone();
                        hits.get().into_iter().enumerate().map(|(i, h)| result(i, h, active, go.clone())).collect_view()
                    }}
                </ul>
            </div>
        </div>
    }
}

/// One result: a link (so it can also be opened in a new tab), opened in place by the router.
fn result(i: usize, h: Hit, active: RwSignal<usize>, go: impl Fn(usize) + 'static) -> impl IntoView {
    let s = h.section;
    let place =
        if s.heading.is_empty() { s.page_title.to_string() } else { format!("{} › {}", s.page_title, s.heading) };
    view! {
        // The link is the option (a link may take that role), so the option holds nothing
        // interactive and can still be opened in a new tab.
        <li role="none" class="search-hit" class:active=move || active.get() == i>
            <a role="option" id=format!("search-hit-{i}") href=s.href() tabindex="-1"
                aria-selected=move || if active.get() == i { "true" } else { "false" }
                on:mouseenter=move |_| active.set(i)
                on:click=move |ev| {
                    if ev.button() == 0 && !(ev.ctrl_key() || ev.meta_key() || ev.shift_key()) {
                        ev.prevent_default();
                        go(i);
                    }
                }>
                <span class="search-place">{place}</span>
                <span class="search-excerpt">{h.before}<mark>{h.matched}</mark>{h.after}</span>
            </a>
        </li>
    }
}
