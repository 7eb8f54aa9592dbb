//! The frame around every demo: title, controls, notices about ignored URL values, the demo's
//! own view, and the actions every demo has (copy link, embed link, download data and image,
//! show the numbers as a table, reset).

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::app::AppCtx;
use super::control_panel::ControlPanel;
use crate::demos::DemoSpec;
use crate::kit::browser::{copy_text, download_canvas_png, download_text, location_origin};
use crate::kit::link_box::LinkBox;
use crate::kit::DemoCtx;
use crate::state::query::build_query;
use crate::state::{Notice, Values};

/// Where a demo lives, for the links it builds.
#[derive(Clone, Copy)]
pub struct DemoHome {
    pub chapter_slug: &'static str,
    pub embed: bool,
    pub show_caption: bool,
}

fn query_for(spec: &DemoSpec, values: &Values) -> String {
    let pairs = values.to_pairs(spec.id);
    build_query(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// The link that reopens this chapter scrolled to this demo, with every control's value.
pub fn share_link(spec: &DemoSpec, home: &DemoHome, values: &Values) -> String {
    format!("{}/{}/?{}#{}", location_origin(), home.chapter_slug, query_for(spec, values), spec.id)
}

/// The link that shows only this demo, full width.
pub fn embed_link(spec: &DemoSpec, values: &Values, caption: bool) -> String {
    let cap = if caption { "" } else { "&caption=0" };
    format!("{}/embed/?demo={}{cap}&{}", location_origin(), spec.id, query_for(spec, values))
}

#[component]
pub fn DemoFrame(
    spec: &'static DemoSpec,
    values: RwSignal<Values>,
    notices: Vec<Notice>,
    home: DemoHome,
) -> impl IntoView {
    let app = expect_context::<AppCtx>();
    let ctx = DemoCtx {
        values,
        show_numbers: RwSignal::new(false),
        error: RwSignal::new(None),
        theme: app.theme,
        resize: app.resize,
        computed: RwSignal::new(None),
        notices: RwSignal::new(notices),
        int_max: RwSignal::new(Vec::new()),
    };
    let notices = ctx.notices;
    let link = RwSignal::new(None::<(String, String)>); // (what, url) shown after a copy
    let status = RwSignal::new(String::new());
    let root = NodeRef::<leptos::html::Section>::new();

    let copy = move |what: &'static str, url: String| {
        link.set(Some((what.to_string(), url.clone())));
        leptos::task::spawn_local(async move {
            let ok = copy_text(url).await;
            status.set(if ok {
                format!("{what} copied to the clipboard.")
            } else {
                format!("Select the {what} below and copy it.")
            });
        });
    };
    let on_copy_link = move |_| copy("Link", values.with_untracked(|v| share_link(spec, &home, v)));
    let on_copy_embed = move |_| copy("Embed link", values.with_untracked(|v| embed_link(spec, v, true)));
    let on_data = move |_| {
        let r = values.with_untracked(|v| {
            let mut outputs = (spec.data)(v)?;
            if let Some(extra) = ctx.computed.get_untracked() {
                outputs["computed"] = extra;
            }
            let doc = serde_json::json!({
                "demo": spec.id,
                "title": spec.title,
                "link": share_link(spec, &home, v),
                "inputs": v.to_json(),
                "outputs": outputs,
            });
            let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
            download_text(&format!("{}.json", spec.id), "application/json", &text)
        });
        status.set(match r {
            Ok(()) => "Data downloaded.".into(),
            Err(e) => format!("Could not export the data: {e}"),
        });
    };
    let on_image = move |_| {
        let r = root.get_untracked().ok_or_else(|| "the demo is not on the page".to_string()).and_then(|el| {
            let canvases = el.query_selector_all("canvas").map_err(|_| "no plots found")?;
            let list: Vec<web_sys::HtmlCanvasElement> = (0..canvases.length())
                .filter_map(|i| canvases.get(i)?.dyn_into().ok())
                .filter(|c: &web_sys::HtmlCanvasElement| c.width() > 0)
                .collect();
            let png = stack_canvases(&list)?;
            download_canvas_png(&format!("{}.png", spec.id), &png)
        });
        status.set(match r {
            Ok(()) => "Image downloaded.".into(),
            Err(e) => format!("Could not export the image: {e}"),
        });
    };
    let on_reset = move |_| {
        values.set(Values::defaults(spec.params));
        notices.set(Vec::new());
        status.set("Back to the defaults.".into());
    };

    // On a phone the controls are pinned under the plots: reaching for one shows a plot.
    let keep_plot = move |panel: web_sys::Element| {
        if let (false, Some(demo)) = (home.embed, root.get_untracked()) {
            super::plot_in_view::keep_a_plot_in_view(&demo, &panel);
        }
    };

    // On a phone the six actions fold into one menu (static/style.css shows the toggle there).
    let menu_open = RwSignal::new(false);
    let actions_id = format!("{}-actions", spec.id);
    let title_id = format!("{}-title", spec.id);
    let labelled_by = title_id.clone();
    // The demo's own code arrives as a chunk of its own the first time it is shown.
    let id = spec.id;
    let view_body = view! {
        <Suspense fallback=|| view! { <p class="demo-loading" role="status">"Loading the demo…"</p> }>
            {Suspend::new(send_wrapper::SendWrapper::new(async move {
                crate::demos::view(id, ctx).await.unwrap_or_else(|e| {
                    let text = format!("This demo could not be shown: {}.", e.0);
                    view! { <div class="notice error" role="alert">{text}</div> }.into_any()
                })
            }))}
        </Suspense>
    };
    view! {
        <section class="demo" class:embed=home.embed id=spec.id aria-labelledby=labelled_by node_ref=root>
            <header class="demo-head">
                <h3 id=title_id>{spec.title}</h3>
                <button type="button" class="demo-menu-toggle" aria-controls=actions_id.clone()
                    aria-expanded=move || menu_open.get().to_string()
                    on:click=move |_| menu_open.update(|o| *o = !*o)>
                    "Share and export ▾"
                </button>
                <div class="demo-actions" class:open=move || menu_open.get() id=actions_id role="toolbar"
                    aria-label=format!("{} actions", spec.title)
                    on:keydown=move |ev| if ev.key() == "Escape" { menu_open.set(false); }>
                    <button type="button" class="copy-link" on:click=on_copy_link>"Copy link"</button>
                    <button type="button" class="copy-embed" on:click=on_copy_embed>"Embed"</button>
                    <button type="button" class="download-data" on:click=on_data>"Download data"</button>
                    <button type="button" class="download-image" on:click=on_image>"Download image"</button>
                    {spec.numbers.then(|| view! {
                        <button type="button" class="show-numbers"
                            aria-pressed=move || ctx.show_numbers.get().to_string()
                            on:click=move |_| ctx.show_numbers.update(|s| *s = !*s)>
                            {move || if ctx.show_numbers.get() { "Hide numbers" } else { "Show numbers" }}
                        </button>
                    })}
                    <button type="button" class="reset" on:click=on_reset>"Reset"</button>
                </div>
            </header>
            {move || {
                let ns = notices.get();
                (!ns.is_empty()).then(|| view! {
                    <div class="notice url-notice" role="status">
                        <ul>{ns.iter().map(notice_item).collect_view()}</ul>
                        <button type="button" class="dismiss" on:click=move |_| notices.set(Vec::new())>
                            "Dismiss"
                        </button>
                    </div>
                })
            }}
            <div class="demo-body">
                <ControlPanel spec=spec ctx=ctx on_focus=Callback::new(keep_plot) />
                <div class="demo-view">
                    {move || ctx.error.get().map(|e| view! { <div class="notice error" role="alert">{e}</div> })}
                    {view_body}
                </div>
            </div>
            {home.show_caption.then(|| view! { <p class="caption">{spec.caption}</p> })}
            <p class="demo-status" aria-live="polite">{move || status.get()}</p>
            {move || link.get().map(|(what, url)| view! { <LinkBox what=what url=url /> })}
        </section>
    }
}

/// Stacks several canvases vertically into one (for "Download image").
fn stack_canvases(list: &[web_sys::HtmlCanvasElement]) -> Result<web_sys::HtmlCanvasElement, String> {
    if list.is_empty() {
        return Err("this demo has no plot".into());
    }
    // A canvas that keeps spare rows below its drawing (`MatrixGrid`) says how many are in use.
    let used = |c: &web_sys::HtmlCanvasElement| {
        c.get_attribute("data-used-h").and_then(|s| s.parse().ok()).map_or(c.height(), |u: u32| u.min(c.height()))
    };
    let w = list.iter().map(|c| c.width()).max().unwrap_or(0);
    let h: u32 = list.iter().map(used).sum();
    let out: web_sys::HtmlCanvasElement =
        document().create_element("canvas").map_err(|_| "no canvas")?.unchecked_into();
    out.set_width(w);
    out.set_height(h);
    let ctx = crate::kit::plot::heatmap::context(&out)?;
    let mut y = 0.0;
    for c in list {
        let (cw, ch) = (c.width() as f64, used(c) as f64);
        ctx.draw_image_with_html_canvas_element_and_sw_and_sh_and_dx_and_dy_and_dw_and_dh(
            c, 0.0, 0.0, cw, ch, 0.0, y, cw, ch,
        )
        .map_err(|_| "cannot copy a plot")?;
        y += ch;
    }
    Ok(out)
}

/// One notice about a link value: the value, which comes from the link, in a `<bdi>`, so that
/// right-to-left or override characters in it cannot reorder the sentence around it.
pub fn notice_item(n: &Notice) -> impl IntoView {
    let (before, raw, after) = n.parts();
    view! { <li>{before}<bdi class="link-value">{raw}</bdi>{after}</li> }
}
