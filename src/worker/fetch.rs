//! Getting a model's files into the worker: downloading them with progress, checking them
//! against a pinned manifest, and keeping them in (and reading them back from) the browser's
//! Cache Storage.

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, ReadableStreamDefaultReader, Response};

use super::{js_err, post, scope};
use crate::gpt2::manifest::{verify, FileCheck, Manifest};
use crate::gpt2::protocol::{Phase, Reply, Source};

async fn fetch(url: &str) -> Result<Response, String> {
    let resp: Response = JsFuture::from(scope().fetch_with_str(url))
        .await
        .map_err(|e| {
            format!(
                "could not fetch {url} ({}): this computer may be offline, or the server does not allow this page \
                 to read it (CORS)",
                js_err(e)
            )
        })?
        .unchecked_into();
    if !resp.ok() {
        return Err(format!("{url} answered HTTP {} {}: is the address right?", resp.status(), resp.status_text()));
    }
    Ok(resp)
}

/// Reads a response body chunk by chunk, posting progress about every 1 MB.
async fn read_with_progress(resp: Response, phase: Phase) -> Result<Vec<u8>, String> {
    let total = resp.headers().get("content-length").ok().flatten().and_then(|s| s.parse::<u64>().ok());
    let body = resp.body().ok_or("the response has no body")?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut bytes = Vec::with_capacity(total.unwrap_or(0).min(1 << 31) as usize);
    let mut last = 0usize;
    let progress = |loaded: usize| post(&Reply::Progress { phase, loaded: loaded as u64, total }, None);
    progress(0);
    loop {
        let chunk =
            JsFuture::from(reader.read()).await.map_err(|e| format!("the download broke off: {}", js_err(e)))?;
        if Reflect::get(&chunk, &"done".into()).ok().and_then(|v| v.as_bool()).unwrap_or(true) {
            break;
        }
        let value: Uint8Array = Reflect::get(&chunk, &"value".into()).map_err(js_err)?.unchecked_into();
        let start = bytes.len();
        bytes.resize(start + value.length() as usize, 0);
        value.copy_to(&mut bytes[start..]);
        if bytes.len() - last >= 1 << 20 {
            last = bytes.len();
            progress(last);
        }
    }
    progress(bytes.len());
    Ok(bytes)
}

const CACHE: &str = "attention-live-models";

async fn open_cache() -> Option<Cache> {
    let storage = scope().caches().ok()?;
    JsFuture::from(storage.open(CACHE)).await.ok().map(JsCast::unchecked_into)
}

async fn cached(cache: &Option<Cache>, url: &str) -> Option<Response> {
    let found = JsFuture::from(cache.as_ref()?.match_with_str(url)).await.ok()?;
    found.dyn_into::<Response>().ok()
}

/// One file of a model: the cached copy `stored` if there is one, else from the network (then
/// verified and stored in `cache`).
async fn file(
    url: &str,
    name: &str,
    expect: Option<&FileCheck>,
    cache: &Option<Cache>,
    stored: Option<Response>,
) -> Result<(Vec<u8>, Source), String> {
    if let Some(resp) = stored {
        return Ok((read_with_progress(resp, Phase::Cache).await?, Source::Cache));
    }
    let resp = fetch(url).await?;
    // A pinned file of another size is refused before downloading it.
    let length = resp.headers().get("content-length").ok().flatten().and_then(|s| s.parse::<u64>().ok());
    if let (Some(want), Some(len)) = (expect, length) {
        if want.size != len {
            return Err(format!(
                "{url} is {len} bytes, but the pinned {name} is {} bytes: it is a different file",
                want.size
            ));
        }
    }
    let bytes = read_with_progress(resp, Phase::Download).await?;
    if let Some(want) = expect {
        post(&Reply::Progress { phase: Phase::Verify, loaded: 0, total: Some(bytes.len() as u64) }, None);
        verify(name, &bytes, want)?;
    }
    let Some(c) = cache else { return Ok((bytes, Source::Network)) };
    // A failure to store (quota, private browsing) only costs the next visit a download.
    let body = Uint8Array::from(&bytes[..]);
    let stored = match Response::new_with_opt_buffer_source(Some(&body)) {
        Ok(r) => JsFuture::from(c.put_with_str(url, &r)).await.is_ok(),
        Err(_) => false,
    };
    Ok((bytes, if stored { Source::NetworkStored } else { Source::NetworkUnstored }))
}

/// A model's `config.json` (as text) and `model.safetensors` from `base`: from the browser's
/// Cache Storage when kept there (with `use_cache`), else downloaded, checked against `expect`
/// and kept. With `only_cached`, replies `NotCached` and returns `None` unless both are kept.
pub async fn model_files(
    name: &str,
    base: &str,
    expect: Option<&Manifest>,
    use_cache: bool,
    only_cached: bool,
) -> Result<Option<(String, Vec<u8>, Source)>, String> {
    let cache = if use_cache { open_cache().await } else { None };
    let (cfg_url, model_url) = (format!("{base}config.json"), format!("{base}model.safetensors"));
    // Each file is looked up in the cache once: the answer decides both "ask first?" and where
    // the bytes come from.
    let (stored_cfg, stored_model) = (cached(&cache, &cfg_url).await, cached(&cache, &model_url).await);
    if only_cached && (stored_cfg.is_none() || stored_model.is_none()) {
        post(&Reply::NotCached { name: name.into(), size: expect.map(|m| m.model.size) }, None);
        return Ok(None);
    }
    let (config, _) = file(&cfg_url, "config.json", expect.map(|m| &m.config), &cache, stored_cfg).await?;
    let (bytes, from) = file(&model_url, "model.safetensors", expect.map(|m| &m.model), &cache, stored_model).await?;
    let config = String::from_utf8(config).map_err(|_| "config.json is not UTF-8 text".to_string())?;
    Ok(Some((config, bytes, from)))
}
