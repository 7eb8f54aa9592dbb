//! A model's files beside the two `fetch::model_files` gets: a Llama-family model's
//! `tokenizer.json`, a Marian model's `source.spm`, `target.spm` and `vocab.json`. Each comes from
//! Cache Storage when kept there, else is downloaded and checked against the pinned manifest like
//! the others (`fetch::file`), is kept only once the model has loaded and is removed when it fails
//! to.

use js_sys::Uint8Array;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, Response};

use super::fetch::{cached, file, open_cache};
use crate::session::manifest::FileCheck;

/// A side file's bytes, and where they came from, to keep or to evict with its model.
pub struct SideFile {
    pub bytes: Vec<u8>,
    url: String,
    cache: Option<Cache>,
    /// Downloaded now (to be kept), rather than read from the cache.
    fresh: bool,
}

/// `name` from `base`: the cached copy (with `use_cache`), else downloaded and, with `expect`,
/// checked against its pinned size and SHA-256. A file that fails is removed from the cache.
pub async fn fetch(
    base: &str,
    name: &str,
    expect: Option<&FileCheck>,
    use_cache: bool,
    load: u64,
) -> Result<SideFile, String> {
    let cache = if use_cache { open_cache().await } else { None };
    let url = format!("{base}{name}");
    let stored = cached(&cache, &url).await;
    match file(&url, name, expect, stored, load).await {
        Ok((bytes, from_cache)) => Ok(SideFile { bytes, url, cache, fresh: !from_cache }),
        Err(e) => {
            evict(&cache, &url).await;
            Err(e)
        }
    }
}

impl SideFile {
    /// The file as text, or why it is not.
    pub fn text(&self, name: &str) -> Result<&str, String> {
        std::str::from_utf8(&self.bytes).map_err(|_| format!("{name} is not UTF-8 text"))
    }
}

async fn evict(cache: &Option<Cache>, url: &str) {
    if let Some(c) = cache {
        let _ = JsFuture::from(c.delete_with_str(url)).await;
    }
}

impl SideFile {
    /// Keeps a downloaded file in Cache Storage (once its model loaded): whether it was stored.
    pub async fn keep(&self) -> bool {
        let Some(c) = &self.cache else { return true };
        if !self.fresh {
            return true;
        }
        let body = Uint8Array::from(&self.bytes[..]);
        let blob = web_sys::Blob::new_with_u8_array_sequence(&js_sys::Array::of1(&body));
        match blob.and_then(|b| Response::new_with_opt_blob(Some(&b))) {
            Ok(r) => JsFuture::from(c.put_with_str(&self.url, &r)).await.is_ok(),
            Err(_) => false,
        }
    }

    /// Removes the kept copy (its model failed to load).
    pub async fn evict(&self) {
        evict(&self.cache, &self.url).await;
    }
}
