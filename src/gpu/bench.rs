//! The attention benchmark, DOM-free: one head of causal self-attention (n × n, head size d)
//! three ways, timed with the caller's clock (`performance.now()` in a worker, `Instant`
//! natively):
//! - naive CPU: scores, softmax and weighted sum, storing the n × n weights;
//! - tiled CPU: the online softmax over key tiles (`numerics::flash`), O(n·d) memory;
//! - the GPU's fused kernel (`wgsl/attention.wgsl`), also O(n·d), when there is a GPU.
//!
//! The GPU's output is compared with the naive one, so every row also checks the kernel.

use ndarray::{concatenate, Array2, Axis};
use serde::{Deserialize, Serialize};

use super::kernels::{Batch, Kernel};
use super::params;
use super::{Gpu, GpuError};
use crate::numerics::flash::{extra_bytes, naive_attention, tiled_attention};
use crate::numerics::rng::Rng;

/// The tile of the CPU twin (the GPU kernel's tile is 256 keys).
pub const CPU_TILE: usize = 64;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AttentionRow {
    pub n: usize,
    pub d: usize,
    pub naive_ms: f64,
    pub tiled_ms: f64,
    /// None without a GPU.
    pub gpu_ms: Option<f64>,
    /// Largest |GPU − naive| over the output.
    pub gpu_max_diff: Option<f32>,
    /// Largest |tiled − naive|.
    pub tiled_max_diff: f32,
    /// Intermediate storage: the n × n weights for naive, one row's running state for tiled.
    pub naive_bytes: usize,
    pub tiled_bytes: usize,
    /// Why there is no GPU figure, or what failed.
    pub gpu_note: Option<String>,
    /// The adapter that ran the GPU column.
    pub gpu_name: Option<String>,
}

fn max_diff(a: &Array2<f32>, b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times.get(times.len() / 2).copied().unwrap_or(0.0)
}

/// Measures one size. `now` returns milliseconds.
pub async fn attention_row(
    gpu: Result<&Gpu, &GpuError>,
    n: usize,
    d: usize,
    seed: u64,
    now: &dyn Fn() -> f64,
) -> AttentionRow {
    let mut rng = Rng::new(seed);
    let mut rand = || Array2::from_shape_fn((n, d), |_| rng.normal() as f32);
    let (q, k, v) = (rand(), rand(), rand());
    // A warm-up run of each method first, untimed: the first call of a function runs in the
    // browser's baseline compiler (and with cold caches), which made the smallest size look
    // slow against the next (tiled 5.4 ms at n = 128 against 26.9 ms at n = 512). Small sizes
    // then take the median of three runs; one run of a large size already takes long enough.
    let w = n.min(256);
    let (qs, ks, vs) = (q.slice(ndarray::s![..w, ..]), k.slice(ndarray::s![..w, ..]), v.slice(ndarray::s![..w, ..]));
    let _ = naive_attention(qs, ks, vs, true);
    let _ = tiled_attention(qs, ks, vs, true, CPU_TILE);
    let reps = if n <= 512 { 3 } else { 1 };
    let (mut want, mut naive) = (Array2::zeros((0, 0)), Vec::with_capacity(reps));
    for _ in 0..reps {
        let t = now();
        want = naive_attention(q.view(), k.view(), v.view(), true);
        naive.push(now() - t);
    }
    let (mut tiled, mut tiled_times) = (Array2::zeros((0, 0)), Vec::with_capacity(reps));
    for _ in 0..reps {
        let t = now();
        tiled = tiled_attention(q.view(), k.view(), v.view(), true, CPU_TILE);
        tiled_times.push(now() - t);
    }
    let (naive_ms, tiled_ms) = (median(naive), median(tiled_times));
    let tiled_max_diff = max_diff(&tiled, want.as_slice().unwrap_or(&[]));
    let (naive_bytes, tiled_bytes) = extra_bytes(n, n, d, CPU_TILE);
    let mut row = AttentionRow {
        n,
        d,
        naive_ms,
        tiled_ms,
        gpu_ms: None,
        gpu_max_diff: None,
        tiled_max_diff,
        naive_bytes,
        tiled_bytes,
        gpu_note: None,
        gpu_name: None,
    };
    let g = match gpu {
        Ok(g) => g,
        Err(e) => {
            row.gpu_note = Some(e.to_string());
            return row;
        }
    };
    if let Err(e) = super::head_size(d, 1) {
        row.gpu_note = Some(e.to_string());
        return row;
    }
    row.gpu_name = Some(g.name.clone());
    match gpu_run(g, &q, &k, &v, now).await {
        Ok((ms, out)) => {
            row.gpu_ms = Some(ms);
            row.gpu_max_diff = Some(max_diff(&want, &out));
        }
        Err(e) => row.gpu_note = Some(e.to_string()),
    }
    row
}

/// The fused kernel on (n, d) inputs, uploaded first (not timed). The time runs from the
/// submit to the output back on the host: a second run, after one to warm the pipeline.
async fn gpu_run(
    g: &Gpu,
    q: &Array2<f32>,
    k: &Array2<f32>,
    v: &Array2<f32>,
    now: &dyn Fn() -> f64,
) -> Result<(f64, Vec<f32>), GpuError> {
    let (n, d) = q.dim();
    // The kernel reads queries from an (n, 3d) [Q | K | V] buffer, as GPT-2 lays them out.
    let qkv: Vec<f32> = concatenate(Axis(1), &[q.view(), k.view(), v.view()])
        .map_err(|e| GpuError::Failed(e.to_string()))?
        .iter()
        .copied()
        .collect();
    let flat = |a: &Array2<f32>| a.iter().copied().collect::<Vec<f32>>();
    let (qb, kb, vb, yb) = g
        .checked(|| (g.upload("qkv", &qkv), g.upload("k", &flat(k)), g.upload("v", &flat(v)), g.buffer("y", n * d)))
        .await?;
    let scale = 1.0 / (d as f32).sqrt();
    let mut result = (0.0, Vec::new());
    for _ in 0..2 {
        let t = now();
        g.checked(|| {
            let mut b = Batch::new(g);
            b.add(
                Kernel::Attention,
                &params::Attention {
                    t: n as u32,
                    past: 0,
                    n_head: 1,
                    hd: d as u32,
                    c: d as u32,
                    ablate: 0,
                    scale,
                    n_kv: 0,
                },
                &[&qb, &kb, &vb, &yb],
                [n as u32, 1, 1],
            );
            b.submit();
        })
        .await?;
        let out = g.read(&yb, 0, n * d).await?;
        result = (now() - t, out);
    }
    Ok(result)
}
