//! The live demos. Each is one file here (a folder for a big one) behind one trait, [`Demo`]:
//! its parameters, declared once with [`params!`](crate::params) (URL keys, labels, ranges and
//! defaults, from which the controls, link parsing and notices follow); a DOM-free `compute`
//! from those parameters to its output, tested natively; and its view, drawn with the kit
//! (`crate::kit`, wasm only). The registry at the end lists them in reading order; the chapters
//! place them with `{{demo: id}}`. `tests/book/registry.rs` walks the list.

use serde::Serialize;

use crate::state::{Notice, Param, Params, Values};

/// A live demo: one file holding its parameters (declared once with [`params!`](crate::params)),
/// a DOM-free `compute` from those parameters to what it shows, and, in the browser, its view.
/// The file ends with `pub static SPEC: DemoSpec = spec::<ThisDemo>();` and the registry below
/// lists it by module name.
pub trait Demo: 'static {
    /// URL key prefix and directive name: lower-case letters, digits and dashes.
    const ID: &'static str;
    const TITLE: &'static str;
    /// One or two sentences shown under the demo (hidden in an embed with `caption=0`).
    const CAPTION: &'static str;
    type Params: Params;
    /// What the demo shows, as "Download data" writes it.
    type Output: Serialize;
    /// Whether the frame offers "Show numbers": a demo that says yes shows its plots' numbers as
    /// tables while `ctx.show_numbers` is on; one whose numbers are always on the page, or that
    /// has none beyond its readouts, says no and gets no such button.
    const NUMBERS: bool = true;
    /// The keys of the demo's main controls: first in the control panel, and the ones a phone
    /// shows before "More controls" (empty: every control, in the declared order).
    const MAIN: &'static [&'static str] = &[];
    /// The keys of controls the demo's own view draws where they belong (a scrubber beside its
    /// plots): the control panel leaves them out.
    const IN_VIEW: &'static [&'static str] = &[];
    /// What a link's missing keys mean: the values a link leaves out because they are these
    /// (the defaults, unless a value depends on another: the GPT-2 demo's prompts and head are
    /// the chosen model's own). `DemoSpec::link_pairs` writes the rest; `from_link` reads them.
    fn baseline(_p: &Self::Params) -> Self::Params {
        <Self::Params as Params>::defaults()
    }
    /// The keys of controls that change nothing for these values (another tool's settings): the
    /// control panel hides them until they matter again. Their values stay in the link.
    fn idle(_p: &Self::Params) -> &'static [&'static str] {
        &[]
    }
    fn compute(p: &Self::Params) -> Self::Output;
    /// "Download data": the computed output, unless the demo says otherwise (a demo whose
    /// numbers come from the compute worker, or whose compute can fail).
    fn data(p: &Self::Params) -> Result<serde_json::Value, String> {
        to_json(&Self::compute(p))
    }
    /// For a demo whose numbers need a file the page fetches (a bundled model): the same
    /// computation from the file's bytes, which `read` gives by their path under `static/`
    /// (`models/stories/model.safetensors`). The view fetches the bytes and calls the same
    /// code; natively the tests read them from disk, so they check the demo's real output.
    /// `None` for a demo that needs no file.
    fn load(_p: &Self::Params, _read: &mut Reader) -> Option<Result<serde_json::Value, String>> {
        None
    }
    /// Draws the demo with the kit: `Self::compute` on `ctx.params::<Self::Params>()`.
    #[cfg(target_arch = "wasm32")]
    fn view(ctx: crate::kit::DemoCtx) -> leptos::prelude::AnyView;
}

/// What a view draws: the demo's `compute` on its typed parameters, re-run when a control (or a
/// link, or Reset) changes one; a memo, so that plots redraw only when the output changed.
#[cfg(target_arch = "wasm32")]
pub fn output<D: Demo>(ctx: crate::kit::DemoCtx) -> leptos::prelude::Memo<D::Output>
where
    D::Output: PartialEq + Send + Sync + 'static,
{
    use leptos::prelude::{Memo, With};
    let params = ctx.params::<D::Params>();
    Memo::new(move |_| params.with(D::compute))
}

/// Reads a file of the book's static folder by its path there (see [`Demo::load`]).
pub type Reader<'a> = dyn FnMut(&str) -> Result<Vec<u8>, String> + 'a;

/// A demo as the pages and tests see it, whatever its types.
pub struct DemoSpec {
    pub id: &'static str,
    pub title: &'static str,
    pub caption: &'static str,
    pub params: &'static [Param],
    /// [`Demo::NUMBERS`]: the frame shows the "Show numbers" button.
    pub numbers: bool,
    /// [`Demo::MAIN`] and [`Demo::IN_VIEW`]: the control panel's order and what it leaves out.
    pub main: &'static [&'static str],
    pub in_view: &'static [&'static str],
    pub data: fn(&Values) -> Result<serde_json::Value, String>,
    /// Reads the values into the demo's typed parameters and writes them back into fresh values:
    /// `tests/book/registry.rs` checks nothing changes, so every field's type fits its control.
    pub retype: fn(&Values) -> Values,
    /// [`Demo::baseline`] on values.
    pub baseline: fn(&Values) -> Values,
    /// [`Demo::idle`] on values.
    pub idle: fn(&Values) -> &'static [&'static str],
    /// The output computed from the files the demo reads, if it reads any ([`Demo::load`]).
    pub load: fn(&Values, &mut Reader) -> Option<Result<serde_json::Value, String>>,
}

/// The registry entry of a demo.
pub const fn spec<D: Demo>() -> DemoSpec {
    DemoSpec {
        id: D::ID,
        title: D::TITLE,
        caption: D::CAPTION,
        params: <D::Params as Params>::TABLE,
        numbers: D::NUMBERS,
        main: D::MAIN,
        in_view: D::IN_VIEW,
        data: data::<D>,
        retype: retype::<D>,
        baseline: baseline::<D>,
        idle: idle::<D>,
        load: load::<D>,
    }
}

impl DemoSpec {
    /// A link's values for this demo (`Values::from_pairs`, with its notices), each key the link
    /// leaves out taken from the demo's baseline for the values it gives ([`Demo::baseline`]).
    pub fn from_link(&self, pairs: &[(String, String)]) -> (Values, Vec<Notice>) {
        let (mut values, notices) = Values::from_pairs(self.id, self.params, pairs);
        let base = (self.baseline)(&values);
        let given = |p: &Param| {
            pairs
                .iter()
                .filter_map(|(k, _)| k.strip_prefix(self.id)?.strip_prefix('.'))
                .any(|sub| sub == p.key || p.formerly.is_some_and(|f| f.0 == sub))
        };
        for p in self.params.iter().filter(|p| !given(p)) {
            if let Some(v) = base.get(p.key) {
                values.set(p.key, v.clone());
            }
        }
        (values, notices)
    }

    /// The pairs of a link to these values: those that differ from the baseline
    /// ([`Demo::baseline`]), which [`from_link`](Self::from_link) fills back in.
    pub fn link_pairs(&self, values: &Values) -> Vec<(String, String)> {
        let base = (self.baseline)(values);
        values
            .iter()
            .filter(|(p, v)| base.get(p.key) != Some(*v))
            .map(|(p, v)| (format!("{}.{}", self.id, p.key), crate::state::format_value(v)))
            .collect()
    }

    /// The controls of the panel, main ones first (each with whether it is main); the ones the
    /// view draws are left out.
    pub fn panel(&self) -> Vec<(&'static Param, bool)> {
        let main = self.main.iter().filter_map(|k| self.params.iter().find(|p| p.key == *k)).map(|p| (p, true));
        let rest = self.params.iter().filter(|p| !self.main.contains(&p.key)).map(|p| (p, false));
        main.chain(rest).filter(|(p, _)| !self.in_view.contains(&p.key)).collect()
    }
}

/// The query of a link that opens demo `D` with `p`: the pairs that differ from its baseline
/// ([`DemoSpec::link_pairs`]), as the page writes its own links (for one chapter's link to another).
pub fn link_query<D: Demo>(p: &D::Params) -> String {
    let mut values = Values::defaults(<D::Params as Params>::TABLE);
    p.write(&mut values);
    let pairs = spec::<D>().link_pairs(&values);
    crate::state::query::build_query(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

fn data<D: Demo>(v: &Values) -> Result<serde_json::Value, String> {
    D::data(&D::Params::read(v))
}

fn retype<D: Demo>(v: &Values) -> Values {
    let mut out = Values::defaults(<D::Params as Params>::TABLE);
    D::Params::read(v).write(&mut out);
    out
}

fn baseline<D: Demo>(v: &Values) -> Values {
    let mut out = Values::defaults(<D::Params as Params>::TABLE);
    D::baseline(&D::Params::read(v)).write(&mut out);
    out
}

fn idle<D: Demo>(v: &Values) -> &'static [&'static str] {
    D::idle(&D::Params::read(v))
}

fn load<D: Demo>(v: &Values, read: &mut Reader) -> Option<Result<serde_json::Value, String>> {
    D::load(&D::Params::read(v), read)
}

/// Declares each demo's module, the type that implements [`Demo`] there and the chapter whose
/// wasm chunk holds its view, and lists its `SPEC`, in reading order: adding a demo is one line.
/// In the page's build (feature `split`, `scripts/build_page.sh`) each view is a split point: the
/// code only one chapter's demos use goes into that chapter's chunk (`split_<chapter>.wasm`), and
/// code some chapters share into chunks of their own, which the page fetches when such a demo
/// first appears. `tests/book/registry.rs` checks each demo's chunk is the chapter that shows it.
macro_rules! registry {
    ($($module:ident: $demo:ident in $chunk:ident),* $(,)?) => {
        $(pub mod $module;)*
        pub static DEMOS: &[&DemoSpec] = &[$(&$module::SPEC),*];

        /// The chunk that holds the view of the demo `id`: its chapter's slug, `_` for `-`.
        pub fn chunk_of(id: &str) -> Option<&'static str> {
            $(if id == $module::SPEC.id {
                return Some(stringify!($chunk));
            })*
            None
        }

        /// A module per demo, named after its own, with a function of the same name, its view from
        /// its chapter's chunk (the name makes the chunk's export unique), and (in the split build)
        /// `load`, which fetches that chunk without drawing anything.
        #[cfg(target_arch = "wasm32")]
        mod chunks {
            $(pub mod $module {
                use crate::demos::{Demo, ViewError};
                use leptos::prelude::AnyView;

                #[cfg_attr(feature = "split", leptos::wasm_split::wasm_split(
                    $chunk, wasm_split_path = ::leptos::wasm_split, fallible, preload(load)))]
                pub fn $module(ctx: crate::kit::DemoCtx) -> Result<AnyView, ViewError> {
                    // Built once: what the view reads while it is built is no reason to build it again.
                    Ok(leptos::prelude::untrack(|| <crate::demos::$module::$demo as Demo>::view(ctx)))
                }
            })*
        }

        /// Draws the demo `id` ([`Demo::view`]), once its chunk has loaded.
        #[cfg(target_arch = "wasm32")]
        pub async fn view(id: &str, ctx: crate::kit::DemoCtx) -> Result<leptos::prelude::AnyView, ViewError> {
            $(if id == $module::SPEC.id {
                #[cfg(feature = "split")]
                return chunks::$module::$module(ctx).await;
                #[cfg(not(feature = "split"))]
                return chunks::$module::$module(ctx);
            })*
            Err(ViewError(format!("there is no demo called {id:?}")))
        }

        /// Starts fetching a chapter's chunk (its slug, `_` for `-`) before its demos are drawn, so
        /// that it arrives while the page is being built. Nothing for a page with no demos.
        #[cfg(target_arch = "wasm32")]
        pub fn preload(chunk: &str) {
            $(if chunk == stringify!($chunk) {
                #[cfg(feature = "split")]
                wasm_bindgen_futures::spawn_local(async {
                    // A failure is the demo's to report, when it is drawn.
                    let _ = chunks::$module::load().await;
                });
                return;
            })*
        }
    };
}

/// The chunk a page's demos are in, from its address: a chapter's (`/scoring/`), or an embed's
/// demo's (`/embed/?demo=temperature`); `None` for a page whose demos are in no one chunk.
pub fn chunk_of_page(path: &str, query: &str) -> Option<&'static str> {
    let slug = path.trim_matches('/').split('/').next()?;
    if slug == "embed" {
        let id = query.trim_start_matches('?').split('&').find_map(|kv| kv.strip_prefix("demo="))?;
        return chunk_of(id);
    }
    DEMOS.iter().filter_map(|d| chunk_of(d.id)).find(|c| c.replace('_', "-") == slug)
}

/// Why a demo's view could not be drawn: its code could not be fetched (offline before the book
/// was kept, a broken connection), or no demo has that name.
#[cfg(target_arch = "wasm32")]
#[derive(Debug, Clone, PartialEq)]
pub struct ViewError(pub String);

#[cfg(target_arch = "wasm32")]
impl From<leptos::wasm_split::SplitLoaderError> for ViewError {
    fn from(_: leptos::wasm_split::SplitLoaderError) -> Self {
        ViewError("its code could not be fetched (check the connection, then reload the page)".into())
    }
}

registry! {
    rnn_problems: RnnProblemsDemo in why_attention,
    alignment: AlignmentDemo in why_attention,
    bottleneck: BottleneckDemo in why_attention,
    translation: TranslationDemo in why_attention,
    lookup: LookupDemo in soft_lookup,
    kernels: KernelsDemo in kernel_regression,
    nadaraya_watson: NwDemo in kernel_regression,
    gauss_dot: GaussDotDemo in scoring,
    scaling: ScalingDemo in scoring,
    temperature: TemperatureDemo in scoring,
    scorers: ScorersDemo in scoring,
    padding: PaddingDemo in masking,
    causal: CausalDemo in masking,
    self_attention: SelfAttentionDemo in self_attention,
    bank: BankDemo in self_attention,
    multi_head: MultiHeadDemo in multi_head,
    two_heads: TwoHeadsDemo in multi_head,
    sinusoidal: SinusoidalDemo in positional,
    pe_shift: PeShiftDemo in positional,
    rope: RopeDemo in positional,
    wpe: WpeDemo in positional,
    rope_model: RopeModelDemo in positional,
    collapse: CollapseDemo in transformer_block,
    train_lab: TrainLabDemo in training,
    gpt2: Gpt2Demo in gpt2_live,
    inside: InsideDemo in inside,
    vision: VisionDemo in images,
    attention_cost: AttentionCostDemo in efficient,
    sliding_window: SlidingWindowDemo in efficient,
    flash_steps: FlashStepsDemo in efficient,
    linformer: LinformerDemo in efficient,
    kv_cache: KvCacheDemo in efficient,
    instruction_reach: InstructionReachDemo in efficient,
}

pub fn find(id: &str) -> Option<&'static DemoSpec> {
    DEMOS.iter().copied().find(|d| d.id == id)
}

/// A bundled model's session on the CPU, either family, from its files under `models/NAME/`
/// (`tokenizer.json` beside a Llama-family model): what a demo's `load` runs natively where the
/// page asks the worker.
#[cfg(not(target_arch = "wasm32"))]
pub fn bundled_session(name: &str, read: &mut Reader) -> Result<crate::session::ModelSession, String> {
    use crate::session::ModelSession;
    let dir = format!("models/{name}");
    let config = String::from_utf8(read(&format!("{dir}/config.json"))?).map_err(|e| e.to_string())?;
    let family = crate::session::family(&config).map_err(|e| e.to_string())?;
    let tokenizer = match family.tokenizer_file() {
        Some(file) => Some(String::from_utf8(read(&format!("{dir}/{file}"))?).map_err(|e| e.to_string())?),
        None => None,
    };
    let weights = read(&format!("{dir}/model.safetensors"))?;
    ModelSession::new(&config, &weights, tokenizer.as_deref()).map_err(|e| e.to_string())
}

/// The value of a future that needs no waiting: a session on the CPU computes in its first poll
/// (only the GPU path awaits the device). Anything else is an error, never a hang.
#[cfg(not(target_arch = "wasm32"))]
pub fn now<T>(fut: impl std::future::Future<Output = T>) -> Result<T, String> {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Ok(v),
        std::task::Poll::Pending => Err("the model did not answer at once (it needs a GPU)".into()),
    }
}

/// What a demo that reads a model's insides asks the compute worker (`kit::probe`), on the CPU:
/// a bundled model by its folder, checked against its pins, or GPT-2 small or SmolLM2-135M from
/// this browser's Cache Storage only (a download of hundreds of MB is the chapter "A real model,
/// live"'s to offer, not a demo's).
#[cfg(target_arch = "wasm32")]
pub fn ask_model(
    key: &str,
    label: &str,
    requests: Vec<crate::session::protocol::Request>,
) -> Option<crate::kit::probe::Ask> {
    use crate::session::manifest;
    let base = gpt2::model_base(key, "")?;
    let (only_cached, label, expect) = match key {
        "smollm2" => (true, "SmolLM2-135M".to_string(), manifest::smollm2_135m()),
        "gpt2" => (true, "GPT-2 small".to_string(), Some(manifest::gpt2_small())),
        "trained" => (true, "Your trained model".to_string(), None),
        _ => (false, label.to_string(), manifest::bundled(&base)),
    };
    let missing = if key == "trained" {
        "No trained model is kept in this browser: train one in the chapter \"Watching attention learn\" \
         and press its \"Look inside\" or \"Open in the GPT-2 chapter\"."
            .to_string()
    } else {
        format!(
            "{label} is not in this browser yet: load it once in the chapter \"A real model, live\" (it is kept \
             there), then come back."
        )
    };
    Some(crate::kit::probe::Ask {
        model: key.into(),
        missing,
        expect,
        base,
        only_cached,
        requests,
        backend: crate::session::protocol::BackendChoice::Cpu,
    })
}

crate::options! {
    /// Where a translation or vision model runs (`session::protocol::BackendChoice`).
    pub enum RunsOn {
        Auto = ("auto", "Automatic: WebGPU if this browser has a GPU"),
        Webgpu = ("webgpu", "WebGPU (GPU)"),
        Cpu = ("cpu", "CPU"),
    }
}

impl RunsOn {
    pub fn choice(self) -> crate::session::protocol::BackendChoice {
        use crate::session::protocol::BackendChoice;
        match self {
            RunsOn::Auto => BackendChoice::Auto,
            RunsOn::Webgpu => BackendChoice::Webgpu,
            RunsOn::Cpu => BackendChoice::Cpu,
        }
    }
}

/// A checkpoint folder the reader typed, as a URL ending in `/`: a web address or a path on this
/// site, or why it is not one.
pub fn checkpoint_folder(given: &str) -> Result<String, String> {
    let folder = given.trim();
    let ok = folder.starts_with("https://") || folder.starts_with("http://") || folder.starts_with('/');
    if !ok {
        return Err(format!("“{folder}” is not a web address (https://…)"));
    }
    Ok(if folder.ends_with('/') { folder.to_string() } else { format!("{folder}/") })
}

/// Serialises a demo's output for "Download data".
pub fn to_json<T: serde::Serialize>(out: &T) -> Result<serde_json::Value, String> {
    serde_json::to_value(out).map_err(|e| e.to_string())
}
