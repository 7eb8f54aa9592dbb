//! The page's view of the models kept in this browser's Cache Storage (`session::manifest::MODEL_CACHE`:
//! the worker's downloads and the training lab's model): what each stored file is and its size, and
//! clearing them all.

use js_sys::{Array, Reflect};
use leptos::prelude::window;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, Cache, Response};

use crate::session::manifest::MODEL_CACHE;

const UNAVAILABLE: &str = "this browser does not let this page use Cache Storage (as in some private windows)";

/// Every stored file: (its URL, its size in bytes).
pub async fn stored_files() -> Result<Vec<(String, u64)>, String> {
    let storage = window().caches().map_err(|_| UNAVAILABLE.to_string())?;
    // `has` first: opening a cache that does not exist would create it.
    let exists = JsFuture::from(storage.has(MODEL_CACHE)).await.map_err(|_| UNAVAILABLE)?;
    if exists.as_bool() != Some(true) {
        return Ok(Vec::new());
    }
    let cache: Cache = JsFuture::from(storage.open(MODEL_CACHE)).await.map_err(|_| UNAVAILABLE)?.unchecked_into();
    let keys: Array = JsFuture::from(cache.keys()).await.map_err(|_| UNAVAILABLE)?.unchecked_into();
    let mut files = Vec::new();
    for key in keys.iter() {
        let Some(url) = Reflect::get(&key, &"url".into()).ok().and_then(|u| u.as_string()) else { continue };
        let Ok(found) = JsFuture::from(cache.match_with_str(&url)).await else { continue };
        let Ok(resp) = found.dyn_into::<Response>() else { continue };
        // A stored body's blob is its size without reading it.
        let size = match resp.blob() {
            Ok(p) => JsFuture::from(p).await.ok().and_then(|b| b.dyn_into::<Blob>().ok()).map_or(0.0, |b| b.size()),
            Err(_) => 0.0,
        };
        files.push((url, size as u64));
    }
    Ok(files)
}

/// Removes every stored model.
pub async fn clear_stored() -> Result<(), String> {
    let storage = window().caches().map_err(|_| UNAVAILABLE.to_string())?;
    JsFuture::from(storage.delete(MODEL_CACHE)).await.map_err(|_| "the stored models could not be removed")?;
    Ok(())
}
