//! For the Llama-family kernel tests: `LlamaOps` is each of the family's GPU kernels as a
//! function of host arrays, implemented by `Cpu` with the CPU twins (`llama::ops`,
//! `numerics::flash`) and by the GPU. One test body runs on both (`tests/gpu/gpu_llama_kernels.rs`).
//!
//! Shapes follow the Llama family: H query heads and KV key-value heads of width D; rows of
//! qkv are [Q | K | V], H·D + 2·KV·D wide; the caches are (capacity, KV·D).

use ndarray::{s, Array1, Array2, Array3, ArrayView2, Axis};

use attention_live::gpu::kernels::{self, groups_for, Batch, Epilogue, Kernel};
use attention_live::gpu::params;
use attention_live::gpu::{Gpu, GpuError, Precision};
use attention_live::llama::ops::{rms_norm, silu, Rope};
use attention_live::llama::weights::Linear;
use attention_live::numerics::flash::causal_attention;

use super::gpu_ops::Cpu;

/// Grouped-query attention's results: y (T, H·D) and the caches (capacity, KV·D) after the append.
pub type Attended = (Array2<f32>, Array2<f32>, Array2<f32>);

#[allow(async_fn_in_trait)]
pub trait LlamaOps {
    fn name(&self) -> String;
    /// RMSNorm of each row of x (rows, n) with gain `weight` (n).
    async fn rms_norm(&self, x: ArrayView2<'_, f32>, weight: &Array1<f32>, eps: f32) -> Result<Array2<f32>, GpuError>;
    /// rms_norm(x) W for a few rows (m ≤ 4): (m, k) x (k, n) -> (m, n), the decoding path's
    /// fused dispatch.
    async fn rms_norm_linear(
        &self,
        x: ArrayView2<'_, f32>,
        weight: &Array1<f32>,
        eps: f32,
        w: ArrayView2<'_, f32>,
    ) -> Result<Array2<f32>, GpuError>;
    /// x (T, width) with its first `heads` heads of width D turned by RoPE, row r at position
    /// past + r; the other columns unchanged.
    async fn rope(
        &self,
        x: ArrayView2<'_, f32>,
        d_heads: (usize, usize),
        theta: f64,
        past: usize,
    ) -> Result<Array2<f32>, GpuError>;
    /// silu(g) ⊙ u for rows [g | u]: (T, 2F) -> (T, F).
    async fn swiglu(&self, gu: ArrayView2<'_, f32>) -> Result<Array2<f32>, GpuError>;
    /// Causal grouped-query attention of qkv's queries after the caches' first `past` rows, the
    /// new keys and values appended; heads whose bit is set in `ablate` zeroed.
    async fn attention(
        &self,
        qkv: ArrayView2<'_, f32>,
        kv: (ArrayView2<'_, f32>, ArrayView2<'_, f32>),
        past: usize,
        heads: (usize, usize),
        ablate: u32,
    ) -> Result<Attended, GpuError>;
    /// That attention's weights, (H, T, past + T), masked entries 0, from a key cache that
    /// already holds the new keys.
    async fn attention_weights(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        past: usize,
        heads: (usize, usize),
    ) -> Result<Array3<f32>, GpuError>;
}

impl LlamaOps for Cpu {
    fn name(&self) -> String {
        "CPU".into()
    }
    async fn rms_norm(&self, x: ArrayView2<'_, f32>, weight: &Array1<f32>, eps: f32) -> Result<Array2<f32>, GpuError> {
        Ok(rms_norm(x, weight, eps))
    }
    async fn rms_norm_linear(
        &self,
        x: ArrayView2<'_, f32>,
        weight: &Array1<f32>,
        eps: f32,
        w: ArrayView2<'_, f32>,
    ) -> Result<Array2<f32>, GpuError> {
        // The engine's projection: W stored (out, in), y = x Wᵀ.
        Ok(Linear::with_layout(w.t().to_owned(), false).apply(rms_norm(x, weight, eps).view()))
    }
    async fn rope(
        &self,
        x: ArrayView2<'_, f32>,
        (d, heads): (usize, usize),
        theta: f64,
        past: usize,
    ) -> Result<Array2<f32>, GpuError> {
        let mut x = x.to_owned();
        Rope::new(d, theta, past, x.nrows()).apply(x.slice_mut(s![.., ..heads * d]), d);
        Ok(x)
    }
    async fn swiglu(&self, gu: ArrayView2<'_, f32>) -> Result<Array2<f32>, GpuError> {
        let f = gu.ncols() / 2;
        Ok(gu.slice(s![.., ..f]).mapv(silu) * gu.slice(s![.., f..]))
    }
    async fn attention(
        &self,
        qkv: ArrayView2<'_, f32>,
        (k, v): (ArrayView2<'_, f32>, ArrayView2<'_, f32>),
        past: usize,
        (n_head, n_kv): (usize, usize),
        ablate: u32,
    ) -> Result<Attended, GpuError> {
        let (t, kvw) = (qkv.nrows(), k.ncols());
        let (d, qw) = (kvw / n_kv, qkv.ncols() - 2 * kvw);
        let (mut k, mut v) = (k.to_owned(), v.to_owned());
        k.slice_mut(s![past..past + t, ..]).assign(&qkv.slice(s![.., qw..qw + kvw]));
        v.slice_mut(s![past..past + t, ..]).assign(&qkv.slice(s![.., qw + kvw..]));
        let mut y = Array2::zeros((t, qw));
        for h in (0..n_head).filter(|h| ablate >> h & 1 == 0) {
            let g = h / (n_head / n_kv);
            let kv_cols = s![..past + t, g * d..(g + 1) * d];
            let (out, _) =
                causal_attention(qkv.slice(s![.., h * d..(h + 1) * d]), k.slice(kv_cols), v.slice(kv_cols), past);
            y.slice_mut(s![.., h * d..(h + 1) * d]).assign(&out);
        }
        Ok((y, k, v))
    }
    async fn attention_weights(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        past: usize,
        (n_head, n_kv): (usize, usize),
    ) -> Result<Array3<f32>, GpuError> {
        let (t, d) = (qkv.nrows(), k.ncols() / n_kv);
        let mut w = Array3::zeros((n_head, t, past + t));
        for h in 0..n_head {
            let g = h / (n_head / n_kv);
            let keys = k.slice(s![..past + t, g * d..(g + 1) * d]);
            let (_, wts) = causal_attention(qkv.slice(s![.., h * d..(h + 1) * d]), keys, keys, past);
            w.index_axis_mut(Axis(0), h).assign(&wts);
        }
        Ok(w)
    }
}

fn shape2(v: Vec<f32>, rows: usize, cols: usize) -> Result<Array2<f32>, GpuError> {
    Array2::from_shape_vec((rows, cols), v).map_err(|e| GpuError::Failed(format!("read back the wrong size: {e}")))
}

fn flat(x: ArrayView2<f32>) -> Vec<f32> {
    x.iter().copied().collect()
}

/// `n_head` and `n_kv` as the attention kernels take them, or why not.
fn heads(n_head: usize, n_kv: usize, d: usize) -> Result<(), GpuError> {
    if d > 64 || n_head > 32 || n_kv == 0 || !n_head.is_multiple_of(n_kv) {
        return Err(GpuError::Unsupported(format!("{n_head} heads of {d} in {n_kv} groups")));
    }
    Ok(())
}

impl LlamaOps for Gpu {
    fn name(&self) -> String {
        self.name.clone()
    }
    async fn rms_norm(&self, x: ArrayView2<'_, f32>, weight: &Array1<f32>, eps: f32) -> Result<Array2<f32>, GpuError> {
        let (rows, n) = x.dim();
        let y = self
            .checked(|| {
                let (xb, wb, yb) =
                    (self.upload("x", &flat(x)), self.upload("w", &weight.to_vec()), self.buffer("y", rows * n));
                let mut batch = Batch::new(self);
                batch.add(
                    Kernel::RmsNorm,
                    &params::Norm { rows: rows as u32, n: n as u32, eps, row0: 0 },
                    &[&xb, &wb, &yb],
                    [rows as u32, 1, 1],
                );
                batch.submit();
                yb
            })
            .await?;
        shape2(self.read(&y, 0, rows * n).await?, rows, n)
    }
    async fn rms_norm_linear(
        &self,
        x: ArrayView2<'_, f32>,
        weight: &Array1<f32>,
        eps: f32,
        w: ArrayView2<'_, f32>,
    ) -> Result<Array2<f32>, GpuError> {
        let ((m, k), n) = (x.dim(), w.ncols());
        let y = self
            .checked(|| {
                let (xb, gb, yb) =
                    (self.upload("x", &flat(x)), self.upload("w", &weight.to_vec()), self.buffer("y", m * n));
                let wb = self.upload_weight("W", &flat(w), Precision::F32);
                let zeros = self.buffer("zeros", k.max(n));
                let mut batch = Batch::new(self);
                let norm = (&gb, &zeros, eps.to_bits());
                kernels::rms_norm_matvec(&mut batch, &xb, norm, &wb, &zeros, &yb, (m, k, n), Epilogue::Store);
                batch.submit();
                yb
            })
            .await?;
        shape2(self.read(&y, 0, m * n).await?, m, n)
    }
    async fn rope(
        &self,
        x: ArrayView2<'_, f32>,
        (d, heads): (usize, usize),
        theta: f64,
        past: usize,
    ) -> Result<Array2<f32>, GpuError> {
        let (t, width) = x.dim();
        let table = Rope::new(d, theta, past, t).table();
        let xb = self
            .checked(|| {
                let (tb, xb) = (self.upload("rope", &flat(table.view())), self.upload("x", &flat(x)));
                let mut batch = Batch::new(self);
                let n = t * heads * d / 2;
                batch.add(
                    Kernel::Rope,
                    &params::Rope { t: t as u32, stride: width as u32, heads: heads as u32, hd: d as u32 },
                    &[&tb, &xb],
                    [groups_for(n, 256), 1, 1],
                );
                batch.submit();
                xb
            })
            .await?;
        shape2(self.read(&xb, 0, t * width).await?, t, width)
    }
    async fn swiglu(&self, gu: ArrayView2<'_, f32>) -> Result<Array2<f32>, GpuError> {
        let (t, f) = (gu.nrows(), gu.ncols() / 2);
        let a = self
            .checked(|| {
                let (gb, ab) = (self.upload("gu", &flat(gu)), self.buffer("a", t * f));
                let mut batch = Batch::new(self);
                batch.add(
                    Kernel::Swiglu,
                    &params::Swiglu { t: t as u32, f: f as u32, ..Default::default() },
                    &[&gb, &ab],
                    [groups_for(t * f, 256), 1, 1],
                );
                batch.submit();
                ab
            })
            .await?;
        shape2(self.read(&a, 0, t * f).await?, t, f)
    }
    async fn attention(
        &self,
        qkv: ArrayView2<'_, f32>,
        (k, v): (ArrayView2<'_, f32>, ArrayView2<'_, f32>),
        past: usize,
        (n_head, n_kv): (usize, usize),
        ablate: u32,
    ) -> Result<Attended, GpuError> {
        let (t, (cap, kvw)) = (qkv.nrows(), k.dim());
        let (d, qw) = (kvw / n_kv, qkv.ncols() - 2 * kvw);
        heads(n_head, n_kv, d)?;
        let (yb, kb, vb) = self
            .checked(|| {
                let (qb, kb, vb, yb) = (
                    self.upload("qkv", &flat(qkv)),
                    self.upload("k", &flat(k)),
                    self.upload("v", &flat(v)),
                    self.buffer("y", t * qw),
                );
                let mut batch = Batch::new(self);
                let scale = 1.0 / (d as f32).sqrt();
                batch.add(
                    Kernel::Attention,
                    &params::Attention {
                        t: t as u32,
                        past: past as u32,
                        n_head: n_head as u32,
                        hd: d as u32,
                        c: qw as u32,
                        ablate,
                        scale,
                        n_kv: n_kv as u32,
                    },
                    &[&qb, &kb, &vb, &yb],
                    [t as u32, n_head as u32, 1],
                );
                batch.submit();
                (yb, kb, vb)
            })
            .await?;
        Ok((
            shape2(self.read(&yb, 0, t * qw).await?, t, qw)?,
            shape2(self.read(&kb, 0, cap * kvw).await?, cap, kvw)?,
            shape2(self.read(&vb, 0, cap * kvw).await?, cap, kvw)?,
        ))
    }
    async fn attention_weights(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        past: usize,
        (n_head, n_kv): (usize, usize),
    ) -> Result<Array3<f32>, GpuError> {
        let (t, kvw) = (qkv.nrows(), k.ncols());
        let (d, qw, s) = (kvw / n_kv, qkv.ncols() - 2 * kvw, past + t);
        heads(n_head, n_kv, d)?;
        let w = self
            .checked(|| {
                let (qb, kb, wb) =
                    (self.upload("qkv", &flat(qkv)), self.upload("k", &flat(k)), self.buffer("w", n_head * t * s));
                let mut batch = Batch::new(self);
                let scale = 1.0 / (d as f32).sqrt();
                let p = params::Scores {
                    t: t as u32,
                    past: past as u32,
                    n_head: n_head as u32,
                    hd: d as u32,
                    c: qw as u32,
                    s: s as u32,
                    scale,
                    n_kv: n_kv as u32,
                };
                kernels::attention_weights(&mut batch, p, &qb, &kb, &wb);
                batch.submit();
                wb
            })
            .await?;
        let flat = self.read(&w, 0, n_head * t * s).await?;
        Array3::from_shape_vec((n_head, t, s), flat).map_err(|e| GpuError::Failed(e.to_string()))
    }
}
