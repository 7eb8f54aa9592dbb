//! The WGSL kernels, compiled once per device, and `Batch`: many dispatches recorded into one
//! command buffer and submitted together, with what comes back to the host copied in the same
//! submission (a decoded GPT-2 token is 5 dispatches per layer, one submission and one
//! readback).
//!
//! Each kernel's parameters are a small uniform struct (8 words at most); a batch packs them all
//! into one uniform buffer, each at its own aligned offset, and its bind groups are reused from
//! batch to batch (`Reuse`).

use std::collections::HashMap;

use super::params::{self, KernelParams};

/// The kernels, in `wgsl/`. Each file names its CPU twin in its header; those that reduce over
/// a workgroup get `wgsl/reduce.wgsl` in front of their source, those that apply GELU
/// `wgsl/gelu_new.wgsl`. GPT-2's forward pass (`gpt2::gpu`) and the Llama family's
/// (`llama::gpu`) share the products, the embedding, the output layer and the attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    Matmul,
    Matvec,
    /// The same two with f16 weights (only on devices with `shader-f16`).
    MatmulF16,
    MatvecF16,
    /// Layer norm (or RMSNorm) and the matrix-vector product in one dispatch (decoding), f32 and
    /// f16 weights.
    MatvecLn,
    MatvecLnF16,
    Logits,
    LayerNorm,
    /// An MLP's activation in place (`Act`).
    Activation,
    Embed,
    KvAppend,
    Attention,
    Scores,
    Softmax,
    Pool,
    /// The Llama family's: RMSNorm, RoPE (in place) and SwiGLU's gate. (Its grouped-query
    /// attention is `Attention` and `Scores` with a number of KV heads.)
    RmsNorm,
    Rope,
    Swiglu,
    /// The translation model's attention, its weights written out: non-causal or causal, queries
    /// from any rows (`marian::gpu`).
    Attend,
}

const SOURCES: [(Kernel, &str, &str); 19] = [
    (Kernel::Matmul, "matmul", concat!(include_str!("wgsl/gelu_new.wgsl"), include_str!("wgsl/matmul.wgsl"))),
    (Kernel::Matvec, "matvec", concat!(include_str!("wgsl/gelu_new.wgsl"), include_str!("wgsl/matvec.wgsl"))),
    (Kernel::MatmulF16, "matmul_f16", concat!(include_str!("wgsl/gelu_new.wgsl"), include_str!("wgsl/matmul.wgsl"))),
    (Kernel::MatvecF16, "matvec_f16", concat!(include_str!("wgsl/gelu_new.wgsl"), include_str!("wgsl/matvec.wgsl"))),
    (Kernel::MatvecLn, "matvec_ln", concat!(include_str!("wgsl/gelu_new.wgsl"), include_str!("wgsl/matvec_ln.wgsl"))),
    (
        Kernel::MatvecLnF16,
        "matvec_ln_f16",
        concat!(include_str!("wgsl/gelu_new.wgsl"), include_str!("wgsl/matvec_ln.wgsl")),
    ),
    (Kernel::Logits, "logits", include_str!("wgsl/logits.wgsl")),
    (Kernel::LayerNorm, "layer_norm", concat!(include_str!("wgsl/reduce.wgsl"), include_str!("wgsl/layer_norm.wgsl"))),
    (
        Kernel::Activation,
        "activation",
        concat!(include_str!("wgsl/gelu_new.wgsl"), include_str!("wgsl/activation.wgsl")),
    ),
    (Kernel::Embed, "embed", include_str!("wgsl/embed.wgsl")),
    (Kernel::KvAppend, "kv_append", include_str!("wgsl/kv_append.wgsl")),
    (Kernel::Attention, "attention", concat!(include_str!("wgsl/reduce.wgsl"), include_str!("wgsl/attention.wgsl"))),
    (Kernel::Scores, "scores", include_str!("wgsl/scores.wgsl")),
    (Kernel::Softmax, "softmax", concat!(include_str!("wgsl/reduce.wgsl"), include_str!("wgsl/softmax.wgsl"))),
    (Kernel::Pool, "pool", include_str!("wgsl/pool.wgsl")),
    (Kernel::RmsNorm, "rms_norm", concat!(include_str!("wgsl/reduce.wgsl"), include_str!("wgsl/rms_norm.wgsl"))),
    (Kernel::Rope, "rope", include_str!("wgsl/rope.wgsl")),
    (Kernel::Swiglu, "swiglu", include_str!("wgsl/swiglu.wgsl")),
    (Kernel::Attend, "attend", concat!(include_str!("wgsl/reduce.wgsl"), include_str!("wgsl/attend.wgsl"))),
];

/// Rows of A above which `Matmul` (64 × 64 tiles) beats `Matvec` (one row per workgroup).
pub const MATVEC_MAX_ROWS: usize = 4;

/// The declarations in front of a kernel's source: the weight type of the two products.
/// (`enable` must come before every declaration.)
pub fn weight_header(k: Kernel) -> &'static str {
    match k {
        Kernel::MatmulF16 | Kernel::MatvecF16 | Kernel::MatvecLnF16 => "enable f16;\nalias WEIGHT = f16;\n",
        _ => "alias WEIGHT = f32;\n",
    }
}

pub(crate) struct Kernels {
    /// None for the f16 kernels on a device without `shader-f16`.
    pipelines: Vec<Option<wgpu::ComputePipeline>>,
}

impl Kernels {
    pub(crate) fn new(device: &wgpu::Device, f16: bool) -> Self {
        let pipelines = SOURCES
            .iter()
            .map(|(kernel, name, src)| {
                if !f16 && matches!(kernel, Kernel::MatmulF16 | Kernel::MatvecF16 | Kernel::MatvecLnF16) {
                    return None;
                }
                let code = format!("{}{src}", weight_header(*kernel));
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(name),
                    source: wgpu::ShaderSource::Wgsl(code.into()),
                });
                Some(device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(name),
                    layout: None, // derived from the shader's bindings
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                }))
            })
            .collect();
        Kernels { pipelines }
    }

    fn get(&self, k: Kernel) -> &wgpu::ComputePipeline {
        let i = SOURCES.iter().position(|(kk, _, _)| *kk == k).expect("every kernel has a source");
        // f16 weights exist only on devices that compiled the f16 kernels (`Gpu::upload_weight`).
        self.pipelines[i].as_ref().expect("f16 kernels are compiled where f16 weights can exist")
    }
}

enum Job {
    Dispatch {
        kernel: Kernel,
        params_offset: u64,
        buffers: Vec<wgpu::Buffer>,
        groups: [u32; 3],
    },
    /// Copy `len` f32 between buffers (offsets in f32), between two compute passes.
    Copy {
        from: wgpu::Buffer,
        from_offset: usize,
        to: wgpu::Buffer,
        to_offset: usize,
        len: usize,
    },
    /// Copy `len` f32 into the batch's readback at `to_offset`, between two compute passes.
    Read {
        from: wgpu::Buffer,
        from_offset: usize,
        to_offset: usize,
        len: usize,
    },
}

/// What batches keep on the device between submissions: one uniform buffer that every batch
/// rewrites with its parameters (one host write per batch), and the bind groups built on it.
/// A bind group depends only on the kernel, its parameters' offset and its buffers, and a
/// decoding step records the same dispatches on the same buffers as the one before, so from
/// the second token on no bind group is created. Groups unused by the last two batches are
/// dropped (they hold their buffers alive: an old KV cache would otherwise never be freed).
#[derive(Default)]
pub(crate) struct Reuse {
    params: Option<wgpu::Buffer>,
    groups: HashMap<GroupKey, (wgpu::BindGroup, u64)>,
    batches: u64,
}

#[derive(PartialEq, Eq, Hash)]
struct GroupKey {
    kernel: Kernel,
    params_offset: u64,
    buffers: Vec<wgpu::Buffer>,
}

/// Dispatches recorded now and submitted together by `submit`.
pub struct Batch<'g> {
    gpu: &'g super::Gpu,
    params: Vec<u8>,
    jobs: Vec<Job>,
    /// f32 recorded for the readback so far.
    read_len: usize,
}

/// The size of every parameter slot (the largest struct is 8 words).
const PARAMS_BYTES: u64 = 32;

impl<'g> Batch<'g> {
    pub fn new(gpu: &'g super::Gpu) -> Self {
        Batch { gpu, params: Vec::new(), jobs: Vec::new(), read_len: 0 }
    }

    /// Records `kernel` with its parameter words (f32 fields as `to_bits`) and storage buffers
    /// (bindings 1, 2, … in order) over `groups` workgroups.
    pub fn add<P: KernelParams>(&mut self, kernel: Kernel, params: &P, buffers: &[&wgpu::Buffer], groups: [u32; 3]) {
        assert!(P::KERNELS.contains(&kernel), "{kernel:?} does not read {}", std::any::type_name::<P>());
        let bytes = bytemuck::bytes_of(params);
        let align = self.gpu.limits.min_uniform_buffer_offset_alignment.max(PARAMS_BYTES as u32) as usize;
        let offset = self.params.len().div_ceil(align) * align;
        self.params.resize(offset + PARAMS_BYTES as usize, 0);
        self.params[offset..offset + bytes.len()].copy_from_slice(bytes);
        self.jobs.push(Job::Dispatch {
            kernel,
            params_offset: offset as u64,
            buffers: buffers.iter().map(|b| (*b).clone()).collect(),
            groups,
        });
    }

    /// Records a copy of `len` f32 from `from[from_offset..]` to `to[to_offset..]`.
    pub fn copy(&mut self, from: &wgpu::Buffer, from_offset: usize, to: &wgpu::Buffer, to_offset: usize, len: usize) {
        self.jobs.push(Job::Copy { from: from.clone(), from_offset, to: to.clone(), to_offset, len });
    }

    /// Records that `len` f32 of `from[from_offset..]`, as they are at this point of the batch,
    /// come back to the host. Every read of a batch shares one staging buffer and one mapping
    /// (`submit`'s readback); the returned offset is where these values start in it.
    pub fn read(&mut self, from: &wgpu::Buffer, from_offset: usize, len: usize) -> usize {
        let to_offset = self.read_len;
        self.jobs.push(Job::Read { from: from.clone(), from_offset, to_offset, len });
        self.read_len += len;
        to_offset
    }

    /// Encodes every recorded job into one command buffer (consecutive dispatches share a
    /// compute pass) and submits it: one host write (the parameters), one submission, and
    /// the readback of what `read` asked for, if anything.
    pub fn submit(self) -> Option<super::Readback> {
        if self.jobs.is_empty() {
            return None;
        }
        let gpu = self.gpu;
        let device = &gpu.device;
        let mut reuse = match gpu.reuse.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        let params_len = (self.params.len() as u64).max(PARAMS_BYTES);
        if reuse.params.as_ref().is_none_or(|b| b.size() < params_len) {
            // Grown to the next power of two; the bind groups on the old buffer go with it.
            reuse.params = Some(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("params"),
                size: params_len.next_power_of_two().max(4096),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
            reuse.groups.clear();
        }
        let uniforms = reuse.params.clone().expect("created above");
        if !self.params.is_empty() {
            // Ordered on the queue: lands after the batches submitted before, before this one.
            gpu.write(&uniforms, 0, &self.params);
        }
        reuse.batches += 1;
        let batch_no = reuse.batches;
        let staging = (self.read_len > 0).then(|| gpu.staging(self.read_len));
        let mut enc = device.create_command_encoder(&Default::default());
        let mut jobs = self.jobs.into_iter().peekable();
        while jobs.peek().is_some() {
            // Dispatches up to the next copy share one compute pass.
            {
                let mut pass = enc
                    .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("batch"), timestamp_writes: None });
                while let Some(Job::Dispatch { .. }) = jobs.peek() {
                    let Some(Job::Dispatch { kernel, params_offset, buffers, groups }) = jobs.next() else {
                        unreachable!("peeked a dispatch")
                    };
                    let pipeline = gpu.kernels.get(kernel);
                    let key = GroupKey { kernel, params_offset, buffers };
                    let (group, used) = reuse.groups.entry(key).or_insert_with_key(|key| {
                        gpu.count(|c| c.bind_groups += 1);
                        (bind_group(device, pipeline, &uniforms, key), 0)
                    });
                    *used = batch_no;
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(0, &*group, &[]);
                    let [x, y, z] = groups;
                    pass.dispatch_workgroups(x, y, z);
                    gpu.count(|c| c.dispatches += 1);
                }
            }
            while let Some(Job::Copy { .. } | Job::Read { .. }) = jobs.peek() {
                match jobs.next() {
                    Some(Job::Copy { from, from_offset, to, to_offset, len }) => enc.copy_buffer_to_buffer(
                        &from,
                        (from_offset * 4) as u64,
                        &to,
                        (to_offset * 4) as u64,
                        (len * 4) as u64,
                    ),
                    Some(Job::Read { from, from_offset, to_offset, len }) => enc.copy_buffer_to_buffer(
                        &from,
                        (from_offset * 4) as u64,
                        staging.as_ref().expect("a batch with reads has a staging buffer"),
                        (to_offset * 4) as u64,
                        (len * 4) as u64,
                    ),
                    _ => unreachable!("peeked a copy"),
                }
            }
        }
        reuse.groups.retain(|_, (_, used)| *used + 1 >= batch_no);
        drop(reuse);
        gpu.submit(enc);
        staging.map(|s| gpu.map(s))
    }
}

/// Binding 0 is the kernel's slot of the parameter buffer; its storage buffers follow.
fn bind_group(
    device: &wgpu::Device,
    pipeline: &wgpu::ComputePipeline,
    uniforms: &wgpu::Buffer,
    key: &GroupKey,
) -> wgpu::BindGroup {
    let mut entries = vec![wgpu::BindGroupEntry {
        binding: 0,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: uniforms,
            offset: key.params_offset,
            size: wgpu::BufferSize::new(PARAMS_BYTES),
        }),
    }];
    for (i, b) in key.buffers.iter().enumerate() {
        entries.push(wgpu::BindGroupEntry { binding: i as u32 + 1, resource: b.as_entire_binding() });
    }
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    })
}

/// Workgroups of `size` threads to cover `n` items in one dimension.
pub fn groups_for(n: usize, size: usize) -> u32 {
    n.div_ceil(size).max(1) as u32
}

/// What a matrix product does with y = x W + b before storing it (`linear_with`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Epilogue {
    /// y ← x W + b.
    Store,
    /// y ← y + x W + b: the residual connection, added in place.
    Accumulate,
    /// y ← GELU(x W + b): the MLP's first product and its activation in one dispatch.
    Gelu,
}

/// Records y = x W + b (or y += … when `accumulate`): x (m, k), W (k, n), y (m, n), choosing
/// the matrix-vector kernel for a few rows and the tiled one otherwise, in W's precision.
#[allow(clippy::too_many_arguments)]
pub fn linear(
    batch: &mut Batch,
    x: &wgpu::Buffer,
    w: &super::Weight,
    b: &wgpu::Buffer,
    y: &wgpu::Buffer,
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
) {
    let epilogue = if accumulate { Epilogue::Accumulate } else { Epilogue::Store };
    linear_with(batch, x, w, b, y, m, k, n, epilogue);
}

/// `linear` with any epilogue.
#[allow(clippy::too_many_arguments)]
pub fn linear_with(
    batch: &mut Batch,
    x: &wgpu::Buffer,
    w: &super::Weight,
    b: &wgpu::Buffer,
    y: &wgpu::Buffer,
    m: usize,
    k: usize,
    n: usize,
    epilogue: Epilogue,
) {
    let (accumulate, gelu) = ((epilogue == Epilogue::Accumulate) as u32, (epilogue == Epilogue::Gelu) as u32);
    let params = params::Matmul { m: m as u32, n: n as u32, k: k as u32, accumulate, gelu };
    let f16 = w.precision == super::Precision::F16;
    if m <= MATVEC_MAX_ROWS {
        let kernel = if f16 { Kernel::MatvecF16 } else { Kernel::Matvec };
        batch.add(kernel, &params, &[x, &w.buf, b, y], [groups_for(n, 64), m as u32, 1]);
    } else {
        let kernel = if f16 { Kernel::MatmulF16 } else { Kernel::Matmul };
        batch.add(kernel, &params, &[x, &w.buf, b, y], [groups_for(n, 64), groups_for(m, 64), 1]);
    }
}

/// Records y = LN(x) W + b with `epilogue` for a few rows (m ≤ `MATVEC_MAX_ROWS`): x (m, k),
/// the layer norm's γ and β (k), W (k, n), y (m, n); `eps` as f32 bits. The layer norm is
/// computed inside the product's dispatch (`wgsl/matvec_ln.wgsl`).
#[allow(clippy::too_many_arguments)]
pub fn norm_matvec(
    batch: &mut Batch,
    x: &wgpu::Buffer,
    (gamma, beta, eps): (&wgpu::Buffer, &wgpu::Buffer, u32),
    w: &super::Weight,
    b: &wgpu::Buffer,
    y: &wgpu::Buffer,
    (m, k, n): (usize, usize, usize),
    epilogue: Epilogue,
) {
    norm_matvec_in(batch, x, (gamma, beta, eps, false), w, b, y, (m, k, n), epilogue);
}

/// `norm_matvec` with RMSNorm (the Llama family's: no centring, no β) in place of the layer
/// norm: y = RMSNorm(x) W + b. `zeros` is any buffer of at least k zeros, read where β is.
#[allow(clippy::too_many_arguments)]
pub fn rms_norm_matvec(
    batch: &mut Batch,
    x: &wgpu::Buffer,
    (gamma, zeros, eps): (&wgpu::Buffer, &wgpu::Buffer, u32),
    w: &super::Weight,
    b: &wgpu::Buffer,
    y: &wgpu::Buffer,
    (m, k, n): (usize, usize, usize),
    epilogue: Epilogue,
) {
    norm_matvec_in(batch, x, (gamma, zeros, eps, true), w, b, y, (m, k, n), epilogue);
}

#[allow(clippy::too_many_arguments)]
fn norm_matvec_in(
    batch: &mut Batch,
    x: &wgpu::Buffer,
    (gamma, beta, eps, rms): (&wgpu::Buffer, &wgpu::Buffer, u32, bool),
    w: &super::Weight,
    b: &wgpu::Buffer,
    y: &wgpu::Buffer,
    (m, k, n): (usize, usize, usize),
    epilogue: Epilogue,
) {
    let params = params::MatvecLn {
        m: m as u32,
        n: n as u32,
        k: k as u32,
        accumulate: (epilogue == Epilogue::Accumulate) as u32,
        gelu: (epilogue == Epilogue::Gelu) as u32,
        eps: f32::from_bits(eps),
        rms: rms as u32,
    };
    let kernel = if w.precision == super::Precision::F16 { Kernel::MatvecLnF16 } else { Kernel::MatvecLn };
    batch.add(kernel, &params, &[x, &w.buf, b, y, gamma, beta], [groups_for(n, 64), m as u32, 1]);
}

/// Records the (H, T, S) causal attention weights `w` of queries `qkv` (T rows, the query heads
/// first) over the keys `k` (S = past + T rows of the cache, `n_kv` heads; 0: one per query head):
/// the scaled scores (`scores.wgsl`), then their causal softmax in place (`softmax.wgsl`).
pub fn attention_weights(batch: &mut Batch, p: params::Scores, qkv: &wgpu::Buffer, k: &wgpu::Buffer, w: &wgpu::Buffer) {
    let rows = p.n_head * p.t;
    batch.add(Kernel::Scores, &p, &[qkv, k, w], [p.t, p.n_head, 1]);
    let softmax = params::Softmax { rows, n: p.s, t: p.t, past: p.past, causal: 1, ..Default::default() };
    batch.add(Kernel::Softmax, &softmax, &[w], [rows, 1, 1]);
}

/// Records layer `layer`'s (H, T, S) attention weights `w` max-pooled to (H, r, k), written at
/// that layer's place in `thumbs` (every layer's thumbnails, one after the other).
pub fn pool(
    batch: &mut Batch,
    w: &wgpu::Buffer,
    thumbs: &wgpu::Buffer,
    (heads, t, s): (usize, usize, usize),
    (r, k): (usize, usize),
    layer: usize,
) {
    let n = heads * r * k;
    let p = params::Pool {
        h: heads as u32,
        t: t as u32,
        s: s as u32,
        r: r as u32,
        k: k as u32,
        offset: (layer * n) as u32,
        ..Default::default()
    };
    batch.add(Kernel::Pool, &p, &[w, thumbs], [groups_for(n, 64), 1, 1]);
}

/// An MLP's activation (`wgsl/activation.wgsl`'s `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// GPT-2's GELU, the tanh form.
    GeluNew = 0,
    Relu = 1,
    /// SiLU, x σ(x): "swish", OPUS-MT's.
    Silu = 2,
    /// GELU with erf.
    Gelu = 3,
}

/// Records x ← act(x) in place on `n` values.
pub fn activation(batch: &mut Batch, x: &wgpu::Buffer, n: usize, act: Act) {
    let p = params::Activation { n: n as u32, kind: act as u32, ..Default::default() };
    batch.add(Kernel::Activation, &p, &[x], [groups_for(n, 256), 1, 1]);
}

/// Records the attention of T queries (rows row0 .. row0 + T of `q`, `q_stride` apart) over the S
/// rows of `k` and `v` (S, C) with `n_head` heads: the output into the same rows of `y` (rows of
/// C), the (H, T, S) weights into `w` (`wgsl/attend.wgsl`).
pub fn attend(
    batch: &mut Batch,
    p: params::Attend,
    n_head: usize,
    (q, k, v): (&wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer),
    (y, w): (&wgpu::Buffer, &wgpu::Buffer),
) {
    batch.add(Kernel::Attend, &p, &[q, k, v, y, w], [p.t, n_head as u32, 1]);
}
