//! Getting a model's files into the worker: downloading them with progress, checking them
//! against a pinned manifest (and against the limits of `session::download`), and keeping them in
//! (and reading them back from) the browser's Cache Storage. `model.safetensors` is never held
//! whole: each chunk of its body goes into a `ModelLoader` (`model::stream`, any family), which
//! writes it into the model's weights, and (when downloaded) into a stream that Cache Storage
//! reads from as it arrives ([`CacheWriter`]). A file is kept only once the model it belongs to
//! has loaded ([`Files::keep`] ends that stream; until then the entry does not exist, and a load
//! that fails or is superseded ends it as failed), and a kept file that fails to load is removed:
//! a bad download never stays.

use js_sys::{Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, ReadableStream, ReadableStreamDefaultReader, Response};

use super::{js_err, post, scope};
use crate::formats::LoadError;
use crate::marian::Marian;
use crate::model::stream::StreamLoader;
use crate::session::any::ModelLoader;
use crate::session::download::{
    check_complete, check_declared, check_received, grow_to, is_web_page, reserve_for, web_page_error, STALL_SECONDS,
};
use crate::session::manifest::{verify, FileCheck, Manifest, Verifier, MODEL_CACHE};
use crate::session::protocol::{Phase, Reply, Source};

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

/// What a model file's body is fed into while it arrives: the loader of a family of the registry
/// (`ModelLoader`), or a translation model's.
pub trait Feed: Sized {
    /// A loader for the model `config_json` describes, for a file of `declared` bytes when known.
    fn start(config_json: &str, declared: Option<u64>) -> Result<Self, LoadError>;
    /// Takes the next bytes of the file; an error ends the load.
    fn feed(&mut self, bytes: &[u8]) -> Result<(), LoadError>;
}

impl Feed for ModelLoader {
    fn start(config_json: &str, declared: Option<u64>) -> Result<Self, LoadError> {
        ModelLoader::new(config_json, declared)
    }
    fn feed(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
        ModelLoader::feed(self, bytes)
    }
}

impl Feed for StreamLoader<crate::vit::Vit> {
    fn start(config_json: &str, declared: Option<u64>) -> Result<Self, LoadError> {
        StreamLoader::new(config_json, declared)
    }
    fn feed(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
        StreamLoader::feed(self, bytes)
    }
}

impl Feed for StreamLoader<Marian> {
    fn start(config_json: &str, declared: Option<u64>) -> Result<Self, LoadError> {
        StreamLoader::new(config_json, declared)
    }
    fn feed(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
        StreamLoader::feed(self, bytes)
    }
}

/// How many chunks Cache Storage may fall behind the download before the download waits for
/// it (a network chunk is at most 64 KB in Chromium: a few MB).
const CACHE_LAG_CHUNKS: f64 = 64.0;

/// Where a model file's body goes while it arrives, besides the loader.
struct Sinks<'a, L> {
    loader: &'a mut L,
    /// The pinned file's size and hash, when there is one.
    hash: Option<Verifier>,
    /// Cache Storage's copy, for a download.
    cache: Option<&'a CacheWriter>,
}

/// Reads a model file's body chunk by chunk into `sinks` (progress about every 1 MB, the
/// checks of `session::download` on the declared and received lengths): a reused buffer of one
/// chunk is all of the file the worker holds. `name` prefixes the loader's refusals.
async fn stream_model<L: Feed>(
    resp: Response,
    url: &str,
    name: &str,
    phase: Phase,
    load: u64,
    sinks: &mut Sinks<'_, L>,
) -> Result<(), String> {
    let total = header(&resp, "content-length").and_then(|s| s.trim().parse::<u64>().ok());
    check_declared(url, total)?;
    let body = resp.body().ok_or_else(|| format!("{url}: the response has no body"))?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    // The first bytes, to tell a web page from a refused file.
    let mut head = Vec::with_capacity(64);
    let (mut chunk, mut received, mut last) = (Vec::new(), 0u64, 0u64);
    let progress = |loaded: u64| post(&Reply::Progress { phase, loaded, total, load }, None);
    progress(0);
    while let Some(value) = next_chunk(&reader, url).await? {
        received += u64::from(value.length());
        if let Err(e) = check_received(url, received, total) {
            cancel(&reader);
            return Err(e);
        }
        chunk.resize(value.length() as usize, 0);
        value.copy_to(&mut chunk);
        head.extend_from_slice(&chunk[..chunk.len().min(64 - head.len())]);
        if let Some(h) = &mut sinks.hash {
            h.update(&chunk);
        }
        if let Err(e) = sinks.loader.feed(&chunk) {
            cancel(&reader);
            return Err(if is_web_page(None, &head) { web_page_error(url) } else { format!("{name}: {e}") });
        }
        if let Some(c) = sinks.cache {
            c.write(&value).await;
        }
        if received - last >= 1 << 20 {
            last = received;
            progress(last);
        }
    }
    progress(received);
    check_complete(url, received, total)
}

/// A file going into Cache Storage while it downloads: a `ReadableStream` this worker writes
/// each chunk into (the network's own `Uint8Array`, not a copy), read by `cache.put` as it
/// comes. The entry exists only once the stream is closed ([`CacheWriter::close`], after the
/// model loaded); an error ends it instead, and the put stores nothing (also on drop).
struct CacheWriter {
    controller: JsValue,
    put: Option<Promise>,
    stored: std::rc::Rc<std::cell::Cell<bool>>,
    open: std::cell::Cell<bool>,
    /// The stream's `start` (called inside the constructor, kept for its lifetime).
    _start: Closure<dyn FnMut(JsValue)>,
}

impl CacheWriter {
    fn new(cache: &Cache, url: &str) -> Option<CacheWriter> {
        let controller = std::rc::Rc::new(std::cell::RefCell::new(JsValue::UNDEFINED));
        let keep = controller.clone();
        let start = Closure::<dyn FnMut(JsValue)>::new(move |c: JsValue| *keep.borrow_mut() = c);
        let source = Object::new();
        Reflect::set(&source, &"start".into(), start.as_ref()).ok()?;
        // `start` runs inside the constructor: the controller is set when it returns.
        let stream = ReadableStream::new_with_underlying_source(&source).ok()?;
        let resp = Response::new_with_opt_readable_stream(Some(&stream)).ok()?;
        // Settles when the put does, `stored` saying how: an aborted put is never an unhandled
        // rejection. The handlers outlive this writer (a put settles after its stream ends):
        // each frees itself when called, and the one not called is a few bytes left behind.
        let stored = std::rc::Rc::new(std::cell::Cell::new(false));
        let ok = stored.clone();
        let done = Closure::once_into_js(move |_: JsValue| ok.set(true));
        let failed = Closure::once_into_js(|_: JsValue| {});
        let put = cache.put_with_str(url, &resp);
        let then = Reflect::get(&put, &"then".into()).ok()?.dyn_into::<Function>().ok()?;
        let put: Promise = then.call2(&put, &done, &failed).ok()?.dyn_into().ok()?;
        let controller = controller.borrow().clone();
        Some(CacheWriter { controller, put: Some(put), stored, open: true.into(), _start: start })
    }

    fn call(&self, method: &str, arg: &JsValue) {
        if let Ok(f) = Reflect::get(&self.controller, &method.into()).and_then(|f| f.dyn_into::<Function>()) {
            let _ = f.call1(&self.controller, arg);
        }
    }

    /// Queues a chunk; waits while Cache Storage is more than [`CACHE_LAG_CHUNKS`] behind. One
    /// that stops reading for `STALL_SECONDS` is given up (nothing is stored): the model still
    /// loads.
    async fn write(&self, chunk: &Uint8Array) {
        if !self.open.get() {
            return;
        }
        self.call("enqueue", chunk);
        let behind = || {
            Reflect::get(&self.controller, &"desiredSize".into()).ok().and_then(|v| v.as_f64()).unwrap_or(0.0)
                < -CACHE_LAG_CHUNKS
        };
        let since = js_sys::Date::now();
        while behind() {
            if js_sys::Date::now() - since > f64::from(STALL_SECONDS) * 1000.0 {
                return self.abort();
            }
            super::dispatch::yield_now().await;
        }
    }

    /// Ends the stream as failed: nothing is stored.
    fn abort(&self) {
        if self.open.replace(false) {
            self.call("error", &"the model did not load".into());
        }
    }

    /// Ends the stream: the entry is stored once Cache Storage has it all. Whether it was.
    async fn close(mut self) -> bool {
        self.open.set(false);
        self.call("close", &JsValue::UNDEFINED);
        match self.put.take() {
            Some(p) => JsFuture::from(p).await.is_ok() && self.stored.get(),
            None => false,
        }
    }
}

impl Drop for CacheWriter {
    fn drop(&mut self) {
        self.abort();
    }
}

pub(super) async fn open_cache() -> Option<Cache> {
    let storage = scope().caches().ok()?;
    JsFuture::from(storage.open(MODEL_CACHE)).await.ok().map(JsCast::unchecked_into)
}

pub(super) async fn cached(cache: &Option<Cache>, url: &str) -> Option<Response> {
    let found = JsFuture::from(cache.as_ref()?.match_with_str(url)).await.ok()?;
    found.dyn_into::<Response>().ok()
}

/// One small file of a model (`config.json`, `tokenizer.json`) whole: the cached copy `stored`
/// if there is one, else from the network (verified against `expect` when given). `true` with
/// the bytes when they came from the cache.
pub(super) async fn file(
    url: &str,
    name: &str,
    expect: Option<&FileCheck>,
    stored: Option<Response>,
    load: u64,
) -> Result<(Vec<u8>, bool), String> {
    let cached = stored.is_some();
    let bytes = match stored {
        Some(resp) => read_with_progress(resp, url, Phase::Cache, load).await?,
        None => {
            let resp = fetch(url).await?;
            check_pinned_length(&resp, url, name, expect)?;
            let bytes = read_with_progress(resp, url, Phase::Download, load).await?;
            // A server may label its error page as anything: its first bytes tell.
            if is_web_page(None, &bytes[..bytes.len().min(64)]) {
                return Err(web_page_error(url));
            }
            if let Some(want) = expect {
                post(&Reply::Progress { phase: Phase::Verify, loaded: 0, total: Some(bytes.len() as u64), load }, None);
                verify(name, &bytes, want)?;
            }
            bytes
        }
    };
    Ok((bytes, cached))
}

/// `config.json` as text (see [`file`]).
async fn config_file(
    url: &str,
    expect: Option<&FileCheck>,
    stored: Option<Response>,
    load: u64,
) -> Result<(String, bool), String> {
    let (bytes, cached) = file(url, "config.json", expect, stored, load).await?;
    let text = String::from_utf8(bytes).map_err(|_| "config.json is not UTF-8 text".to_string())?;
    Ok((text, cached))
}

/// Refuses a pinned file of another size before downloading it, and a response that says it is
/// a web page.
fn check_pinned_length(resp: &Response, url: &str, name: &str, expect: Option<&FileCheck>) -> Result<(), String> {
    let length = header(resp, "content-length").and_then(|s| s.trim().parse::<u64>().ok());
    if let (Some(want), Some(len)) = (expect, length) {
        if want.size != len {
            return Err(format!(
                "{url} is {len} bytes, but the pinned {name} is {} bytes: it is a different file",
                want.size
            ));
        }
    }
    if is_web_page(header(resp, "content-type").as_deref(), b"") {
        return Err(web_page_error(url));
    }
    Ok(())
}

/// `model.safetensors` loaded into a model for `config`, while it arrives: from the
/// cached copy `stored` if there is one, else downloaded (verified against `expect` when given),
/// and then written into Cache Storage as it arrives when `cache` is open. The model, and the
/// pending cache entry.
async fn model_file<L: Feed>(
    url: &str,
    name: &str,
    config: &str,
    expect: Option<&FileCheck>,
    stored: Option<Response>,
    cache: Option<&Cache>,
    load: u64,
) -> Result<(L, Option<CacheWriter>), String> {
    let (resp, phase) = match stored {
        Some(resp) => (resp, Phase::Cache),
        None => (fetch(url).await?, Phase::Download),
    };
    let downloaded = phase == Phase::Download;
    if downloaded {
        check_pinned_length(&resp, url, "model.safetensors", expect)?;
    }
    let declared = header(&resp, "content-length").and_then(|s| s.trim().parse::<u64>().ok());
    let mut loader = L::start(config, declared).map_err(|e| format!("{name}: {e}"))?;
    let writer = cache.filter(|_| downloaded).and_then(|c| CacheWriter::new(c, url));
    let hash = expect.filter(|_| downloaded).map(|_| Verifier::default());
    let mut sinks = Sinks { loader: &mut loader, hash, cache: writer.as_ref() };
    stream_model(resp, url, name, phase, load, &mut sinks).await?;
    if let (Some(h), Some(want)) = (sinks.hash.take(), expect) {
        post(&Reply::Progress { phase: Phase::Verify, loaded: 0, total: None, load }, None);
        h.check("model.safetensors", want)?;
    }
    Ok((loader, writer))
}

/// A model loaded from its files, not yet kept.
pub struct Files<L = ModelLoader> {
    /// The model, every byte fed: taken and finished (with a tokenizer, for a family that needs
    /// one) by the dispatcher.
    pub model: Option<L>,
    /// `config.json`'s text.
    pub config_json: String,
    /// Where the model file came from (`Network`: to be kept with [`Files::keep`], when
    /// `cache` is open).
    pub from: Source,
    cache: Option<Cache>,
    /// `config.json`'s text, to keep when it came from the network.
    config: Option<String>,
    /// The downloaded model file's entry, stored when closed.
    writer: Option<CacheWriter>,
    urls: [String; 2],
}

impl<L> Files<L> {
    /// Keeps the downloaded files in Cache Storage (call once the model loaded): the source to
    /// report. A failure to store (quota, private browsing) only costs the next visit a download.
    pub async fn keep(&mut self) -> Source {
        let Some(c) = &self.cache else { return self.from };
        if self.config.is_none() && self.writer.is_none() {
            return self.from;
        }
        let mut stored = true;
        if let Some(text) = self.config.take() {
            stored &= match Response::new_with_opt_str(Some(&text)) {
                Ok(r) => JsFuture::from(c.put_with_str(&self.urls[0], &r)).await.is_ok(),
                Err(_) => false,
            };
        }
        if let Some(w) = self.writer.take() {
            stored &= w.close().await;
        }
        if stored {
            Source::NetworkStored
        } else {
            Source::NetworkUnstored
        }
    }
}

impl<L> Files<L> {
    /// Removes the model's kept files (call when they failed to load), so the next visit
    /// downloads them afresh; a download's pending entry is dropped, which stores nothing.
    pub async fn evict(&mut self) {
        self.writer = None;
        evict(&self.cache, &self.urls).await;
    }

    /// `keep`, with the side files read beside the model (a tokenizer's): where the whole came
    /// from, `NetworkUnstored` if the model was stored but a side file was not.
    pub async fn keep_with(&mut self, side: &[&super::side_file::SideFile]) -> Source {
        let mut source = self.keep().await;
        for t in side {
            if !t.keep().await && source == Source::NetworkStored {
                source = Source::NetworkUnstored;
            }
        }
        source
    }

    /// `evict`, with the side files read beside the model: none of them is kept after a failure.
    pub async fn evict_with(&mut self, side: &[&super::side_file::SideFile]) {
        self.evict().await;
        for t in side {
            t.evict().await;
        }
    }
}

/// Removes a model's kept files (when they failed to load), so the next visit downloads them
/// afresh.
async fn evict(cache: &Option<Cache>, urls: &[String; 2]) {
    if let Some(c) = cache {
        for url in urls {
            let _ = JsFuture::from(c.delete_with_str(url)).await;
        }
    }
}

/// A model from `config.json` and `model.safetensors` at `base`: from the browser's Cache
/// Storage when kept there (with `use_cache`), else downloaded and checked against `expect`
/// (the model file loaded while it arrives). With `only_cached`, replies `NotCached` and
/// returns `None` unless both are kept. A file that fails its checks is removed from the cache.
pub async fn model_files<L: Feed>(
    name: &str,
    base: &str,
    expect: Option<&Manifest>,
    use_cache: bool,
    only_cached: bool,
    load: u64,
) -> Result<Option<Files<L>>, String> {
    let cache = if use_cache { open_cache().await } else { None };
    let urls = [format!("{base}config.json"), format!("{base}model.safetensors")];
    // Each file is looked up in the cache once: the answer decides both "ask first?" and where
    // the bytes come from.
    let (stored_cfg, stored_model) = (cached(&cache, &urls[0]).await, cached(&cache, &urls[1]).await);
    if only_cached && (stored_cfg.is_none() || stored_model.is_none()) {
        post(&Reply::NotCached { name: name.into(), size: expect.map(|m| m.model.size), load }, None);
        return Ok(None);
    }
    let read = async {
        let (config, cfg_cached) = config_file(&urls[0], expect.map(|m| &m.config), stored_cfg, load).await?;
        let model_cached = stored_model.is_some();
        let (model, writer) =
            model_file(&urls[1], name, &config, expect.map(|m| &m.model), stored_model, cache.as_ref(), load).await?;
        let from = if model_cached { Source::Cache } else { Source::Network };
        Ok::<_, String>(Files {
            model: Some(model),
            from,
            cache: None,
            config_json: config.clone(),
            config: (!cfg_cached).then_some(config),
            writer,
            urls: urls.clone(),
        })
    };
    match read.await {
        Ok(mut files) => {
            files.cache = cache;
            Ok(Some(files))
        }
        Err(e) => {
            evict(&cache, &urls).await;
            Err(e)
        }
    }
}
