//! Getting a model's files into the worker: downloading them with progress, checking them
//! against a pinned manifest (and against the limits of `gpt2::download`), and keeping them in
//! (and reading them back from) the browser's Cache Storage. A file is kept only once the model
//! it belongs to has loaded ([`Files::keep`]), and a kept file that fails to load is removed
//! ([`Files::evict`]): a bad download never stays.

use js_sys::{Promise, Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, ReadableStreamDefaultReader, Response};

use super::{js_err, post, scope};
use crate::gpt2::download::{
    check_complete, check_declared, check_received, grow_to, is_web_page, reserve_for, web_page_error, STALL_SECONDS,
};
use crate::gpt2::manifest::{verify, FileCheck, Manifest, MODEL_CACHE};
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

fn header(resp: &Response, name: &str) -> Option<String> {
    resp.headers().get(name).ok().flatten()
}

/// Stops reading a body (its promise is awaited, so a rejection is not left unhandled).
fn cancel(reader: &ReadableStreamDefaultReader) {
    let done = reader.cancel();
    wasm_bindgen_futures::spawn_local(async move {
        let _ = JsFuture::from(done).await;
    });
}

/// The next chunk of a body (`None` at its end), or an error when none comes for
/// `STALL_SECONDS` (the download is then stopped).
async fn next_chunk(reader: &ReadableStreamDefaultReader, url: &str) -> Result<Option<Uint8Array>, String> {
    let mut timer = 0;
    let stall = Promise::new(&mut |resolve, _| {
        timer = scope()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, STALL_SECONDS as i32 * 1000)
            .unwrap_or(0);
    });
    let race = Promise::race(&js_sys::Array::of2(&reader.read(), &stall));
    let chunk = JsFuture::from(race).await;
    scope().clear_timeout_with_handle(timer);
    let chunk = chunk.map_err(|e| format!("the download of {url} broke off: {}", js_err(e)))?;
    if chunk.is_undefined() {
        cancel(reader);
        return Err(format!(
            "the download of {url} stalled: nothing arrived for {STALL_SECONDS} seconds, so it was stopped; try again"
        ));
    }
    if Reflect::get(&chunk, &"done".into()).ok().and_then(|v| v.as_bool()).unwrap_or(true) {
        return Ok(None);
    }
    Ok(Some(Reflect::get(&chunk, &"value".into()).map_err(js_err)?.unchecked_into()))
}

/// Reads a response body chunk by chunk, posting progress about every 1 MB. The declared
/// `Content-Length` sizes the buffer (a capped first reservation, then the rest at once: see
/// `grow_to`) and is checked against what arrives; a file over the maximum is refused as soon
/// as it is known to be.
async fn read_with_progress(resp: Response, url: &str, phase: Phase, load: u64) -> Result<Vec<u8>, String> {
    let total = header(&resp, "content-length").and_then(|s| s.trim().parse::<u64>().ok());
    check_declared(url, total)?;
    let body = resp.body().ok_or_else(|| format!("{url}: the response has no body"))?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut bytes = Vec::with_capacity(reserve_for(total));
    let mut last = 0u64;
    let progress = |loaded: u64| post(&Reply::Progress { phase, loaded, total, load }, None);
    progress(0);
    while let Some(value) = next_chunk(&reader, url).await? {
        let received = bytes.len() as u64 + u64::from(value.length());
        if let Err(e) = check_received(url, received, total) {
            cancel(&reader);
            return Err(e);
        }
        let (start, n) = (bytes.len(), value.length() as usize);
        if bytes.capacity() - start < n {
            let want = grow_to(total, start, n);
            if bytes.try_reserve_exact(want - start).is_err() {
                cancel(&reader);
                return Err(format!(
                    "{url} does not fit in this tab's memory ({:.0} MB asked for): close other tabs, or use a \
                     smaller model",
                    want as f64 / 1e6
                ));
            }
        }
        bytes.resize(start + n, 0);
        value.copy_to(&mut bytes[start..]);
        if received - last >= 1 << 20 {
            last = received;
            progress(last);
        }
    }
    let received = bytes.len() as u64;
    progress(received);
    check_complete(url, received, total)?;
    Ok(bytes)
}

pub(super) async fn open_cache() -> Option<Cache> {
    let storage = scope().caches().ok()?;
    JsFuture::from(storage.open(MODEL_CACHE)).await.ok().map(JsCast::unchecked_into)
}

pub(super) async fn cached(cache: &Option<Cache>, url: &str) -> Option<Response> {
    let found = JsFuture::from(cache.as_ref()?.match_with_str(url)).await.ok()?;
    found.dyn_into::<Response>().ok()
}

/// One file of a model: the cached copy `stored` if there is one, else from the network
/// (verified against `expect` when given). `true` with the bytes when they came from the cache.
pub(super) async fn file(
    url: &str,
    name: &str,
    expect: Option<&FileCheck>,
    stored: Option<Response>,
    load: u64,
) -> Result<(Vec<u8>, bool), String> {
    if let Some(resp) = stored {
        return Ok((read_with_progress(resp, url, Phase::Cache, load).await?, true));
    }
    let resp = fetch(url).await?;
    // A pinned file of another size is refused before downloading it.
    let length = header(&resp, "content-length").and_then(|s| s.trim().parse::<u64>().ok());
    if let (Some(want), Some(len)) = (expect, length) {
        if want.size != len {
            return Err(format!(
                "{url} is {len} bytes, but the pinned {name} is {} bytes: it is a different file",
                want.size
            ));
        }
    }
    if is_web_page(header(&resp, "content-type").as_deref(), b"") {
        return Err(web_page_error(url));
    }
    let bytes = read_with_progress(resp, url, Phase::Download, load).await?;
    // A server may label its error page as anything: its first bytes tell.
    if is_web_page(None, &bytes[..bytes.len().min(64)]) {
        return Err(web_page_error(url));
    }
    if let Some(want) = expect {
        post(&Reply::Progress { phase: Phase::Verify, loaded: 0, total: Some(bytes.len() as u64), load }, None);
        verify(name, &bytes, want)?;
    }
    Ok((bytes, false))
}

/// A model's files, read and not yet kept.
pub struct Files {
    pub config: String,
    pub model: Vec<u8>,
    /// Where the model file came from (`Network`: to be kept with [`Files::keep`], when
    /// `cache` is open).
    pub from: Source,
    cache: Option<Cache>,
    /// Which files (config, model) came from the network.
    fresh: [bool; 2],
    urls: [String; 2],
}

impl Files {
    /// Keeps the downloaded files in Cache Storage (call once the model loaded): the source to
    /// report. A failure to store (quota, private browsing) only costs the next visit a download.
    pub async fn keep(&self) -> Source {
        let Some(c) = &self.cache else { return self.from };
        if self.fresh == [false, false] {
            return self.from;
        }
        let mut stored = true;
        let bytes = [self.config.as_bytes(), &self.model[..]];
        for ((url, bytes), _) in self.urls.iter().zip(bytes).zip(self.fresh).filter(|(_, fresh)| *fresh) {
            // A Blob made from a view of the wasm memory: one copy, which the browser can keep
            // out of this tab's memory, where a Uint8Array and a Response from it made two
            // (548 MB each for GPT-2 small, beside the file and the weights still in the wasm).
            // SAFETY: the view is used only by the Blob constructor, before any allocation can
            // move the wasm memory.
            let blob = {
                let view = unsafe { Uint8Array::view(bytes) };
                web_sys::Blob::new_with_u8_array_sequence(&js_sys::Array::of1(&view))
            };
            stored &= match blob.and_then(|b| Response::new_with_opt_blob(Some(&b))) {
                Ok(r) => JsFuture::from(c.put_with_str(url, &r)).await.is_ok(),
                Err(_) => false,
            };
        }
        if stored {
            Source::NetworkStored
        } else {
            Source::NetworkUnstored
        }
    }

    /// Removes the model's kept files (call when they failed to load), so the next visit
    /// downloads them afresh.
    pub async fn evict(&self) {
        if let Some(c) = &self.cache {
            for url in &self.urls {
                let _ = JsFuture::from(c.delete_with_str(url)).await;
            }
        }
    }
}

/// A model's `config.json` (as text) and `model.safetensors` from `base`: from the browser's
/// Cache Storage when kept there (with `use_cache`), else downloaded and checked against
/// `expect`. With `only_cached`, replies `NotCached` and returns `None` unless both are kept.
/// A file that fails its checks is removed from the cache.
pub async fn model_files(
    name: &str,
    base: &str,
    expect: Option<&Manifest>,
    use_cache: bool,
    only_cached: bool,
    load: u64,
) -> Result<Option<Files>, String> {
    let cache = if use_cache { open_cache().await } else { None };
    let (cfg_url, model_url) = (format!("{base}config.json"), format!("{base}model.safetensors"));
    // Each file is looked up in the cache once: the answer decides both "ask first?" and where
    // the bytes come from.
    let (stored_cfg, stored_model) = (cached(&cache, &cfg_url).await, cached(&cache, &model_url).await);
    if only_cached && (stored_cfg.is_none() || stored_model.is_none()) {
        post(&Reply::NotCached { name: name.into(), size: expect.map(|m| m.model.size), load }, None);
        return Ok(None);
    }
    let mut files = Files {
        config: String::new(),
        model: Vec::new(),
        from: Source::Network,
        cache,
        fresh: [false, false],
        urls: [cfg_url.clone(), model_url.clone()],
    };
    let read = async {
        let (config, cfg_cached) = file(&cfg_url, "config.json", expect.map(|m| &m.config), stored_cfg, load).await?;
        let (model, cached) =
            file(&model_url, "model.safetensors", expect.map(|m| &m.model), stored_model, load).await?;
        Ok::<_, String>((config, cfg_cached, model, cached))
    };
    let (config, cfg_cached, model, model_cached) = match read.await {
        Ok(r) => r,
        Err(e) => {
            files.evict().await;
            return Err(e);
        }
    };
    files.fresh = [!cfg_cached, !model_cached];
    files.config = match String::from_utf8(config) {
        Ok(c) => c,
        Err(_) => {
            files.evict().await;
            return Err("config.json is not UTF-8 text".into());
        }
    };
    files.model = model;
    files.from = if model_cached { Source::Cache } else { Source::Network };
    Ok(Some(files))
}
