//! The model's status as the page shows it, and how the worker's replies and the reader's
//! actions move it: [`next`], a pure function (tested natively in tests/book/gpt2_demo.rs). Also which
//! answers are still wanted ([`Asked`]) and the status line's wording.

use super::{model_base, Model};
use crate::session::protocol::{Family, Phase, Reply, Request, Source};
use crate::numerics::format::Signed;

/// The longest prompt the demo keeps (its parameter's `max_len`): a longer one is cut here, with
/// a notice, and a generation stops here.
pub const PROMPT_MAX: usize = 4000;

/// `text` cut to its first `max` characters, and whether it was cut.
pub fn cut_text(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((end, _)) => (text[..end].to_string(), true),
        None => (text.to_string(), false),
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Starting,
    Loading {
        /// the model's name as the page sent it (`Model::key`)
        name: String,
        phase: Phase,
        loaded: u64,
        total: Option<u64>,
        /// bytes per second, once the phase has run long enough to tell
        rate: Option<f64>,
    },
    /// A downloadable model that is not in the browser's cache: waits for the reader's go.
    NotCached {
        name: String,
        size: Option<u64>,
    },
    /// "From local files" is chosen but no files are picked yet.
    NeedFiles,
    /// "From a URL" is chosen but no URL is given.
    NeedUrl,
    Ready {
        name: String,
        source: Source,
        n_layer: usize,
        n_head: usize,
        n_positions: usize,
        params: usize,
        /// The characters a character-vocabulary model reads, one token each (None: GPT-2's BPE).
        char_vocab: Option<String>,
        family: Family,
        /// Key and value heads (Llama family; GPT-2 has one per head).
        n_kv_head: Option<usize>,
    },
    Failed(String),
}

/// What moves the status: a reply from the worker, or what the page did.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<'a> {
    /// A reply (those about loading count: `Loaded`, `NotCached`, an `Error` without an id).
    Reply(&'a Reply),
    /// Loading progress, with the rate the worker client measured.
    Progress { phase: Phase, loaded: u64, total: Option<u64>, rate: Option<f64> },
    /// The page planned a load ([`plan_load`]) and sent its request, if it has one.
    Planned(&'a Plan),
    /// The reader's files were read and sent to the worker (`Request::LoadBytes`).
    FilesSent,
    /// The reader cancelled the download (the page restarts the worker).
    Cancelled,
    /// The page started a fresh worker (Retry after the last one died): it loads the model
    /// when it is listening.
    Restarting,
    /// Something failed on the page's side (files that could not be read), or the worker died
    /// (it could not start, or it crashed) and took its model with it.
    Failed(String),
}

/// The status after `event`. A reply about a model other than the one the page is loading is
/// stale (the reader chose another meanwhile) and changes nothing; progress counts only while a
/// load is under way.
pub fn next(status: &Status, event: Event) -> Status {
    let stale = |n: &str| matches!(status, Status::Loading { name, .. } if name != n);
    match event {
        Event::Progress { phase, loaded, total, rate } => match status {
            Status::Loading { name, .. } => Status::Loading { name: name.clone(), phase, loaded, total, rate },
            _ => status.clone(),
        },
        Event::Reply(&Reply::Progress { phase, loaded, total, .. }) => {
            next(status, Event::Progress { phase, loaded, total, rate: None })
        }
        Event::Reply(Reply::NotCached { name, size, .. }) if !stale(name) => {
            Status::NotCached { name: name.clone(), size: *size }
        }
        Event::Reply(Reply::Loaded {
            name,
            source,
            n_layer,
            n_head,
            n_positions,
            params,
            char_vocab,
            family,
            n_kv_head,
            ..
        }) if !stale(name) => Status::Ready {
            name: name.clone(),
            source: *source,
            n_layer: *n_layer,
            n_head: *n_head,
            n_positions: *n_positions,
            params: *params,
            char_vocab: char_vocab.clone(),
            family: *family,
            n_kv_head: *n_kv_head,
        },
        // An error without a request id is about the model (loading it, or the worker itself);
        // a worker that crashed has lost its model.
        Event::Reply(Reply::Error { id: None, message, .. } | Reply::Crashed { message }) => {
            Status::Failed(message.clone())
        }
        Event::Reply(_) => status.clone(),
        Event::Planned(Plan::Keep) => status.clone(),
        Event::Planned(Plan::NeedFiles) => Status::NeedFiles,
        Event::Planned(Plan::NeedUrl) => Status::NeedUrl,
        Event::Planned(Plan::Send(req)) => match req {
            Request::Load { name, .. } => loading(name, Phase::Download),
            _ => status.clone(),
        },
        Event::FilesSent => loading(Model::File.key(), Phase::Parse),
        Event::Cancelled if matches!(status, Status::Loading { .. }) => {
            Status::Failed("The download was cancelled.".into())
        }
        Event::Cancelled => status.clone(),
        Event::Restarting => Status::Starting,
        Event::Failed(message) => Status::Failed(message),
    }
}

fn loading(name: &str, phase: Phase) -> Status {
    Status::Loading { name: name.into(), phase, loaded: 0, total: None, rate: None }
}

impl Status {
    pub fn is_ready(&self) -> bool {
        matches!(self, Status::Ready { .. })
    }
    /// (layers, heads) of the loaded model.
    pub fn dims(&self) -> Option<(usize, usize)> {
        match self {
            Status::Ready { n_layer, n_head, .. } => Some((*n_layer, *n_head)),
            _ => None,
        }
    }
    /// The page's `data-status` attribute (the browser tests wait on it).
    pub fn key(&self) -> &'static str {
        match self {
            Status::Starting => "starting",
            Status::Loading { .. } => "loading",
            Status::Ready { .. } => "ready",
            Status::Failed(_) => "failed",
            Status::NotCached { .. } => "not-cached",
            Status::NeedFiles | Status::NeedUrl => "waiting",
        }
    }
}

/// What to do when a model is chosen (or the worker has started, or the reader said to download).
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Local files are loaded or loading already: nothing to ask.
    Keep,
    NeedFiles,
    NeedUrl,
    Send(Request),
}

/// The load for `model` (files from `base`, see [`model_base`]). A remote model is kept in the
/// browser's storage, and with `only_cached` loaded only from there (else the worker answers
/// `NotCached` and the reader decides). Local files cannot come from a link: the reader picks
/// them, and a model loaded from them stays while "local files" stays chosen. The trained model
/// exists only in this browser's storage: it is never downloaded (the worker answers
/// `NotCached` when the lab has stored none).
pub fn plan_load(model: Model, base: &str, only_cached: bool, status: &Status) -> Plan {
    if model == Model::File {
        let has_files = matches!(status, Status::Loading { name, .. } | Status::Ready { name, .. }
            if name == Model::File.key());
        return if has_files { Plan::Keep } else { Plan::NeedFiles };
    }
    let Some(base) = model_base(model.key(), base) else { return Plan::NeedUrl };
    let remote = matches!(model, Model::Gpt2 | Model::Smollm2 | Model::Url);
    let stored_only = model == Model::Trained;
    let expect = match model {
        // The hub's models are pinned, from the hub or from a folder the reader gives for them.
        Model::Gpt2 => Some(crate::session::manifest::gpt2_small()),
        Model::Smollm2 => crate::session::manifest::smollm2_135m(),
        // The bundled models: as the build recorded them.
        _ => crate::session::manifest::bundled(&base),
    };
    Plan::Send(Request::Load {
        name: model.key().into(),
        base,
        expect,
        cache: remote || stored_only,
        only_cached: (remote && only_cached) || stored_only,
        load: 0,
    })
}

/// The page's loads, numbered: each load sent gets the next number ([`Loads::number`]), and a
/// reply about any earlier load is stale (the reader chose another model since, or asked again)
/// and is dropped, so a slow download that ends late never replaces what the page now shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Loads {
    current: u64,
}

impl Loads {
    /// Gives a load request the next number (other requests are left as they are).
    pub fn number(&mut self, req: &mut Request) {
        if let Request::Load { load, .. } | Request::LoadBytes { load, .. } = req {
            self.current += 1;
            *load = self.current;
        }
    }
    /// Whether a reply about load `load` is for the latest load (0: a reply about no load in
    /// particular, such as a message the worker could not read, always is).
    pub fn wants(&self, load: u64) -> bool {
        load == 0 || load == self.current
    }
    /// Whether `reply` should reach the status: not when it reports on a superseded load.
    pub fn wants_reply(&self, reply: &Reply) -> bool {
        self.wants(reply.load())
    }
}

/// Which prompt an analysis answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    Main,
    Compare,
}

/// The ids of the latest analyses asked for (the worker client numbers requests): an answer to
/// an earlier one is stale (the prompt or a setting changed since) and is dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asked {
    main: Option<u64>,
    compare: Option<u64>,
}

impl Asked {
    /// Records `id` as the analysis of `prompt` now wanted (`None`: none is), which makes every
    /// earlier one stale.
    pub fn record(&mut self, prompt: Prompt, id: Option<u64>) {
        match prompt {
            Prompt::Main => self.main = id,
            Prompt::Compare => self.compare = id,
        }
    }
    /// Which prompt the answer `id` is for, or `None` when it is stale.
    pub fn route(&self, id: u64) -> Option<Prompt> {
        if self.main == Some(id) {
            Some(Prompt::Main)
        } else if self.compare == Some(id) {
            Some(Prompt::Compare)
        } else {
            None
        }
    }
}

pub fn mb(bytes: u64) -> String {
    format!("{:.1} MB", Signed(bytes as f64 / 1e6))
}

/// The label of the model a reply names ("model" for a name the page does not know).
pub fn model_label(name: &str) -> &'static str {
    Model::named(name).map_or("model", Model::label)
}

fn phase_label(phase: Phase) -> &'static str {
    match phase {
        Phase::Download => "Downloading",
        Phase::Cache => "Reading the copy stored in this browser",
        Phase::Verify => "Checking the file's SHA-256",
        Phase::Gpu => "Uploading to the GPU and testing it against the CPU:",
        Phase::Parse => "Preparing the model",
    }
}

/// The loading line ("Downloading GPT-2 small …: 12.0 MB of 548.0 MB (2%), 3.1 MB/s") and its
/// progress bar's percentage (none while parsing, checking or uploading: they report no bytes).
pub fn loading_line(
    name: &str,
    phase: Phase,
    loaded: u64,
    total: Option<u64>,
    rate: Option<f64>,
) -> (String, Option<f64>) {
    let share = |t: u64| 100.0 * loaded as f64 / t.max(1) as f64;
    let pct = total.filter(|_| phase.counts_bytes()).map(|t| share(t).round());
    let detail = match total {
        _ if !phase.counts_bytes() => String::new(),
        Some(t) => format!(": {} of {} ({:.0}%)", mb(loaded), mb(t), Signed(share(t))),
        None => format!(": {}", mb(loaded)),
    };
    let speed = rate.filter(|_| phase == Phase::Download).map(|r| format!(", {}/s", mb(r as u64))).unwrap_or_default();
    (format!("{} {}{detail}{speed}", phase_label(phase), model_label(name)), pct)
}

/// The ready line's shape of the model: "GPT-2 · 12 layers × 12 heads", or with its key and
/// value heads, "Llama family · 30 layers × 9 heads (3 KV heads)".
pub fn shape_line(family: Family, n_layer: usize, n_head: usize, n_kv_head: Option<usize>) -> String {
    let kv = match n_kv_head {
        Some(1) => " (1 KV head)".to_string(),
        Some(kv) => format!(" ({kv} KV heads)"),
        None => String::new(),
    };
    format!("{} · {n_layer} layers × {n_head} heads{kv}", family.label())
}

/// What the ready line adds about where the model came from.
pub fn source_note(source: Source) -> &'static str {
    match source {
        Source::Cache => " Loaded from this browser's storage.",
        Source::File => " Loaded from local files.",
        Source::NetworkStored => " A copy is kept in this browser for the next visit.",
        Source::NetworkUnstored => {
            " This browser did not allow keeping a copy (storage quota or private browsing): the next visit will \
             download it again."
        }
        Source::Network => "",
    }
}

/// One model kept in this browser's storage, for the "Stored in this browser" list.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredModel {
    /// What the reader knows it as: the trained model, GPT-2 small from the hub, or its folder URL.
    pub label: String,
    /// The folder its files were fetched from (or stored under).
    pub base: String,
    pub bytes: u64,
}

/// Groups stored files `(URL, bytes)` by folder into models, in the order first seen. `origin`
/// is this site's (the trained model's files are kept under its `TRAINED_BASE`).
pub fn stored_models(files: &[(String, u64)], origin: &str) -> Vec<StoredModel> {
    use crate::session::manifest::{HUB_GPT2, TRAINED_BASE};
    let mut models: Vec<StoredModel> = Vec::new();
    for (url, bytes) in files {
        let base = url.rfind('/').map_or(url.as_str(), |i| &url[..=i]);
        if let Some(m) = models.iter_mut().find(|m| m.base == base) {
            m.bytes = m.bytes.saturating_add(*bytes);
            continue;
        }
        let local = base.strip_prefix(origin).unwrap_or(base);
        let label = if local == TRAINED_BASE {
            Model::Trained.label().to_string()
        } else if base == HUB_GPT2 {
            "GPT-2 small, from the Hugging Face hub".to_string()
        } else if base == crate::session::manifest::HUB_SMOLLM2 {
            "SmolLM2-135M, from the Hugging Face hub".to_string()
        } else {
            base.to_string()
        };
        models.push(StoredModel { label, base: base.to_string(), bytes: *bytes });
    }
    models
}
