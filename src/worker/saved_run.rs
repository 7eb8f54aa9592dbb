//! The training lab's run kept in this browser's Cache Storage, so that a reload finds it
//! (`train::saved` gives its bytes). One run is kept: the last one trained. Writes and deletions
//! go through one queue, in order, the latest superseding any not yet begun, so a reset is never
//! undone by a save that finishes after it; a read waits until the queue is empty. Keeping the
//! run is a convenience: where Cache Storage is missing or full, the lab trains as before.

use std::cell::{Cell, RefCell};

use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, Response};

use super::scope;

/// Its own cache, beside the models' (`fetch`) and the site's (static/sw.js), which never touch it.
const CACHE: &str = "attention-live-training";
/// The one entry's key (a URL of the site's, never fetched).
const KEY: &str = "/attention-live/training-lab/run";

enum Op {
    Save(Vec<u8>),
    Clear,
}

thread_local! {
    static PENDING: RefCell<Option<Op>> = const { RefCell::new(None) };
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

/// Keeps `bytes` as the run (replacing the one kept).
pub fn save(bytes: Vec<u8>) {
    submit(Op::Save(bytes));
}

/// Forgets the run kept.
pub fn clear() {
    submit(Op::Clear);
}

fn submit(op: Op) {
    PENDING.with(|p| *p.borrow_mut() = Some(op));
    if !BUSY.with(|b| b.replace(true)) {
        wasm_bindgen_futures::spawn_local(async {
            while let Some(op) = PENDING.with(|p| p.borrow_mut().take()) {
                if let Err(e) = perform(op).await {
                    web_sys::console::warn_2(&"The training run could not be kept in this browser:".into(), &e);
                }
            }
            BUSY.with(|b| b.set(false));
        });
    }
}

async fn open() -> Result<Cache, JsValue> {
    Ok(JsFuture::from(scope().caches()?.open(CACHE)).await?.unchecked_into())
}

async fn perform(op: Op) -> Result<(), JsValue> {
    let cache = open().await?;
    match op {
        Op::Save(bytes) => {
            // A copy outside the worker's memory, which in the threaded build is shared (a
            // response's body may not be).
            let body = Uint8Array::new_with_length(bytes.len() as u32);
            body.copy_from(&bytes);
            let response = Response::new_with_opt_buffer_source(Some(&body))?;
            JsFuture::from(cache.put_with_str(KEY, &response)).await?;
        }
        Op::Clear => {
            JsFuture::from(cache.delete_with_str(KEY)).await?;
        }
    }
    Ok(())
}

/// The run kept, once every write and deletion asked for has been done; `None` when there is
/// none or it cannot be read.
pub async fn load() -> Option<Vec<u8>> {
    while BUSY.with(Cell::get) {
        super::dispatch::yield_now().await;
    }
    let cache = open().await.ok()?;
    let found = JsFuture::from(cache.match_with_str(KEY)).await.ok()?;
    let response = found.dyn_into::<Response>().ok()?;
    let buffer = JsFuture::from(response.array_buffer().ok()?).await.ok()?;
    Some(Uint8Array::new(&buffer).to_vec())
}
