//! The GPU compute backend: WebGPU in the browser, Vulkan natively (Mesa's lavapipe in the
//! tests), through `wgpu`.
//!
//! - `mod.rs` (here): the device (`Gpu`), its errors (`GpuError`) and buffers;
//! - `kernels`: the WGSL kernels (`wgsl/*.wgsl`, one file each) and a batch of dispatches;
//!   `params`: each kernel's parameters as a typed struct, checked against its WGSL;
//! - `table`: a (vocab, C) table in chunks of rows, and the embedding and logits passes over it;
//! - `counts`: what the device has been asked to do (dispatches, submissions, readbacks);
//! - GPT-2's, the Llama family's and the translation model's forward passes on this backend live
//!   with the models (`gpt2::gpu`, `llama::gpu`, `marian::gpu`): the backend knows buffers and
//!   kernels, not models;
//! - `bench`: the attention benchmark (naive CPU, tiled CPU, fused GPU), DOM-free.
//!
//! A missing or failing GPU is a value, never a panic: `Gpu::new` returns why there is none,
//! and every run returns a `GpuError` that the caller answers by falling back to the CPU.

pub mod bench;
mod counts;
pub mod kernels;
pub mod params;
pub mod table;

use std::sync::{Arc, Mutex};

pub use counts::Counts;

use wgpu::util::DeviceExt;

pub use kernels::{Batch, Kernel};

/// Why the GPU cannot be used, or why a run on it failed.
#[derive(Debug, Clone, PartialEq)]
pub enum GpuError {
    /// No adapter: the browser has no WebGPU, or the machine no GPU driver.
    NoAdapter(String),
    /// The adapter refused a device.
    Device(String),
    /// The model needs a bigger buffer than the adapter allows.
    TooBig { what: String, bytes: u64, limit: u64 },
    /// The model's shape is outside what the kernels handle (e.g. heads wider than 64).
    Unsupported(String),
    /// A validation error, out-of-memory or internal error reported by the device.
    Failed(String),
    /// The device was lost (driver reset, tab in the background too long, …).
    Lost(String),
    /// The kernel self-test disagreed with the CPU.
    SelfTest(String),
}

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GpuError::NoAdapter(why) => write!(f, "{why}"),
            GpuError::Device(why) => write!(f, "the GPU refused a device ({why})"),
            GpuError::TooBig { what, bytes, limit } => write!(
                f,
                "{what} needs a GPU buffer of {:.0} MB but this GPU allows {:.0} MB",
                *bytes as f64 / 1e6,
                *limit as f64 / 1e6
            ),
            GpuError::Unsupported(why) => write!(f, "not supported on the GPU backend: {why}"),
            GpuError::Failed(why) => write!(f, "the GPU reported an error: {why}"),
            GpuError::Lost(why) => write!(f, "the GPU device was lost: {why}"),
            GpuError::SelfTest(why) => write!(f, "the GPU self-test did not match the CPU: {why}"),
        }
    }
}

impl std::error::Error for GpuError {}

/// How the weights of the matrix products are stored on the GPU. Activations, sums, layer
/// norms, embeddings and the KV cache stay f32 either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    #[default]
    F32,
    /// Half the memory and the bytes read per token; about 3 decimal digits per weight.
    F16,
}

/// A weight matrix on the GPU and the precision it is stored in.
pub struct Weight {
    pub buf: wgpu::Buffer,
    pub precision: Precision,
}

/// The f32 values an f16 weight holds: each rounded to the nearest f16 (the CPU twin of
/// `Precision::F16`).
pub fn round_to_f16(x: f32) -> f32 {
    use crate::formats::safetensors::{f16_to_f32, f32_to_f16};
    f16_to_f32(f32_to_f16(x))
}

/// The precision that stores `weights` on `gpu` without changing one: f16 when the device has
/// `shader-f16` and every value is exactly an f16 (a checkpoint shipped in F16, like the bundled
/// models), else f32. Without `shader-f16` the values are not read (85M of them in GPT-2 small).
pub fn lossless_precision<'a>(gpu: &Gpu, mut weights: impl Iterator<Item = &'a [f32]>) -> Precision {
    if gpu.f16 && weights.all(|w| w.iter().all(|&x| round_to_f16(x) == x)) {
        Precision::F16
    } else {
        Precision::F32
    }
}

/// A device and queue with the kernels compiled.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// "llvmpipe (Vulkan, Cpu)", "swiftshader (BrowserWebGpu, Cpu)", an NVIDIA card's name, …
    pub name: String,
    /// A software adapter (lavapipe, SwiftShader): correct, but slower than the CPU path.
    pub software: bool,
    pub limits: wgpu::Limits,
    /// The device has `shader-f16`: weights may be stored as f16 (`Precision::F16`).
    pub f16: bool,
    pub(crate) kernels: kernels::Kernels,
    /// What this device has been asked to do so far (`counts`).
    counts: Mutex<Counts>,
    /// The batches' parameter buffer and the bind groups built on it (`kernels::Reuse`).
    pub(crate) reuse: Mutex<kernels::Reuse>,
    /// Set by the device-lost callback; every later run fails with `GpuError::Lost`.
    lost: Arc<Mutex<Option<String>>>,
}

impl Gpu {
    /// Finds an adapter, opens a device with the adapter's own limits (GPT-2's embedding table
    /// alone is 154 MB, above WebGPU's default 128 MiB binding) and compiles the kernels.
    pub async fn new() -> Result<Gpu, GpuError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        };
        let adapter = instance.request_adapter(&options).await.map_err(|e| {
            GpuError::NoAdapter(if cfg!(target_arch = "wasm32") {
                "this browser offers no WebGPU adapter".into()
            } else {
                format!("no GPU adapter: {e}")
            })
        })?;
        let info = adapter.get_info();
        let name = describe(&info);
        let software = info.device_type == wgpu::DeviceType::Cpu;
        let limits = adapter.limits();
        let f16 = adapter.features().contains(wgpu::Features::SHADER_F16);
        let required_features = if f16 { wgpu::Features::SHADER_F16 } else { wgpu::Features::empty() };
        let desc = wgpu::DeviceDescriptor {
            label: Some("attention-live"),
            required_limits: limits.clone(),
            required_features,
            ..Default::default()
        };
        let (device, queue) = adapter.request_device(&desc).await.map_err(|e| GpuError::Device(e.to_string()))?;
        let lost = Arc::new(Mutex::new(None));
        let flag = lost.clone();
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut l) = flag.lock() {
                *l = Some(format!("{reason:?}: {message}"));
            }
        });
        // Errors are caught by error scopes around each run; anything else is logged, never a panic.
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| log(&format!("uncaptured GPU error: {e}"))));
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let kernels = kernels::Kernels::new(&device, f16);
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Failed(format!("compiling the kernels: {e}")));
        }
        Ok(Gpu {
            device,
            queue,
            name,
            software,
            limits,
            f16,
            kernels,
            counts: Mutex::default(),
            reuse: Mutex::default(),
            lost,
        })
    }

    /// The work asked of the device since it was opened: take one before and one after a run,
    /// and `after.since(&before)` is what the run cost.
    pub fn counts(&self) -> Counts {
        self.counts.lock().map(|c| *c).unwrap_or_default()
    }

    pub(crate) fn count(&self, f: impl FnOnce(&mut Counts)) {
        if let Ok(mut c) = self.counts.lock() {
            f(&mut c);
        }
    }

    /// `queue.write_buffer`, counted.
    pub fn write(&self, buf: &wgpu::Buffer, offset: u64, bytes: &[u8]) {
        self.count(|c| c.writes += 1);
        self.queue.write_buffer(buf, offset, bytes);
    }

    /// `queue.submit` of one command buffer, counted.
    pub(crate) fn submit(&self, enc: wgpu::CommandEncoder) {
        self.count(|c| c.submits += 1);
        self.queue.submit([enc.finish()]);
    }

    /// `Err(Lost)` once the device has been lost.
    pub fn check_lost(&self) -> Result<(), GpuError> {
        match self.lost.lock().ok().and_then(|l| l.clone()) {
            Some(why) => Err(GpuError::Lost(why)),
            None => Ok(()),
        }
    }

    /// Checks that `bytes` fit one storage binding and one buffer on this device.
    pub fn check_size(&self, what: &str, bytes: u64) -> Result<(), GpuError> {
        let limit = self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size);
        if bytes > limit {
            return Err(GpuError::TooBig { what: what.into(), bytes, limit });
        }
        Ok(())
    }

    /// A storage buffer holding `data` (weights, inputs).
    pub fn upload(&self, label: &str, data: &[f32]) -> wgpu::Buffer {
        self.upload_bytes(label, bytemuck::cast_slice(data))
    }

    /// A weight matrix in the asked precision. f16 falls back to f32 on a device without
    /// `shader-f16` (the weight says which it got). The CPU twin of an f16 weight is the f32
    /// matrix rounded to f16 and back (`round_to_f16`).
    pub fn upload_weight(&self, label: &str, data: &[f32], precision: Precision) -> Weight {
        match precision {
            Precision::F16 if self.f16 => {
                let halves: Vec<u16> = data.iter().map(|&x| crate::formats::safetensors::f32_to_f16(x)).collect();
                let mut bytes: Vec<u8> = bytemuck::cast_slice(&halves).to_vec();
                bytes.resize(bytes.len().div_ceil(4) * 4, 0); // buffer sizes are multiples of 4
                Weight { buf: self.upload_bytes(label, &bytes), precision: Precision::F16 }
            }
            _ => Weight { buf: self.upload(label, data), precision: Precision::F32 },
        }
    }

    pub fn upload_u32(&self, label: &str, data: &[u32]) -> wgpu::Buffer {
        self.upload_bytes(label, bytemuck::cast_slice(data))
    }

    fn upload_bytes(&self, label: &str, bytes: &[u8]) -> wgpu::Buffer {
        // A zero-sized binding is invalid: keep at least one element.
        let pad = [0u8; 4];
        let contents = if bytes.is_empty() { &pad[..] } else { bytes };
        self.count(|c| c.writes += 1);
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage: storage_usage(),
        })
    }

    /// A zeroed storage buffer of `len` f32 (activations, caches).
    pub fn buffer(&self, label: &str, len: usize) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (len.max(1) * 4) as u64,
            usage: storage_usage(),
            mapped_at_creation: false,
        })
    }

    /// Copies `len` f32 from `buf` (starting at element `offset`) back to the host: the only
    /// way results leave the GPU, so callers read back just what the page shows. (A batch reads
    /// back in its own submission: `Batch::read`.)
    pub async fn read(&self, buf: &wgpu::Buffer, offset: usize, len: usize) -> Result<Vec<f32>, GpuError> {
        self.check_lost()?;
        if len == 0 {
            return Ok(Vec::new());
        }
        let staging = self.staging(len);
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(buf, (offset * 4) as u64, &staging, 0, (len * 4) as u64);
        self.submit(enc);
        self.map(staging).values(self).await
    }

    /// A buffer of `len` f32 the host can map, to copy results into.
    pub(crate) fn staging(&self, len: usize) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: (len.max(1) * 4) as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Asks for `staging` to be mapped once the work submitted so far is done.
    pub(crate) fn map(&self, staging: wgpu::Buffer) -> Readback {
        self.count(|c| {
            c.readbacks += 1;
            c.readback_bytes += staging.size();
        });
        let (done, wait) = oneshot();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| done(r.map_err(|e| e.to_string())));
        Readback { staging, wait }
    }

    /// Natively, waits for the queue (which also fires the map callbacks); in the browser the
    /// event loop does that and this is a no-op.
    pub fn poll(&self) {
        #[cfg(not(target_arch = "wasm32"))]
        let _ = self.device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None });
    }

    /// Records a shader that does not compile: the batch being recorded fails with a real
    /// validation error (`checked` reports it), as a broken driver would. The models'
    /// `fail_next` uses it to show the fallback to the CPU.
    pub fn record_fault(&self) {
        let bad = wgpu::ShaderModuleDescriptor {
            label: Some("injected fault"),
            source: wgpu::ShaderSource::Wgsl("this is not WGSL".into()),
        };
        let _ = self.device.create_shader_module(bad);
    }

    /// Runs `f` inside validation and out-of-memory error scopes: any error the device reports
    /// while it runs becomes `Err(GpuError::Failed)`.
    pub async fn checked<T>(&self, f: impl FnOnce() -> T) -> Result<T, GpuError> {
        self.check_lost()?;
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f();
        let v = validation.pop().await;
        let o = oom.pop().await;
        if let Some(e) = v.or(o) {
            return Err(GpuError::Failed(e.to_string()));
        }
        Ok(out)
    }
}

/// A readback on its way: the staging buffer, mapped once the device is done with it.
pub struct Readback {
    staging: wgpu::Buffer,
    wait: Receive<Result<(), String>>,
}

impl Readback {
    /// The staging buffer's values, once mapped.
    pub async fn values(self, gpu: &Gpu) -> Result<Vec<f32>, GpuError> {
        gpu.poll();
        self.wait.await.map_err(|e| GpuError::Failed(format!("reading back: {e}")))?;
        let out = {
            let view = self
                .staging
                .slice(..)
                .get_mapped_range()
                .map_err(|e| GpuError::Failed(format!("reading back: {e}")))?;
            bytemuck::cast_slice::<u8, f32>(&view).to_vec()
        };
        self.staging.unmap();
        gpu.check_lost()?;
        Ok(out)
    }
}

/// "llvmpipe (LLVM 15.0.6, 256 bits): Vulkan, software", or in a browser, which keeps the
/// adapter's name private, "browser WebGPU, software fallback".
fn describe(info: &wgpu::AdapterInfo) -> String {
    let kind = match info.device_type {
        wgpu::DeviceType::Cpu => "software fallback, no GPU acceleration",
        wgpu::DeviceType::DiscreteGpu => "discrete GPU",
        wgpu::DeviceType::IntegratedGpu => "integrated GPU",
        wgpu::DeviceType::VirtualGpu => "virtual GPU",
        wgpu::DeviceType::Other => "GPU",
    };
    let api = match info.backend {
        wgpu::Backend::BrowserWebGpu => "browser WebGPU",
        wgpu::Backend::Vulkan => "Vulkan",
        wgpu::Backend::Metal => "Metal",
        wgpu::Backend::Dx12 => "DirectX 12",
        wgpu::Backend::Gl => "OpenGL",
        _ => "other API",
    };
    match info.name.trim() {
        "" => format!("{api}, {kind}"),
        name => format!("{name}: {api}, {kind}"),
    }
}

fn storage_usage() -> wgpu::BufferUsages {
    wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST
}

pub(crate) fn log(msg: &str) {
    #[cfg(target_arch = "wasm32")]
    web_sys::console::warn_1(&msg.into());
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("{msg}");
}

type Shared<T> = Arc<Mutex<(Option<T>, Option<std::task::Waker>)>>;

/// A one-value channel whose sender is a plain callback (`Send`, as wgpu asks natively) and
/// whose receiver is a future (awaited in the browser, ready at once natively after `poll`).
fn oneshot<T: Send + 'static>() -> (impl FnOnce(T) + Send + 'static, Receive<T>) {
    let shared: Shared<T> = Arc::new(Mutex::new((None, None)));
    let tx = shared.clone();
    let send = move |v: T| {
        if let Ok(mut s) = tx.lock() {
            s.0 = Some(v);
            if let Some(w) = s.1.take() {
                w.wake();
            }
        }
    };
    (send, Receive(shared))
}

struct Receive<T>(Shared<T>);

impl<T> std::future::Future for Receive<T> {
    type Output = T;
    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<T> {
        let mut s = self.0.lock().expect("the lock is never poisoned: no code panics while holding it");
        match s.0.take() {
            Some(v) => std::task::Poll::Ready(v),
            None => {
                s.1 = Some(cx.waker().clone());
                std::task::Poll::Pending
            }
        }
    }
}

/// The head size, which the attention kernels hold in one workgroup of 64 threads.
pub fn head_size(c: usize, n_head: usize) -> Result<usize, GpuError> {
    let hd = c / n_head.max(1);
    if hd == 0 || hd > 64 || hd * n_head != c {
        return Err(GpuError::Unsupported(format!("heads of size {hd} (the attention kernels take up to 64)")));
    }
    if n_head > 32 {
        return Err(GpuError::Unsupported(format!("{n_head} heads (the ablation mask holds 32)")));
    }
    Ok(hd)
}
