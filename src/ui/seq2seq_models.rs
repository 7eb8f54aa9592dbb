//! The "Why attention" chapter's seq2seq weights, fetched once per page and shared by its demos.

use std::cell::RefCell;
use std::rc::Rc;

use crate::seq2seq::Models;

pub const URL: &str = "/models/seq2seq/model.safetensors";

thread_local! {
    static LOADED: RefCell<Option<Rc<Models>>> = const { RefCell::new(None) };
}

/// The shipped models, from the page's copy when one demo already fetched them.
pub async fn models() -> Result<Rc<Models>, String> {
    if let Some(m) = LOADED.with(|l| l.borrow().clone()) {
        return Ok(m);
    }
    let bytes = crate::ui::browser::fetch_bytes(URL).await?;
    let m = Rc::new(Models::load(&bytes).map_err(|e| format!("{URL}: {e}"))?);
    LOADED.with(|l| *l.borrow_mut() = Some(m.clone()));
    Ok(m)
}
