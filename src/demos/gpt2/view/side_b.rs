//! The second model of a comparison: the same prompt in a worker of its own, drawn by the same
//! parts as the first (its status, notes, chips, model view, head view and next-token bars)
//! from a store of its own, provided to them here.

use leptos::prelude::*;

use super::super::compare::side_title;
use super::chips::TokenChips;
use super::conversation;
use super::head_view::HeadView;
use super::loader::{BackendLine, ModelStatus};
use super::model_view::ModelView;
use super::next_tokens::NextTokens;
use super::notes::Notes;
use super::store::{store, Peer, Side, Store};

#[component]
pub fn SideB() -> impl IntoView {
    let a = store();
    let b = Store::with_side(a.ctx, conversation::on_event, Side::B { peer: a.result, generating: a.generating });
    b.worker.start(); // ended when this side goes away
    conversation::follow(b);
    provide_context(b);
    let title = move || b.params.with(|p| side_title('B', p.model));
    // The shared selection reaches the larger model's layers and heads (the first side waits
    // while this model loads).
    let peer = Memo::new(move |_| b.status.with(Peer::of));
    Effect::new(move |_| {
        a.peer.try_set(peer.get());
    });
    on_cleanup(move || {
        a.peer.try_set(Peer::None);
    });
    let intact = move || {
        a.knocked.with(|k| !k.is_empty()).then(|| {
            view! { <p class="muted intact-note">"This model runs intact: the knock-outs name model A's heads."</p> }
        })
    };
    let error = move || b.side_error.get().map(|e| view! { <p class="notice error" role="alert">{e}</p> });
    let analysis = move || b.result.with(|r| r.as_ref().map_or(0, |r| r.a.id)).to_string();
    view! {
        <section class="model-side side-b" aria-label=title data-status=move || b.status.with(|st| st.key())
            data-analysis=analysis>
            <h4 class="side-title">{title}</h4>
            <ModelStatus/>
            <BackendLine/>
            <Notes/>
            {intact}
            {error}
            <TokenChips/>
            <div class="gpt2-panels">
                <ModelView/>
                <HeadView/>
                <NextTokens/>
            </div>
        </section>
    }
}
