//! View of `gpt2`: talks to the GPT-2 Web Worker and draws its answers. The parts share a
//! [`Store`](store::Store) of signals provided in context: the conversation with the worker
//! (`conversation`, through the kit's compute-worker client), the model loader and backend
//! line (`loader`), notes, the tokens as chips (`chips`), the model view, the head view, the
//! next-token bars with generation, the comparison of two prompts and the selected head's
//! heatmap. With a second model (`side_b`), the same parts draw it beside the first.

use leptos::prelude::*;

use super::compare::side_title;
use crate::kit::DemoCtx;

mod chips;
mod compare;
mod conversation;
mod generate;
mod head_view;
mod heatmap;
mod loader;
mod model_view;
mod next_tokens;
mod notes;
mod selection;
mod side_b;
mod store;

use chips::TokenChips;
use compare::Comparison;
use head_view::HeadView;
use heatmap::Heatmap;
use loader::{BackendLine, FilePick, ModelStatus, StoredList};
use model_view::ModelView;
use next_tokens::{NextNumbers, NextTokens};
use notes::Notes;
use side_b::SideB;
use store::Store;

pub fn view(ctx: DemoCtx) -> AnyView {
    let s = Store::new(ctx, conversation::on_event);
    selection::featured(s);
    s.worker.start();
    conversation::follow(s);
    selection::keep_inside(s);
    conversation::publish(s);
    provide_context(s);

    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        loader::load_files(s, ev.data_transfer().and_then(|d| d.files()));
    };
    // What the browser tests and the benchmark read.
    let compute_ms = move || s.result.with(|r| r.as_ref().map_or(0.0, |r| r.a.compute_ms)).to_string();
    let analysis = move || s.result.with(|r| r.as_ref().map_or(0, |r| r.a.id)).to_string();
    let backend = move || s.backend.with(|b| b.as_ref().map_or("pending", |b| b.name.as_str()));
    // A second model: the two sides side by side, each headed by its model.
    let side_a_title = move || s.compared.get().then(|| s.params.with(|p| side_title('A', p.model)));
    // The same model and prompts in "Looking inside a model".
    let look_inside = move || {
        let href = s.params.with(crate::demos::inside::link_from_gpt2)?;
        Some(view! {
            <p class="look-inside"><a href=href>"Look inside this model: logit lens, activation patching, head \
                detectors →"</a></p>
        })
    };
    view! {
        <div class="gpt2" data-compute-ms=compute_ms data-generate-ms=move || s.gen_ms.get().0.to_string()
            data-generate-compute-ms=move || s.gen_ms.get().1.to_string()
            data-backend=backend on:dragover=move |ev: web_sys::DragEvent| ev.prevent_default() on:drop=on_drop
            data-analysis=analysis data-status=move || s.status.with(|st| st.key())>
            <div class="model-sides" class:two=s.compared>
                <section class="model-side" aria-label=side_a_title>
                    {move || side_a_title().map(|t| view! { <h4 class="side-title">{t}</h4> })}
                    <ModelStatus/>
                    <BackendLine/>
                    <FilePick/>
                    <Notes/>
                    <TokenChips/>
                    <div class="gpt2-panels">
                        <ModelView/>
                        <HeadView/>
                        <NextTokens/>
                    </div>
                    {look_inside}
                </section>
                // Mounted once for any second model: a change of model loads it in the same worker.
                {move || s.compared.get().then(|| view! { <SideB/> })}
            </div>
            <Comparison/>
            <Heatmap/>
            <NextNumbers/>
            // Below the plots: on a phone the model's panels come first.
            <StoredList/>
        </div>
    }
    .into_any()
}
