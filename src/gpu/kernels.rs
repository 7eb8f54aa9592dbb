//! The WGSL kernels, compiled once per device, and `Batch`: many dispatches recorded into one
//! compute pass and submitted together (a GPT-2 step is ~130 dispatches and one submit).
//!
//! Each kernel's parameters are a small uniform struct (8 words at most); a batch packs them all
//! into one uniform buffer, each at its own aligned offset.

use wgpu::util::DeviceExt;

/// The kernels, in `wgsl/`. Each file names its CPU twin in its header; those that reduce over
/// a workgroup get `wgsl/reduce.wgsl` in front of their source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    Matmul,
    Matvec,
    /// The same two with f16 weights (only on devices with `shader-f16`).
    MatmulF16,
    MatvecF16,
    Logits,
    LayerNorm,
    Gelu,
    Embed,
    KvAppend,
    Attention,
    Scores,
    Softmax,
    Pool,
}

const SOURCES: [(Kernel, &str, &str); 13] = [
    (Kernel::Matmul, "matmul", include_str!("wgsl/matmul.wgsl")),
    (Kernel::Matvec, "matvec", include_str!("wgsl/matvec.wgsl")),
    (Kernel::MatmulF16, "matmul_f16", include_str!("wgsl/matmul.wgsl")),
    (Kernel::MatvecF16, "matvec_f16", include_str!("wgsl/matvec.wgsl")),
    (Kernel::Logits, "logits", include_str!("wgsl/logits.wgsl")),
    (Kernel::LayerNorm, "layer_norm", concat!(include_str!("wgsl/reduce.wgsl"), include_str!("wgsl/layer_norm.wgsl"))),
    (Kernel::Gelu, "gelu", include_str!("wgsl/gelu.wgsl")),
    (Kernel::Embed, "embed", include_str!("wgsl/embed.wgsl")),
    (Kernel::KvAppend, "kv_append", include_str!("wgsl/kv_append.wgsl")),
    (Kernel::Attention, "attention", concat!(include_str!("wgsl/reduce.wgsl"), include_str!("wgsl/attention.wgsl"))),
    (Kernel::Scores, "scores", include_str!("wgsl/scores.wgsl")),
    (Kernel::Softmax, "softmax", concat!(include_str!("wgsl/reduce.wgsl"), include_str!("wgsl/softmax.wgsl"))),
    (Kernel::Pool, "pool", include_str!("wgsl/pool.wgsl")),
];

/// Rows of A above which `Matmul` (64 × 64 tiles) beats `Matvec` (one row per workgroup).
pub const MATVEC_MAX_ROWS: usize = 4;

/// The declarations in front of a kernel's source: the weight type of the two products.
/// (`enable` must come before every declaration.)
pub fn weight_header(k: Kernel) -> &'static str {
    match k {
        Kernel::MatmulF16 | Kernel::MatvecF16 => "enable f16;\nalias WEIGHT = f16;\n",
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
                if !f16 && matches!(kernel, Kernel::MatmulF16 | Kernel::MatvecF16) {
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
}

/// Dispatches recorded now and submitted together by `submit`.
pub struct Batch<'g> {
    gpu: &'g super::Gpu,
    params: Vec<u8>,
    jobs: Vec<Job>,
}

/// The size of every parameter slot (the largest struct is 8 words).
const PARAMS_BYTES: u64 = 32;

impl<'g> Batch<'g> {
    pub fn new(gpu: &'g super::Gpu) -> Self {
        Batch { gpu, params: Vec::new(), jobs: Vec::new() }
    }

    /// Records `kernel` with its parameter words (f32 fields as `to_bits`) and storage buffers
    /// (bindings 1, 2, … in order) over `groups` workgroups.
    pub fn add(&mut self, kernel: Kernel, params: &[u32], buffers: &[&wgpu::Buffer], groups: [u32; 3]) {
        let align = self.gpu.limits.min_uniform_buffer_offset_alignment.max(PARAMS_BYTES as u32) as usize;
        let offset = self.params.len().div_ceil(align) * align;
        self.params.resize(offset + PARAMS_BYTES as usize, 0);
        for (i, w) in params.iter().take(8).enumerate() {
            self.params[offset + 4 * i..offset + 4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
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

    /// Encodes every recorded dispatch into one compute pass and submits it.
    pub fn submit(self) {
        if self.jobs.is_empty() {
            return;
        }
        let device = &self.gpu.device;
        let pad = [0u8; PARAMS_BYTES as usize];
        let contents = if self.params.is_empty() { &pad[..] } else { &self.params[..] };
        self.gpu.count(|c| c.writes += 1);
        let uniforms = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents,
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let mut enc = device.create_command_encoder(&Default::default());
        let mut jobs = self.jobs.iter().peekable();
        while jobs.peek().is_some() {
            // Dispatches up to the next copy share one compute pass.
            {
                let mut pass = enc
                    .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("batch"), timestamp_writes: None });
                while let Some(Job::Dispatch { kernel, params_offset, buffers, groups }) = jobs.peek() {
                    let pipeline = self.gpu.kernels.get(*kernel);
                    let mut entries = vec![wgpu::BindGroupEntry {
                        binding: 0,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: &uniforms,
                            offset: *params_offset,
                            size: wgpu::BufferSize::new(PARAMS_BYTES),
                        }),
                    }];
                    for (i, b) in buffers.iter().enumerate() {
                        entries.push(wgpu::BindGroupEntry { binding: i as u32 + 1, resource: b.as_entire_binding() });
                    }
                    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: None,
                        layout: &pipeline.get_bind_group_layout(0),
                        entries: &entries,
                    });
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(0, &group, &[]);
                    let [x, y, z] = *groups;
                    pass.dispatch_workgroups(x, y, z);
                    self.gpu.count(|c| {
                        c.dispatches += 1;
                        c.bind_groups += 1;
                    });
                    jobs.next();
                }
            }
            while let Some(Job::Copy { from, from_offset, to, to_offset, len }) = jobs.peek() {
                enc.copy_buffer_to_buffer(
                    from,
                    (*from_offset * 4) as u64,
                    to,
                    (*to_offset * 4) as u64,
                    (*len * 4) as u64,
                );
                jobs.next();
            }
        }
        self.gpu.submit(enc);
    }
}

/// Workgroups of `size` threads to cover `n` items in one dimension.
pub fn groups_for(n: usize, size: usize) -> u32 {
    n.div_ceil(size).max(1) as u32
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
    let params = [m as u32, n as u32, k as u32, accumulate as u32];
    let f16 = w.precision == super::Precision::F16;
    if m <= MATVEC_MAX_ROWS {
        let kernel = if f16 { Kernel::MatvecF16 } else { Kernel::Matvec };
        batch.add(kernel, &params, &[x, &w.buf, b, y], [groups_for(n, 64), m as u32, 1]);
    } else {
        let kernel = if f16 { Kernel::MatmulF16 } else { Kernel::Matmul };
        batch.add(kernel, &params, &[x, &w.buf, b, y], [groups_for(n, 64), groups_for(m, 64), 1]);
    }
}
