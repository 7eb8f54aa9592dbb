//! The "Reference" pages after the chapters (`chapters/REFERENCE`): notation, bibliography and
//! the index of every demo. They are not numbered and not in the ← / → sequence of chapters;
//! the contents list them in a group of their own after the chapters.

use leptos::prelude::*;

use super::pages::{Header, Sidebar};
use crate::chapters::{Chapter, Segment, CHAPTERS, REFERENCE_PAGES};
use crate::demos::{DemoSpec, DEMOS};
use crate::kit::browser::location_origin;

/// The "Reference" group of the contents, after the chapters' list.
#[component]
pub fn ReferenceToc(current: Option<&'static str>) -> impl IntoView {
    view! {
        <nav class="toc-ref" aria-label="Reference">
            <p class="toc-ref-title">"Reference"</p>
            <ul>
                {REFERENCE_PAGES.iter().map(|p| {
                    let here = current == Some(p.slug);
                    view! {
                        <li class:here=here>
                            <a href=format!("/{}/", p.slug) aria-current=here.then_some("page")>{p.title}</a>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </nav>
    }
}

/// A reference page, its prose as `prose::get` gave it.
pub fn reference_page(page: &'static Chapter, prose: Result<super::prose::Prose, String>) -> impl IntoView {
    document().set_title(&format!("{} — Attention, live", page.title));
    let mut part = 0;
    let body = page
        .body
        .unwrap_or(&[])
        .iter()
        .filter_map(|seg| match *seg {
            Segment::Html(_) => {
                part += 1;
                Some(super::pages::prose_part(&prose, part - 1))
            }
            // Reference pages embed no demo (tests/book/site.rs); nothing to place.
            Segment::Demo(_) | Segment::Exercise(_) | Segment::Bad(_) => None,
        })
        .collect_view();
    let index = (page.slug == "demos").then(demo_index);
    view! {
        <Header/>
        <div class="layout">
            <Sidebar current=page.slug/>
            <main class="chapter reference-page">
                <p class="chapter-number">"Reference"</p>
                <h1>{page.title}</h1>
                {body}
                {index}
            </main>
        </div>
    }
}

/// The chapter that embeds a demo.
fn chapter_of(id: &str) -> Option<&'static Chapter> {
    CHAPTERS.iter().find(|c| c.demo_ids().any(|d| d == id))
}

/// Every demo with its chapter, a thumbnail and its embed link, grouped by chapter in reading
/// order. Thumbnails are pictures of each demo at its defaults, taken when the site is built
/// (`scripts/thumbs.mjs`); where none was taken, a button shows the live demo instead.
fn demo_index() -> impl IntoView {
    let mut order: Vec<(&'static DemoSpec, Option<&'static Chapter>)> = Vec::new();
    for c in CHAPTERS {
        for id in c.demo_ids() {
            if let Some(d) = DEMOS.iter().find(|d| d.id == id) {
                order.push((d, Some(c)));
            }
        }
    }
    order.extend(DEMOS.iter().filter(|d| chapter_of(d.id).is_none()).map(|d| (*d, None)));
    view! {
        <p class="demo-count">{format!("{} demos.", order.len())}</p>
        <ul class="demo-index">
            {order.into_iter().map(|(d, c)| demo_card(d, c)).collect_view()}
        </ul>
    }
}

fn demo_card(d: &'static DemoSpec, chapter: Option<&'static Chapter>) -> impl IntoView {
    let embed = format!("/embed/?demo={}", d.id);
    let full = format!("{}{embed}", location_origin());
    let open = chapter.map(|c| format!("/{}/#{}", c.slug, d.id)).unwrap_or_else(|| embed.clone());
    let no_thumb = RwSignal::new(false);
    let live = RwSignal::new(false);
    let preview_embed = format!("{embed}&caption=0");
    let thumb_link = open.clone();
    view! {
        <li class="demo-card" id=format!("demo-{}", d.id)>
            <div class="demo-thumb">
                {move || if live.get() {
                    view! {
                        <iframe src=preview_embed.clone() title=format!("{} (live)", d.title)></iframe>
                    }.into_any()
                } else if no_thumb.get() {
                    view! {
                        <button type="button" class="thumb-live" on:click=move |_| live.set(true)>
                            "Show it live"
                        </button>
                    }.into_any()
                } else {
                    view! {
                        <a href=thumb_link.clone() tabindex="-1" aria-hidden="true">
                            <img src=format!("/thumbs/{}.jpg", d.id) alt="" loading="lazy" width="320" height="200"
                                on:error=move |_| no_thumb.set(true)/>
                        </a>
                    }.into_any()
                }}
            </div>
            <div class="demo-meta">
                <h2 class="demo-card-title"><a href=open>{d.title}</a></h2>
                <p class="demo-card-where">
                    <code>{d.id}</code>
                    {chapter.map(|c| view! { " · in " <a href=format!("/{}/", c.slug)>{c.title}</a> })}
                </p>
                <label class="demo-embed">
                    <span>"Embed link"</span>
                    <input type="text" readonly value=full
                        on:focus=move |ev| {
                            use wasm_bindgen::JsCast;
                            if let Some(t) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) {
                                t.select();
                            }
                        }/>
                </label>
                <a class="demo-embed-open" href=embed target="_blank">"Open the embed ↗"</a>
            </div>
        </li>
    }
}
