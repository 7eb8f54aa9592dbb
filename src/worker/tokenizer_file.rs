//! A Llama-family model's third file, `tokenizer.json`, beside the two `fetch::model_files`
//! gets: from Cache Storage when kept there, else downloaded and checked against the pinned
//! manifest like the others (`fetch::file`), kept only once the model has loaded and removed
//! when it fails to.

use js_sys::Uint8Array;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, Response};

use super::fetch::{cached, file, open_cache};
use crate::session::manifest::FileCheck;

/// `tokenizer.json`'s text, and where it came from, to keep or to evict with its model.
pub struct TokenizerFile {
    pub text: String,
    url: String,
    cache: Option<Cache>,
    /// Downloaded now (to be kept), rather than read from the cache.
    fresh: bool,
}

/// `tokenizer.json` from `base`: the cached copy (with `use_cache`), else downloaded and, with
/// `expect`, checked against its pinned size and SHA-256.
pub async fn fetch(
    base: &str,
    expect: Option<&FileCheck>,
    use_cache: bool,
    load: u64,
) -> Result<TokenizerFile, String> {
    let cache = if use_cache { open_cache().await } else { None };
    let url = format!("{base}tokenizer.json");
    let stored = cached(&cache, &url).await;
    let (bytes, from_cache) = match file(&url, "tokenizer.json", expect, stored, load).await {
        Ok(r) => r,
        Err(e) => {
            evict(&cache, &url).await;
            return Err(format!("a Llama-family model needs its tokenizer.json: {e}"));
        }
    };
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(_) => {
            evict(&cache, &url).await;
            return Err("tokenizer.json is not UTF-8 text".into());
        }
    };
    Ok(TokenizerFile { text, url, cache, fresh: !from_cache })
}

async fn evict(cache: &Option<Cache>, url: &str) {
    if let Some(c) = cache {
        let _ = JsFuture::from(c.delete_with_str(url)).await;
    }
}

impl TokenizerFile {
    /// Keeps a downloaded file in Cache Storage (once its model loaded): whether it was stored.
    pub async fn keep(&self) -> bool {
        let Some(c) = &self.cache else { return true };
        if !self.fresh {
            return true;
        }
        let body = Uint8Array::from(self.text.as_bytes());
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
