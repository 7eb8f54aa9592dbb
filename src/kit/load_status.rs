//! Where a side model's load stands (the translation and vision demos' models, loaded by the
//! compute worker beside the main one): the status line, its progress bar, and the button that
//! goes with it.

use leptos::prelude::*;

use crate::numerics::format::Signed;
use crate::session::protocol::{Phase, Source};

/// Where loading stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Loading(String, Option<f64>),
    /// A download the reader has not asked for yet (the model is not in this browser's storage).
    Waiting,
    Ready(String),
    Failed(String),
}

impl Status {
    /// The page's `data-status`, which the tests wait on.
    pub fn key(&self) -> &'static str {
        match self {
            Status::Loading(..) => "loading",
            Status::Waiting => "waiting",
            Status::Ready(_) => "ready",
            Status::Failed(_) => "failed",
        }
    }
}

/// The loading line: which phase, and how far a file's bytes have come.
pub fn progress_line(phase: Phase, loaded: u64, total: Option<u64>) -> (String, Option<f64>) {
    let mb = |b: u64| format!("{:.1} MB", Signed(b as f64 / 1e6));
    match (phase, total) {
        (Phase::Parse, _) => ("Preparing the model…".into(), None),
        (Phase::Verify, _) => ("Checking the file…".into(), None),
        (Phase::Download | Phase::Cache, Some(t)) if t > 0 => {
            let what = if phase == Phase::Cache { "Reading the stored copy" } else { "Downloading" };
            (format!("{what}: {} of {}", mb(loaded), mb(t)), Some(loaded as f64 / t as f64))
        }
        (Phase::Download | Phase::Cache | Phase::Gpu, _) => (format!("Loading the model: {}…", mb(loaded)), None),
    }
}

/// Where a loaded model came from, as the status line says it after the model's name.
pub fn source_words(source: Source) -> &'static str {
    match source {
        Source::Cache => " (read from this browser's storage)",
        Source::NetworkStored => " (downloaded and kept in this browser for next time)",
        Source::NetworkUnstored => " (downloaded; this browser would not keep it)",
        Source::Network | Source::File => "",
    }
}

/// The loading line, its progress bar, and the button that goes with it: Download (asked for
/// before a download, and after a failure or a Stop), Stop (while a download runs), or Load again
/// (a bundled model, after a failure). `waiting` is the line that asks for a download.
pub fn status_view(
    s: &Status,
    downloads: bool,
    waiting: String,
    download: impl Fn(web_sys::MouseEvent) + Copy + 'static,
    stop: impl Fn(web_sys::MouseEvent) + Copy + 'static,
) -> impl IntoView {
    let line = match s {
        Status::Loading(l, _) | Status::Ready(l) | Status::Failed(l) => l.clone(),
        Status::Waiting => waiting,
    };
    let bar = match s {
        Status::Loading(_, Some(f)) => {
            Some(view! { <progress max="1" value=*f aria-label="How much of the file has arrived"></progress> })
        }
        _ => None,
    };
    let button = match (s, downloads) {
        (Status::Waiting | Status::Failed(_), true) => Some(
            view! { <button type="button" class="download" on:click=download>"Download the model"</button> }.into_any(),
        ),
        (Status::Failed(_), false) => Some(
            view! { <button type="button" class="download" on:click=download>"Load the model again"</button> }
                .into_any(),
        ),
        (Status::Loading(..), true) => {
            Some(view! { <button type="button" class="stop" on:click=stop>"Stop"</button> }.into_any())
        }
        _ => None,
    };
    view! {
        <p class="readout" role="status">{line}</p>
        {bar}
        {button.map(|b| view! { <div class="row-actions">{b}</div> })}
    }
}
