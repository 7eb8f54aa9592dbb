//! A loaded model answering the page's questions, for every family, DOM-free: the Web Worker is a
//! thin shell around a session (the messages are in `protocol`), and the same code runs in the
//! native tests. `Session<F>` holds a family's CPU model (always, the GPU's fallback), its
//! tokenizer, and the model on the GPU once attached and self-tested.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use ndarray::{Array2, ArrayView1};

use super::family::ModelFamily;
use super::generation::Generation;
use super::protocol::{Analysis, Attention, CacheInfo, Candidate, HeadQkv, Query, Reply, Source, Token};
use crate::gpu::{Gpu, GpuError, Precision};
use crate::model::engine::{Cache, CpuModel, Engine, EngineError, GpuModel};
use crate::model::sample::distribution;
use crate::model::{Capture, ForwardOptions, ForwardOutput, RunError, Shape};

/// Above this many attention weights (L·H·T²) only the selected layer is sent in full, with
/// every layer's weights shrunk to at most THUMBNAIL × THUMBNAIL per head for the model view.
pub const ALL_LAYERS_LIMIT: usize = 4 << 20;
/// The side of each head's thumbnail in the model view of a long prompt.
pub const THUMBNAIL: usize = 64;

/// Largest difference allowed between the GPU's and the CPU's logits in the self-test, relative
/// to the largest logit (f32 sums in another order: ~1e-5 seen on lavapipe and SwiftShader).
pub const SELF_TEST_TOL: f32 = 1e-3;

/// The same with f16 weights that round an f32 checkpoint (`attach_gpu_with`): rounding each
/// weight to 11 significant bits moves the logits too, so the test allows 20× more; a wrong
/// kernel is still off by the size of the logits themselves.
pub const F16_SELF_TEST_TOL: f32 = 2e-2;

pub struct Session<F: ModelFamily> {
    /// The CPU model: always present, the fallback of the GPU.
    pub model: Rc<F>,
    tok: F::Tokenizer,
    /// The same model on the GPU, when attached and not failed.
    gpu: RefCell<Option<Rc<F::Gpu>>>,
    /// Why a GPU run just fell back to the CPU, until the worker posts it.
    notice: RefCell<Option<String>>,
    /// With f16 weights that round the checkpoint's: the largest change of a logit against
    /// the CPU's f32 ones, measured by the self-test.
    f16_change: Cell<Option<f32>>,
}

impl<F: ModelFamily> Session<F> {
    /// A session on a loaded model and its tokenizer (each family's `new` reads them from the
    /// checkpoint's files).
    pub fn from_parts(model: F, tok: F::Tokenizer) -> Self {
        Session {
            model: Rc::new(model),
            tok,
            gpu: RefCell::new(None),
            notice: RefCell::new(None),
            f16_change: Cell::new(None),
        }
    }

    pub fn config(&self) -> &<F as CpuModel>::Config {
        self.model.config()
    }

    /// The model's sizes, whatever its config calls them.
    pub fn shape(&self) -> Shape {
        self.model.shape()
    }

    pub fn loaded(&self, name: &str, source: Source) -> Reply {
        let c = self.shape();
        Reply::Loaded {
            name: name.into(),
            source,
            family: F::FAMILY,
            n_layer: c.layers,
            n_head: c.heads,
            n_kv_head: F::GROUPED_QUERIES.then_some(c.kv_heads),
            n_embd: c.width,
            n_positions: c.window,
            params: c.params,
            char_vocab: F::char_vocab(&self.tok),
            load: 0,
        }
    }

    /// Uploads the model to `gpu` and runs a self-test: a short prompt's logits on the GPU must
    /// match the CPU's. Only then does the GPU run this session's requests.
    pub async fn attach_gpu(&self, gpu: Rc<Gpu>) -> Result<(), GpuError> {
        self.attach_gpu_with(gpu, false).await
    }

    /// `attach_gpu`, with `f16` asking for f16 weights even where that rounds them (an F32
    /// checkpoint such as GPT-2 small): half the weights' memory and bytes read per token. The
    /// self-test then measures how far the logits move from the CPU's f32 ones
    /// (`gpu_f16_change`). Without `shader-f16` the weights stay f32.
    pub async fn attach_gpu_with(&self, gpu: Rc<Gpu>, f16: bool) -> Result<(), GpuError> {
        // f16 storage halves the weights' memory and the bytes read per token; unasked, only
        // where it changes nothing (an F16 checkpoint on a device with shader-f16).
        let lossless = F::Gpu::lossless_precision(&gpu, &self.model);
        let precision = if f16 && gpu.f16 { Precision::F16 } else { lossless };
        let rounded = precision != lossless;
        let g = Rc::new(F::Gpu::upload(gpu, &self.model, precision).await?);
        let c = self.shape();
        let ids: Vec<u32> = (0..8u32.min(c.window as u32)).map(|i| (i * 97) % c.vocab as u32).collect();
        let opts = ForwardOptions::default();
        let cpu = self
            .model
            .forward(&ids, &mut self.model.new_cache(), &opts)
            .map_err(|e| GpuError::SelfTest(e.to_string()))?;
        let out = g.forward(&ids, &mut g.new_cache(ids.len()), &opts).await?;
        let err = self_test(&cpu.logits, &out.logits, rounded)?;
        self.f16_change.set(rounded.then_some(err));
        *self.gpu.borrow_mut() = Some(g);
        Ok(())
    }

    /// With f16 weights that round the checkpoint's: the largest change of a logit against the
    /// CPU's f32 logits on the self-test's prompt (None on the CPU, with f32 weights, or with an
    /// F16 checkpoint, where f16 changes nothing).
    pub fn gpu_f16_change(&self) -> Option<f32> {
        self.gpu.borrow().as_ref().and(self.f16_change.get())
    }

    /// How the attached GPU model stores its weights (None on the CPU).
    pub fn gpu_precision(&self) -> Option<Precision> {
        self.gpu.borrow().as_ref().map(|g| g.precision())
    }

    /// Runs on the CPU from now on.
    pub fn detach_gpu(&self) {
        *self.gpu.borrow_mut() = None;
    }

    /// Makes the next GPU run fail (a real validation error), to exercise the fallback.
    pub fn inject_gpu_fault(&self) {
        if let Some(g) = self.gpu.borrow().as_ref() {
            g.fail_next();
        }
    }

    /// The engine requests run on now.
    pub fn engine(&self) -> Engine<F::Gpu> {
        match self.gpu.borrow().as_ref() {
            Some(g) => Engine::Gpu(g.clone()),
            None => Engine::Cpu(self.model.clone()),
        }
    }

    /// The fallback notice, once.
    pub fn take_notice(&self) -> Option<String> {
        self.notice.borrow_mut().take()
    }

    /// One forward pass on the current engine. If the GPU fails, the session moves to the CPU
    /// for good (with a notice for the page) and this call is answered by the CPU: `cache` is
    /// then rebuilt from `history` (the tokens the cache held) plus `tokens`. Logits that
    /// overflowed are refused on either backend (`Engine::forward`).
    pub(super) async fn run(
        &self,
        history: &[u32],
        tokens: &[u32],
        cache: &mut Cache,
        opts: &ForwardOptions,
    ) -> Result<ForwardOutput, RunError> {
        match self.engine().forward(&self.model, tokens, cache, opts).await {
            Ok(out) => Ok(out),
            Err(EngineError::Run(e)) => Err(e),
            Err(EngineError::Gpu(e)) => {
                self.detach_gpu();
                *self.notice.borrow_mut() = Some(super::gpu_failed(&e));
                // Rebuild the cache on the CPU from the tokens it held, with the same knock-outs
                // (they change later layers' keys and values), then answer the request itself.
                let mut cpu_cache = self.model.new_cache();
                if !history.is_empty() {
                    let replay = ForwardOptions { ablate: opts.ablate.clone(), ..Default::default() };
                    self.model.forward(history, &mut cpu_cache, &replay)?;
                }
                let out = self.model.forward(tokens, &mut cpu_cache, opts)?.finite()?;
                *cache = Cache::Cpu(cpu_cache);
                Ok(out)
            }
        }
    }

    /// The tokenizer the checkpoint asked for.
    pub fn tokenizer(&self) -> &F::Tokenizer {
        &self.tok
    }

    /// The prompt's tokens, cut from the front to the model's window: (kept, dropped).
    pub fn tokens(&self, prompt: &str) -> Result<(Vec<u32>, usize), RunError> {
        F::tokens(&self.tok, prompt, self.shape().window)
    }

    pub(super) fn token(&self, id: u32) -> Token {
        Token { id, text: F::token_text(&self.tok, id) }
    }

    /// The most likely next tokens under the sampling settings.
    fn candidates(&self, logits: ArrayView1<f32>, q: &Query) -> Vec<Candidate> {
        candidates(logits, q, |id| F::token_text(&self.tok, id))
    }

    /// Runs the prompt once with the knock-outs (and once without, if any heads are knocked out)
    /// and returns the tokens, the next-token candidates, and the attention weights (the
    /// analysis holds their layout; the buffer travels beside it): every layer's (H, T, T) per
    /// query head when they fit, else the selected layer's in full and every layer's as a
    /// thumbnail, pooled by the backend that ran the pass.
    pub async fn analyze(&self, q: &Query) -> Result<(Analysis, Attention), RunError> {
        let c = self.shape();
        let (ids, dropped) = self.tokens(&q.prompt)?;
        let t = ids.len();
        let all = all_layers_fit(c.layers, c.heads, t);
        let layer = q.layer.min(c.layers - 1);
        let capture = if all { Capture::All } else { Capture::Layer(layer) };
        let thumbnails = (!all).then_some(THUMBNAIL);
        let opts = ForwardOptions { capture, ablate: q.ablate.clone(), thumbnails, ..Default::default() };
        let mut cache = self.engine().new_cache(t);
        let out = self.run(&[], &ids, &mut cache, &opts).await?;
        let next = self.candidates(out.logits.row(0), q);
        let baseline = if q.ablate.is_empty() {
            None
        } else {
            let plain = self.run(&[], &ids, &mut self.engine().new_cache(t), &ForwardOptions::default()).await?;
            Some(self.candidates(plain.logits.row(0), q))
        };
        let attention = Attention::encode(c.layers, c.heads, t, &out.attentions, &out.thumbnails);
        let analysis = Analysis {
            id: q.id,
            tokens: ids.iter().map(|&id| self.token(id)).collect(),
            dropped,
            n_layer: c.layers,
            n_head: c.heads,
            attention: attention.layout().clone(),
            next,
            baseline,
            compute_ms: 0.0,
            cache: CacheInfo {
                layers: c.layers,
                kv_heads: c.kv_heads,
                head_size: c.head_dim,
                positions: cache.len(),
                bytes_per_value: std::mem::size_of::<f32>(),
                bytes: cache.bytes() as u64,
            },
        };
        Ok((analysis, attention))
    }

    /// One query head's Q and its key and value head's K and V for `prompt` (cut to the window
    /// like every prompt), on the CPU.
    pub fn head_qkv(&self, id: u64, prompt: &str, layer: usize, head: usize) -> Result<HeadQkv, RunError> {
        let (ids, _) = self.tokens(prompt)?;
        let c = self.shape();
        let [q, k, v] = self.model.head_qkv(&ids, layer, head)?;
        let flat = |a: Array2<f32>| a.into_iter().collect();
        Ok(HeadQkv {
            id,
            tokens: ids.iter().map(|&t| self.token(t)).collect(),
            layer: layer.min(c.layers - 1),
            head: head.min(c.heads - 1),
            d: c.head_dim,
            q: flat(q),
            k: flat(k),
            v: flat(v),
        })
    }

    /// The forward pass as generation runs it: the tokens already cached, the new ones, the
    /// cache and the options, to the last position's logits.
    fn logits(
        &self,
    ) -> impl AsyncFnMut(&[u32], &[u32], &mut Cache, &ForwardOptions) -> Result<Array2<f32>, RunError> + '_ {
        async |past, new, cache, opts| Ok(self.run(past, new, cache, opts).await?.logits)
    }

    /// Starts sampling after the prompt: runs the prompt once into a KV cache.
    pub async fn start_generation(&self, q: &Query) -> Result<Generation, RunError> {
        let (ids, _) = self.tokens(&q.prompt)?;
        let opts = ForwardOptions { ablate: q.ablate.clone(), ..Default::default() };
        let cache = self.engine().new_cache(self.shape().window);
        Generation::start(ids, cache, opts, q, self.logits()).await
    }

    /// Samples one more token and runs it through the model (one row of work with the cache):
    /// returns the token and the whole continuation so far as text. When the window is full
    /// the oldest quarter of the tokens is dropped and the cache rebuilt.
    pub async fn next_token(&self, g: &mut Generation) -> Result<(Token, String), RunError> {
        let next = g.step(self.shape().window, self.logits()).await?;
        Ok((self.token(next), F::decode(&self.tok, g.continuation())))
    }

    /// Samples `steps` tokens after the prompt, calling `emit` with each token and the
    /// continuation so far as text: all `steps`, an end-of-text token included (the benchmarks
    /// time a fixed number; the worker's loop stops at the end of the text,
    /// [`until_end_of_text`](super::until_end_of_text)).
    pub async fn generate(&self, q: &Query, steps: usize, mut emit: impl FnMut(Token, String)) -> Result<(), RunError> {
        let mut g = self.start_generation(q).await?;
        for _ in 0..steps {
            let (token, text) = self.next_token(&mut g).await?;
            emit(token, text);
        }
        Ok(())
    }
}

/// Whether every layer's attention weights (L·H·T²) fit in one analysis's buffer.
fn all_layers_fit(n_layer: usize, n_head: usize, t: usize) -> bool {
    // Saturating: L·H·T² passes a 32-bit usize long before it passes the limit's test.
    [n_head, t, t].iter().fold(n_layer, |a, &b| a.saturating_mul(b)) <= ALL_LAYERS_LIMIT
}

/// Cuts a prompt's tokens from the front to the model's `window`: how many were dropped.
pub fn cut_to_window(ids: &mut Vec<u32>, window: usize) -> usize {
    let dropped = ids.len().saturating_sub(window);
    ids.drain(..dropped);
    dropped
}

/// The most likely next tokens under the query's sampling settings, named by `text`. Greedy
/// decoding (temperature 0) always takes the first; the chart then shows the model's own
/// distribution (τ = 1).
fn candidates(logits: ArrayView1<f32>, q: &Query, text: impl Fn(u32) -> String) -> Vec<Candidate> {
    let mut s = q.sampling();
    if s.temperature.is_nan() || s.temperature <= 0.0 {
        s.temperature = 1.0;
    }
    let mut dist = distribution(logits, &s);
    dist.truncate(q.top.max(1));
    dist.into_iter().map(|(id, prob)| Candidate { id, text: text(id), prob }).collect()
}

/// The GPU's self-test: its logits against the CPU's, within [`SELF_TEST_TOL`] of the largest
/// logit ([`F16_SELF_TEST_TOL`] with `rounded` f16 weights). The largest difference, or why not.
fn self_test(cpu: &Array2<f32>, gpu: &Array2<f32>, rounded: bool) -> Result<f32, GpuError> {
    let tol = if rounded { F16_SELF_TEST_TOL } else { SELF_TEST_TOL };
    let (cpu, gpu) = (cpu.as_standard_layout(), gpu.as_standard_layout());
    logits_agree(cpu.as_slice().unwrap_or(&[]), gpu.as_slice().unwrap_or(&[]), tol)
}

/// Whether a GPU's logits match the CPU's within `tol` of the largest logit (the self-test of
/// every family's session): the largest difference, or why not (a NaN, another length).
pub fn logits_agree(cpu: &[f32], gpu: &[f32], tol: f32) -> Result<f32, GpuError> {
    if cpu.is_empty() || cpu.len() != gpu.len() {
        return Err(GpuError::SelfTest(format!("{} logits, not {}", gpu.len(), cpu.len())));
    }
    let scale = cpu.iter().fold(1.0f32, |m, v| m.max(v.abs()));
    let err =
        cpu.iter().zip(gpu).map(|(a, b)| (a - b).abs()).fold(
            0.0f32,
            |m, e| {
                if e.is_nan() {
                    f32::INFINITY
                } else {
                    m.max(e)
                }
            },
        );
    if err.is_nan() || err > tol * scale {
        return Err(GpuError::SelfTest(format!("logits differ by {err:.2e} (largest logit {scale:.1})")));
    }
    Ok(err)
}
