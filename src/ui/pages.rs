//! The pages: home (pitch and contents), a chapter (prose and demos), an embedded demo, and
//! "not found". Also the header, the table of contents with reading progress, and ← / → keys.

use std::collections::HashSet;

use leptos::prelude::*;
use leptos_router::hooks::{use_location, use_navigate};
use wasm_bindgen::JsCast;

use super::address_bar;
use super::app::AppCtx;
use super::demo_frame::{DemoFrame, DemoHome};
use super::exercises::{AnswerSheet, ExerciseCard, ExerciseCtx, ExercisesBar};
use crate::chapters::{self, Chapter, Segment, CHAPTERS, HOME_HTML};
use crate::demos::{self, DemoSpec};
use crate::kit::browser::{local_get, local_set};
use crate::state::query::{build_query, parse_query};
use crate::state::{Notice, Values};

/// The chapters the reader has read to the end (kept in this browser only).
fn read_chapters() -> HashSet<String> {
    local_get("read").unwrap_or_default().split(',').filter(|s| !s.is_empty()).map(String::from).collect()
}

fn mark_read(slug: &str) {
    let mut v = read_chapters();
    if v.insert(slug.to_string()) {
        let mut list: Vec<String> = v.into_iter().collect();
        list.sort();
        local_set("read", &list.join(","));
    }
}

/// Marks the chapter read once `end` (the links to the next chapter, after the last paragraph)
/// comes into view: opening a chapter is not reading it.
fn mark_read_at(end: NodeRef<leptos::html::Nav>, slug: &'static str) {
    Effect::new(move |done: Option<bool>| {
        if done == Some(true) {
            return true;
        }
        let Some(el) = end.get() else { return false };
        let cb = wasm_bindgen::closure::Closure::<dyn FnMut(js_sys::Array, web_sys::IntersectionObserver)>::new(
            move |entries: js_sys::Array, obs: web_sys::IntersectionObserver| {
                let seen =
                    entries.iter().any(|e| e.unchecked_into::<web_sys::IntersectionObserverEntry>().is_intersecting());
                if seen {
                    mark_read(slug);
                    obs.disconnect();
                }
            },
        );
        if let Ok(obs) = web_sys::IntersectionObserver::new(cb.as_ref().unchecked_ref()) {
            obs.observe(&el);
            // Wrapped: a JS handle is not `Send` in the threaded build, and cleanups must be.
            let obs = send_wrapper::SendWrapper::new(obs);
            on_cleanup(move || obs.disconnect());
        }
        cb.forget(); // one small closure per chapter opened; the observer holds it until disconnected
        true
    });
}

/// Wider than a phone or a narrow window (the sidebar's breakpoint in static/style.css): the
/// contents start open beside the chapter; below it they start folded above it.
fn wide_screen() -> bool {
    window().match_media("(min-width: 901px)").ok().flatten().is_none_or(|m| m.matches())
}

fn set_title(t: &str) {
    document().set_title(&format!("{t} — Attention, live"));
}

/// Whether an interactive element has the keyboard focus: anything focused but the page itself
/// or an element focused only by script (`tabindex="-1"`, e.g. a heading scrolled to).
fn interactive_focus() -> bool {
    let Some(el) = document().active_element() else { return false };
    match el.tag_name().as_str() {
        "BODY" | "HTML" => false,
        "A" | "BUTTON" | "INPUT" | "SELECT" | "TEXTAREA" | "SUMMARY" => true,
        _ => el.get_attribute("tabindex").as_deref() != Some("-1") || el.get_attribute("contenteditable").is_some(),
    }
}

/// Chapter slug of the current path, if it is one.
fn current_chapter(path: &str) -> Option<(usize, &'static Chapter)> {
    chapters::find(path.trim_matches('/'))
}

#[component]
pub fn Page() -> impl IntoView {
    let loc = use_location();
    let navigate = use_navigate();
    // ← and → move between chapters, only while nothing interactive has the focus: a reader
    // stepping through a demo's buttons or chips with the arrows must not lose the demo.
    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.alt_key() || ev.ctrl_key() || ev.meta_key() || ev.shift_key() || ev.default_prevented() {
            return;
        }
        let forward = match ev.key().as_str() {
            "ArrowRight" => true,
            "ArrowLeft" => false,
            _ => return,
        };
        if interactive_focus() {
            return;
        }
        let path = window().location().pathname().unwrap_or_default();
        let target = match current_chapter(&path) {
            Some((i, _)) => {
                let (prev, next) = chapters::neighbours(i);
                if forward {
                    next
                } else {
                    prev
                }
            }
            None if forward && path.trim_matches('/').is_empty() => chapters::first_written(),
            None => None,
        };
        if let Some(c) = target {
            navigate(&format!("/{}/", c.slug), Default::default());
        }
    });
    on_cleanup(move || handle.remove());
    let prose_ready = RwSignal::new(0u32);

    move || {
        // Each run builds a page anew: the previous chapter's exercises (and their signals) are gone.
        let _ = take_context::<ExerciseCtx>();
        let path = loc.pathname.get();
        let search = loc.search.get();
        let hash = loc.hash.get();
        let slug = path.trim_matches('/').to_string();
        if slug.is_empty() {
            return home().into_any();
        }
        if slug == "embed" {
            return embed_page(&search).into_any();
        }
        // A page's prose comes from its static HTML (`prose`): here at once for the page the
        // reader arrived on, downloaded on the way to another.
        match chapters::find(&slug) {
            Some((i, c)) if c.is_written() => match super::prose::get(c, prose_ready) {
                Some(prose) => chapter_page(i, c, prose, &search, &hash).into_any(),
                None => loading_page(c).into_any(),
            },
            Some((i, c)) => coming_page(i, c).into_any(),
            None => match chapters::find_reference(&slug) {
                Some(p) => match super::prose::get(p, prose_ready) {
                    Some(prose) => super::reference::reference_page(p, prose).into_any(),
                    None => loading_page(p).into_any(),
                },
                None => not_found(&path).into_any(),
            },
        }
    }
}

#[component]
pub(crate) fn Header() -> impl IntoView {
    let app = expect_context::<AppCtx>();
    let label = move || format!("Switch to the {} theme", app.theme.get().toggled().name());
    view! {
        <header class="site-header">
            <a class="site-title" href="/">"Attention, live"</a>
            <super::search::SearchBox/>
            <button type="button" class="theme-toggle" aria-label=label title=label
                on:click=move |_| {
                    let t = app.theme.get_untracked().toggled();
                    t.apply(true);
                    app.theme.set(t);
                }>
                {move || if app.theme.get() == crate::kit::theme::Theme::Dark { "☀ Light" } else { "☾ Dark" }}
            </button>
        </header>
    }
}

/// The contents beside a page: open on a wide screen, folded above the page on a phone.
#[component]
pub(crate) fn Sidebar(current: &'static str) -> impl IntoView {
    view! {
        <aside class="sidebar">
            <details class="toc-details" open=wide_screen()>
                <summary>"Contents"</summary>
                <Toc current=current/>
            </details>
        </aside>
    }
}

/// The table of contents, with "coming", "read" and "you are here" markers.
#[component]
pub(crate) fn Toc(#[prop(optional)] current: Option<&'static str>) -> impl IntoView {
    let seen = read_chapters();
    let done = CHAPTERS.iter().filter(|c| c.is_written() && seen.contains(c.slug)).count();
    let total = CHAPTERS.iter().filter(|c| c.is_written()).count();
    let open = use_context::<ExerciseCtx>();
    view! {
        <nav class="toc" aria-label="Table of contents">
            <p class="toc-progress">{format!("Read {done} of {total} written chapters")}</p>
            <ol>
                {CHAPTERS.iter().map(|c| {
                    let here = current == Some(c.slug);
                    let read = seen.contains(c.slug);
                    if c.is_written() {
                        view! {
                            <li class:here=here class:read=read>
                                <a href=format!("/{}/", c.slug) aria-current=here.then_some("page")>{c.title}</a>
                                {here.then(|| view! { <span class="tag here-tag">"you are here"</span> })}
                                {(read && !here).then(|| view! {
                                    <span class="tag read-tag" title="read to the end">"✓ read"</span>
                                })}
                                {exercise_tag(c, open)}
                            </li>
                        }.into_any()
                    } else {
                        view! { <li class="coming"><span>{c.title}</span> <span class="tag">"coming"</span></li> }
                            .into_any()
                    }
                }).collect_view()}
            </ol>
        </nav>
        <super::reference::ReferenceToc current=current/>
    }
}

/// "2 of 6 exercises" beside a chapter that has exercises: live for the open chapter, from
/// this browser's storage for the others.
fn exercise_tag(c: &'static Chapter, open: Option<ExerciseCtx>) -> Option<impl IntoView> {
    let total = c.exercises().count();
    (total > 0).then(|| {
        let done = move || match open.filter(|x| x.slug == c.slug) {
            Some(x) => x
                .solved
                .try_with(|s| c.exercises().filter(|e| s.contains(e.id)).count())
                .unwrap_or_else(|| super::exercises::progress(c).0),
            None => super::exercises::progress(c).0,
        };
        view! {
            <span class="tag ex-tag" title="exercises solved in this browser">
                {move || format!("{} of {total} exercises", done())}
            </span>
        }
    })
}

fn home() -> impl IntoView {
    set_title("An interactive textbook");
    let start = chapters::first_written().map(|c| format!("/{}/", c.slug)).unwrap_or_else(|| "/".into());
    view! {
        <Header/>
        <main class="home">
            <h1>"Attention, live"</h1>
            <p class="subtitle">"An interactive textbook about the attention mechanism"</p>
            <div class="prose pitch" inner_html=HOME_HTML></div>
            <p><a class="start" href=start>"Start reading →"</a></p>
            <h2>"Contents"</h2>
            <Toc/>
            {super::offline::offline_note()}
        </main>
    }
}

/// The registered demos a chapter embeds, each with its state read from the URL.
struct Mounted {
    spec: &'static DemoSpec,
    values: RwSignal<Values>,
    notices: Vec<Notice>,
}

fn mount_demos(ids: &[&'static str], search: &str) -> (Vec<Mounted>, Vec<Notice>) {
    let pairs = parse_query(search);
    let mounted: Vec<Mounted> = ids
        .iter()
        .filter_map(|id| demos::find(id))
        .map(|spec| {
            let (values, notices) = spec.from_link(&pairs);
            Mounted { spec, values: RwSignal::new(values), notices }
        })
        .collect();
    // Keys that belong to no demo on this page are reported once, at the top.
    let stray = pairs
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "demo" | "caption"))
        .filter(|(k, _)| !mounted.iter().any(|m| k.split_once('.').map(|(d, _)| d) == Some(m.spec.id)))
        .map(|(k, v)| Notice {
            key: k.clone(),
            raw: v.clone(),
            reason: "no demo on this page has that setting".into(),
            cut: false,
        })
        .collect();
    (mounted, stray)
}

/// Keeps the address bar equal to the demos' state (changed values only; written at most every
/// quarter second, see `address_bar`). Skips the first run, so a link's own text stays until
/// the reader changes something.
fn sync_url(path: String, keep: Vec<(String, String)>, states: Vec<(&'static DemoSpec, RwSignal<Values>)>) {
    Effect::new(move |prev: Option<()>| {
        let mut pairs = keep.clone();
        for (spec, v) in &states {
            pairs.extend(v.with(|v| spec.link_pairs(v)));
        }
        if prev.is_some() {
            let q = build_query(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            address_bar::set(format!("{path}{}{q}", if q.is_empty() { "" } else { "?" }));
        }
    });
}

fn notice_box(stray: Vec<Notice>) -> impl IntoView {
    (!stray.is_empty()).then(|| {
        view! {
            <div class="notice url-notice" role="status">
                <ul>{stray.iter().map(crate::ui::demo_frame::notice_item).collect_view()}</ul>
            </div>
        }
    })
}

/// A page whose prose is on its way (`prose::get`).
fn loading_page(page: &'static Chapter) -> impl IntoView {
    set_title(page.title);
    view! {
        <Header/>
        <div class="layout">
            <Sidebar current=page.slug/>
            <main class="chapter">
                <h1>{page.title}</h1>
                {super::prose::loading()}
            </main>
        </div>
    }
}

/// The part of a page's prose at `k`, or (in the first part's place) why it is missing.
pub(crate) fn prose_part(prose: &Result<super::prose::Prose, String>, k: usize) -> AnyView {
    match prose {
        Ok(p) => view! { <div class="prose" inner_html=p.get(k).cloned().unwrap_or_default()></div> }.into_any(),
        Err(why) if k == 0 => super::prose::failed(why).into_any(),
        Err(_) => ().into_any(),
    }
}

fn chapter_page(
    index: usize,
    chapter: &'static Chapter,
    prose: Result<super::prose::Prose, String>,
    search: &str,
    hash: &str,
) -> impl IntoView {
    set_title(chapter.title);
    let end = NodeRef::<leptos::html::Nav>::new();
    mark_read_at(end, chapter.slug);
    let ids: Vec<&'static str> = chapter.demo_ids().collect();
    let (mounted, stray) = mount_demos(&ids, search);
    sync_url(format!("/{}/", chapter.slug), Vec::new(), mounted.iter().map(|m| (m.spec, m.values)).collect());
    // The exercises set and read the demos by id; provided before the body and the contents are built.
    let ex_ctx = ExerciseCtx::new(chapter, mounted.iter().map(|m| (m.spec.id, m.values)).collect());
    provide_context(ex_ctx);
    let target = hash.trim_start_matches('#').to_string();
    if !target.is_empty() {
        // Scroll to the linked demo once the page (and its plots) have been laid out.
        set_timeout(
            move || {
                if let Some(el) = document().get_element_by_id(&target) {
                    el.scroll_into_view();
                }
            },
            std::time::Duration::from_millis(60),
        );
    }
    let number = CHAPTERS[..index].iter().filter(|c| c.is_written()).count() + 1;
    let home = DemoHome { chapter_slug: chapter.slug, embed: false, show_caption: true };
    let mut mounted: Vec<Option<Mounted>> = mounted.into_iter().map(Some).collect();
    let mut part = 0;
    let body = chapter
        .body
        .unwrap_or(&[])
        .iter()
        .map(|seg| match *seg {
            Segment::Html(_) => {
                part += 1;
                prose_part(&prose, part - 1)
            }
            Segment::Demo(id) => {
                match mounted.iter_mut().find(|m| m.as_ref().is_some_and(|m| m.spec.id == id)).and_then(Option::take) {
                    Some(m) => {
                        view! { <DemoFrame spec=m.spec values=m.values notices=m.notices home=home /> }.into_any()
                    }
                    None => view! {
                        <div class="notice error demo-missing" role="note">
                            {format!("The demo \"{id}\" is not available in this version of the book.")}
                        </div>
                    }
                    .into_any(),
                }
            }
            Segment::Exercise(e) => {
                let (first, last) = (ex_ctx.is_first(seg), ex_ctx.is_last(seg));
                view! {
                    {first.then(|| view! { <ExercisesBar/> })}
                    <ExerciseCard ex=e/>
                    {last.then(|| view! { <AnswerSheet/> })}
                }
                .into_any()
            }
            Segment::Bad(msg) => view! {
                <div class="notice error" role="note">{format!("Something could not be placed here: {msg}.")}</div>
            }
            .into_any(),
        })
        .collect_view();
    let (prev, next) = chapters::neighbours(index);
    // Prose far from the viewport skips rendering (static/style.css, `.laid-out`), but only
    // from the second frame on: the first lays the whole chapter out, so each prose run's real
    // height is remembered and the page keeps its true length as the reader scrolls.
    let laid_out = RwSignal::new(false);
    request_animation_frame(move || {
        request_animation_frame(move || {
            super::scroll_focus::mark_wide(); // the chapter is laid out whole at this point
            laid_out.try_set(true);
        })
    });
    // A wide equation or table is focusable while it scrolls (src/ui/scroll_focus.rs).
    if let Some(app) = use_context::<AppCtx>() {
        Effect::new(move |prev: Option<()>| {
            app.resize.track();
            if prev.is_some() {
                request_animation_frame(super::scroll_focus::mark_wide);
            }
        });
    }
    view! {
        <Header/>
        <div class="layout">
            <Sidebar current=chapter.slug/>
            <main class="chapter" class:laid-out=move || laid_out.get()>
                <p class="chapter-number">{format!("Chapter {number}")}</p>
                <h1>{chapter.title}</h1>
                {notice_box(stray)}
                {body}
                <nav class="chapter-nav" aria-label="Chapters" node_ref=end>
                    {prev.map(|c| view! {
                        <a class="prev" rel="prev" href=format!("/{}/", c.slug)>{format!("← {}", c.title)}</a>
                    })}
                    <span class="spacer"></span>
                    {next.map(|c| view! {
                        <a class="next" rel="next" href=format!("/{}/", c.slug)>{format!("{} →", c.title)}</a>
                    })}
                </nav>
                <p class="keys-hint">"Tip: the ← and → keys move between chapters."</p>
            </main>
        </div>
    }
}

fn coming_page(_index: usize, chapter: &'static Chapter) -> impl IntoView {
    set_title(chapter.title);
    view! {
        <Header/>
        <main class="home">
            <h1>{chapter.title}</h1>
            <p class="notice">"This chapter is coming: it is planned but not written yet."</p>
            <Toc current=chapter.slug/>
        </main>
    }
}

fn embed_page(search: &str) -> impl IntoView {
    let pairs = parse_query(search);
    let get = |k: &str| pairs.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    let Some(spec) = get("demo").and_then(|id| demos::find(&id)) else {
        set_title("Embedded demo");
        let names: Vec<&str> = demos::DEMOS.iter().map(|d| d.id).collect();
        return view! {
            <main class="embed-page">
                <p class="notice error" role="alert">
                    {format!("No such demo. Use /embed/?demo=NAME with one of: {}.", names.join(", "))}
                </p>
            </main>
        }
        .into_any();
    };
    set_title(spec.title);
    let show_caption = get("caption").as_deref() != Some("0");
    let chapter_slug = CHAPTERS.iter().find(|c| c.demo_ids().any(|d| d == spec.id)).map(|c| c.slug).unwrap_or("");
    let (mut mounted, stray) = mount_demos(&[spec.id], search);
    let m = mounted.remove(0);
    let mut keep = vec![("demo".to_string(), spec.id.to_string())];
    if !show_caption {
        keep.push(("caption".into(), "0".into()));
    }
    sync_url("/embed/".into(), keep, vec![(spec, m.values)]);
    let home = DemoHome { chapter_slug, embed: true, show_caption };
    view! {
        <main class="embed-page">
            {notice_box(stray)}
            <DemoFrame spec=m.spec values=m.values notices=m.notices home=home />
            <p class="embed-credit">
                <a href=format!("/{chapter_slug}/#{}", spec.id) target="_blank">"Open in Attention, live ↗"</a>
            </p>
        </main>
    }
    .into_any()
}

fn not_found(path: &str) -> impl IntoView {
    set_title("Not found");
    view! {
        <Header/>
        <main class="home">
            <h1>"No such page"</h1>
            <p>{format!("There is no chapter at {path}.")}</p>
            <Toc/>
        </main>
    }
}
