//! For the kernel tests: `Ops` is every GPU kernel as a function of host arrays, and `Cpu`
//! implements it with the CPU twins. The kernel tests run one test body on each backend
//! (`tests/gpu/gpu_kernels.rs`).
//!
//! On the GPU each call uploads its inputs, runs and reads the result back: right for a test
//! of one kernel, not for a model (`gpt2::gpu` keeps everything on the device).

use ndarray::{s, Array2, Array3, ArrayView2, Axis};

use attention_live::gpt2::ops as cpu;
use attention_live::gpt2::weights::{LayerNorm, Linear};
use attention_live::gpu::kernels::{self, groups_for, Act, Batch, Epilogue, Kernel};
use attention_live::gpu::params;
use attention_live::gpu::{head_size, Gpu, GpuError, Precision};

/// The kernels' interface. Shapes follow GPT-2: C = heads × head size, qkv rows are [Q | K | V].
#[allow(async_fn_in_trait)]
pub trait Ops {
    /// "CPU" or the adapter's name.
    fn name(&self) -> String;
    /// x W + b, plus `y0` when given (the residual add): (m, k) x (k, n) -> (m, n).
    async fn linear(
        &self,
        x: ArrayView2<'_, f32>,
        lin: &Linear,
        y0: Option<ArrayView2<'_, f32>>,
    ) -> Result<Array2<f32>, GpuError>;
    /// GELU(x W + b): the MLP's first product with its activation (`Epilogue::Gelu`).
    async fn linear_gelu(&self, x: ArrayView2<'_, f32>, lin: &Linear) -> Result<Array2<f32>, GpuError>;
    /// layer_norm(x) W + b for a few rows (m ≤ 4): the decoding path's fused dispatch.
    async fn norm_linear(
        &self,
        x: ArrayView2<'_, f32>,
        ln: &LayerNorm,
        eps: f32,
        lin: &Linear,
    ) -> Result<Array2<f32>, GpuError>;
    /// h wteᵀ: (m, C) x (C, V) -> (m, V).
    async fn logits(&self, h: ArrayView2<'_, f32>, wte: ArrayView2<'_, f32>) -> Result<Array2<f32>, GpuError>;
    async fn layer_norm(&self, x: ArrayView2<'_, f32>, ln: &LayerNorm, eps: f32) -> Result<Array2<f32>, GpuError>;
    /// An MLP's activation of each value.
    async fn activation(&self, x: ArrayView2<'_, f32>, act: Act) -> Result<Array2<f32>, GpuError>;
    /// wte[ids] + wpe[past ..]: (T, C).
    async fn embed(
        &self,
        ids: &[u32],
        wte: ArrayView2<'_, f32>,
        wpe: ArrayView2<'_, f32>,
        past: usize,
    ) -> Result<Array2<f32>, GpuError>;
    /// The caches (capacity, C) after writing qkv's K and V at rows past ..
    async fn kv_append(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        v: ArrayView2<'_, f32>,
        past: usize,
    ) -> Result<(Array2<f32>, Array2<f32>), GpuError>;
    /// Causal multi-head attention of qkv's queries over the caches' first past + T rows:
    /// (T, C), heads whose bit is set in `ablate` zeroed.
    async fn attention(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        v: ArrayView2<'_, f32>,
        past: usize,
        n_head: usize,
        ablate: u32,
    ) -> Result<Array2<f32>, GpuError>;
    /// The weights of that attention: (H, T, past + T), masked entries 0.
    async fn attention_weights(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        past: usize,
        n_head: usize,
    ) -> Result<Array3<f32>, GpuError>;
    /// Attention of the queries in the first C columns of `qkv`'s rows over all S rows of `k` and `v`
    /// (S, C), causal over the last T positions when asked: the output (T, C), heads whose bit is
    /// set in `ablate` zeroed, and the weights (H, T, S) (`Kernel::Attend`).
    #[allow(clippy::too_many_arguments)]
    async fn attend(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        v: ArrayView2<'_, f32>,
        n_head: usize,
        causal: bool,
        ablate: u32,
    ) -> Result<(Array2<f32>, Array3<f32>), GpuError>;
    /// Softmax of each row; with `causal = Some((t, past))` row r keeps past + r mod t + 1 entries.
    async fn softmax(&self, x: ArrayView2<'_, f32>, causal: Option<(usize, usize)>) -> Result<Array2<f32>, GpuError>;
}

/// The CPU backend: the twins in `gpt2::ops` and `numerics`.
pub struct Cpu;

fn causal_rows(s: usize, t: usize, past: usize, r: usize) -> usize {
    (past + r % t + 1).min(s)
}

impl Ops for Cpu {
    fn name(&self) -> String {
        "CPU".into()
    }
    async fn linear(
        &self,
        x: ArrayView2<'_, f32>,
        lin: &Linear,
        y0: Option<ArrayView2<'_, f32>>,
    ) -> Result<Array2<f32>, GpuError> {
        let y = cpu::linear(x, lin);
        Ok(match y0 {
            Some(y0) => y + y0,
            None => y,
        })
    }
    async fn linear_gelu(&self, x: ArrayView2<'_, f32>, lin: &Linear) -> Result<Array2<f32>, GpuError> {
        Ok(cpu::linear(x, lin).mapv(cpu::gelu_new))
    }
    async fn norm_linear(
        &self,
        x: ArrayView2<'_, f32>,
        ln: &LayerNorm,
        eps: f32,
        lin: &Linear,
    ) -> Result<Array2<f32>, GpuError> {
        Ok(cpu::linear(cpu::layer_norm(x, ln, eps).view(), lin))
    }
    async fn logits(&self, h: ArrayView2<'_, f32>, wte: ArrayView2<'_, f32>) -> Result<Array2<f32>, GpuError> {
        Ok(cpu::tied_logits(h, &wte.to_owned()))
    }
    async fn layer_norm(&self, x: ArrayView2<'_, f32>, ln: &LayerNorm, eps: f32) -> Result<Array2<f32>, GpuError> {
        Ok(cpu::layer_norm(x, ln, eps))
    }
    async fn activation(&self, x: ArrayView2<'_, f32>, act: Act) -> Result<Array2<f32>, GpuError> {
        use attention_live::model::dense::Activation;
        Ok(match act {
            Act::GeluNew => x.mapv(cpu::gelu_new),
            Act::Relu => x.mapv(|v| Activation::Relu.apply(v)),
            Act::Silu => x.mapv(|v| Activation::Swish.apply(v)),
            Act::Gelu => x.mapv(|v| Activation::Gelu.apply(v)),
        })
    }
    async fn embed(
        &self,
        ids: &[u32],
        wte: ArrayView2<'_, f32>,
        wpe: ArrayView2<'_, f32>,
        past: usize,
    ) -> Result<Array2<f32>, GpuError> {
        let mut x = Array2::zeros((ids.len(), wte.ncols()));
        for (i, (mut row, &id)) in x.rows_mut().into_iter().zip(ids).enumerate() {
            row.assign(&(&wte.row(id as usize) + &wpe.row(past + i)));
        }
        Ok(x)
    }
    async fn kv_append(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        v: ArrayView2<'_, f32>,
        past: usize,
    ) -> Result<(Array2<f32>, Array2<f32>), GpuError> {
        let (t, c) = (qkv.nrows(), k.ncols());
        let (mut k, mut v) = (k.to_owned(), v.to_owned());
        k.slice_mut(s![past..past + t, ..]).assign(&qkv.slice(s![.., c..2 * c]));
        v.slice_mut(s![past..past + t, ..]).assign(&qkv.slice(s![.., 2 * c..3 * c]));
        Ok((k, v))
    }
    async fn attention(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        v: ArrayView2<'_, f32>,
        past: usize,
        n_head: usize,
        ablate: u32,
    ) -> Result<Array2<f32>, GpuError> {
        let (t, c) = (qkv.nrows(), k.ncols());
        let hd = c / n_head;
        let mut y = Array2::zeros((t, c));
        for h in 0..n_head {
            let cols = s![.., h * hd..(h + 1) * hd];
            let (out, _) = cpu::causal_attention(
                qkv.slice(cols),
                k.slice(s![..past + t, h * hd..(h + 1) * hd]),
                v.slice(s![..past + t, h * hd..(h + 1) * hd]),
                past,
            );
            if ablate >> h & 1 == 0 {
                y.slice_mut(cols).assign(&out);
            }
        }
        Ok(y)
    }
    async fn attention_weights(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        past: usize,
        n_head: usize,
    ) -> Result<Array3<f32>, GpuError> {
        let (t, c) = (qkv.nrows(), k.ncols());
        let hd = c / n_head;
        let mut w = Array3::zeros((n_head, t, past + t));
        for h in 0..n_head {
            let keys = k.slice(s![..past + t, h * hd..(h + 1) * hd]);
            let (_, wts) = cpu::causal_attention(qkv.slice(s![.., h * hd..(h + 1) * hd]), keys, keys, past);
            w.index_axis_mut(Axis(0), h).assign(&wts);
        }
        Ok(w)
    }
    async fn attend(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        v: ArrayView2<'_, f32>,
        n_head: usize,
        causal: bool,
        ablate: u32,
    ) -> Result<(Array2<f32>, Array3<f32>), GpuError> {
        use attention_live::numerics::flash::{causal_attention, full_attention};
        let (t, (s_len, c)) = (qkv.nrows(), k.dim());
        let hd = c / n_head;
        let (mut y, mut w) = (Array2::zeros((t, c)), Array3::zeros((n_head, t, s_len)));
        for h in 0..n_head {
            let cols = s![.., h * hd..(h + 1) * hd];
            let (q, k, v) = (qkv.slice(cols), k.slice(cols), v.slice(cols));
            let (out, wts) = if causal { causal_attention(q, k, v, s_len - t) } else { full_attention(q, k, v) };
            if ablate >> h & 1 == 0 {
                y.slice_mut(cols).assign(&out);
            }
            w.index_axis_mut(Axis(0), h).assign(&wts);
        }
        Ok((y, w))
    }
    async fn softmax(&self, x: ArrayView2<'_, f32>, causal: Option<(usize, usize)>) -> Result<Array2<f32>, GpuError> {
        let n = x.ncols();
        let mut out = Array2::zeros(x.dim());
        for (r, (row, mut o)) in x.rows().into_iter().zip(out.rows_mut()).enumerate() {
            let valid = causal.map_or(n, |(t, past)| causal_rows(n, t, past, r));
            let row64 = row.slice(s![..valid]).mapv(|v| v as f64);
            if let Some(p) = attention_live::numerics::softmax::masked_softmax(row64.view()) {
                o.slice_mut(s![..valid]).assign(&p.mapv(|v| v as f32));
            }
        }
        Ok(out)
    }
}

fn shape2(v: Vec<f32>, rows: usize, cols: usize) -> Result<Array2<f32>, GpuError> {
    Array2::from_shape_vec((rows, cols), v).map_err(|e| GpuError::Failed(format!("read back the wrong size: {e}")))
}

fn flat(x: ArrayView2<f32>) -> Vec<f32> {
    x.iter().copied().collect()
}

/// `Ops::linear` with the weights stored in `precision` (f16 on a device with
/// `shader-f16`; its CPU twin is `cpu::linear` on `round_linear_to_f16(lin)`).
pub async fn linear_in(
    gpu: &Gpu,
    x: ArrayView2<'_, f32>,
    lin: &Linear,
    y0: Option<ArrayView2<'_, f32>>,
    precision: Precision,
) -> Result<Array2<f32>, GpuError> {
    let (m, k, n) = (x.nrows(), x.ncols(), lin.dim().1);
    let y = gpu
        .checked(|| {
            let xb = gpu.upload("x", &flat(x));
            let wb = gpu.upload_weight("w", &flat(lin.weight().view()), precision);
            let bb = gpu.upload("b", lin.bias.as_slice().unwrap_or(&lin.bias.to_vec()));
            let yb = match y0 {
                Some(y0) => gpu.upload("y", &flat(y0)),
                None => gpu.buffer("y", m * n),
            };
            let mut batch = Batch::new(gpu);
            kernels::linear(&mut batch, &xb, &wb, &bb, &yb, m, k, n, y0.is_some());
            batch.submit();
            yb
        })
        .await?;
    shape2(gpu.read(&y, 0, m * n).await?, m, n)
}

/// The CPU twin of a linear layer stored as f16 on the GPU: every weight rounded to f16.
pub fn round_linear_to_f16(lin: &Linear) -> Linear {
    lin.map_weights(attention_live::gpu::round_to_f16)
}

impl Ops for Gpu {
    fn name(&self) -> String {
        self.name.clone()
    }
    async fn linear(
        &self,
        x: ArrayView2<'_, f32>,
        lin: &Linear,
        y0: Option<ArrayView2<'_, f32>>,
    ) -> Result<Array2<f32>, GpuError> {
        linear_in(self, x, lin, y0, Precision::F32).await
    }
    async fn linear_gelu(&self, x: ArrayView2<'_, f32>, lin: &Linear) -> Result<Array2<f32>, GpuError> {
        let (m, k, n) = (x.nrows(), x.ncols(), lin.dim().1);
        let y = self
            .checked(|| {
                let xb = self.upload("x", &flat(x));
                let wb = self.upload_weight("w", &flat(lin.weight().view()), Precision::F32);
                let bb = self.upload("b", lin.bias.as_slice().unwrap_or(&lin.bias.to_vec()));
                let yb = self.buffer("y", m * n);
                let mut batch = Batch::new(self);
                kernels::linear_with(&mut batch, &xb, &wb, &bb, &yb, m, k, n, Epilogue::Gelu);
                batch.submit();
                yb
            })
            .await?;
        shape2(self.read(&y, 0, m * n).await?, m, n)
    }
    async fn norm_linear(
        &self,
        x: ArrayView2<'_, f32>,
        ln: &LayerNorm,
        eps: f32,
        lin: &Linear,
    ) -> Result<Array2<f32>, GpuError> {
        let (m, k, n) = (x.nrows(), x.ncols(), lin.dim().1);
        let y = self
            .checked(|| {
                let xb = self.upload("x", &flat(x));
                let (g, b) = (self.upload("gamma", &ln.weight.to_vec()), self.upload("beta", &ln.bias.to_vec()));
                let wb = self.upload_weight("w", &flat(lin.weight().view()), Precision::F32);
                let bb = self.upload("b", lin.bias.as_slice().unwrap_or(&lin.bias.to_vec()));
                let yb = self.buffer("y", m * n);
                let mut batch = Batch::new(self);
                let norm = (&g, &b, eps.to_bits());
                kernels::norm_matvec(&mut batch, &xb, norm, &wb, &bb, &yb, (m, k, n), Epilogue::Store);
                batch.submit();
                yb
            })
            .await?;
        shape2(self.read(&y, 0, m * n).await?, m, n)
    }
    async fn logits(&self, h: ArrayView2<'_, f32>, wte: ArrayView2<'_, f32>) -> Result<Array2<f32>, GpuError> {
        let (m, c, v) = (h.nrows(), h.ncols(), wte.nrows());
        let out = self
            .checked(|| {
                let (hb, wb, ob) =
                    (self.upload("h", &flat(h)), self.upload("wte", &flat(wte)), self.buffer("logits", m * v));
                let mut batch = Batch::new(self);
                batch.add(
                    Kernel::Logits,
                    &params::Logits {
                        m: m as u32,
                        v: v as u32,
                        c: c as u32,
                        v0: 0,
                        rows: v as u32,
                        ..Default::default()
                    },
                    &[&hb, &wb, &ob],
                    [groups_for(v, 8), m as u32, 1],
                );
                batch.submit();
                ob
            })
            .await?;
        shape2(self.read(&out, 0, m * v).await?, m, v)
    }
    async fn layer_norm(&self, x: ArrayView2<'_, f32>, ln: &LayerNorm, eps: f32) -> Result<Array2<f32>, GpuError> {
        let (rows, n) = x.dim();
        let y = self
            .checked(|| {
                let (xb, yb) = (self.upload("x", &flat(x)), self.buffer("y", rows * n));
                let (g, b) = (self.upload("gamma", &ln.weight.to_vec()), self.upload("beta", &ln.bias.to_vec()));
                let mut batch = Batch::new(self);
                batch.add(
                    Kernel::LayerNorm,
                    &params::Norm { rows: rows as u32, n: n as u32, eps, row0: 0 },
                    &[&xb, &g, &b, &yb],
                    [rows as u32, 1, 1],
                );
                batch.submit();
                yb
            })
            .await?;
        shape2(self.read(&y, 0, rows * n).await?, rows, n)
    }
    async fn activation(&self, x: ArrayView2<'_, f32>, act: Act) -> Result<Array2<f32>, GpuError> {
        let n = x.len();
        let xb = self
            .checked(|| {
                let xb = self.upload("x", &flat(x));
                let mut batch = Batch::new(self);
                kernels::activation(&mut batch, &xb, n, act);
                batch.submit();
                xb
            })
            .await?;
        shape2(self.read(&xb, 0, n).await?, x.nrows(), x.ncols())
    }
    async fn embed(
        &self,
        ids: &[u32],
        wte: ArrayView2<'_, f32>,
        wpe: ArrayView2<'_, f32>,
        past: usize,
    ) -> Result<Array2<f32>, GpuError> {
        let (t, c) = (ids.len(), wte.ncols());
        let x = self
            .checked(|| {
                let (ib, tb, pb, xb) = (
                    self.upload_u32("ids", ids),
                    self.upload("wte", &flat(wte)),
                    self.upload("wpe", &flat(wpe)),
                    self.buffer("x", t * c),
                );
                let mut batch = Batch::new(self);
                batch.add(
                    Kernel::Embed,
                    &params::Embed {
                        t: t as u32,
                        c: c as u32,
                        past: past as u32,
                        v0: 0,
                        rows: wte.nrows() as u32,
                        ..Default::default()
                    },
                    &[&ib, &tb, &pb, &xb],
                    [groups_for(t * c, 256), 1, 1],
                );
                batch.submit();
                xb
            })
            .await?;
        shape2(self.read(&x, 0, t * c).await?, t, c)
    }
    async fn kv_append(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        v: ArrayView2<'_, f32>,
        past: usize,
    ) -> Result<(Array2<f32>, Array2<f32>), GpuError> {
        let (t, (cap, c)) = (qkv.nrows(), k.dim());
        let (kb, vb) = self
            .checked(|| {
                let (qb, kb, vb) =
                    (self.upload("qkv", &flat(qkv)), self.upload("k", &flat(k)), self.upload("v", &flat(v)));
                let mut batch = Batch::new(self);
                batch.add(
                    Kernel::KvAppend,
                    &params::KvAppend { t: t as u32, c: c as u32, past: past as u32, ..Default::default() },
                    &[&qb, &kb, &vb],
                    [groups_for(t * c, 256), 1, 1],
                );
                batch.submit();
                (kb, vb)
            })
            .await?;
        Ok((shape2(self.read(&kb, 0, cap * c).await?, cap, c)?, shape2(self.read(&vb, 0, cap * c).await?, cap, c)?))
    }
    async fn attention(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        v: ArrayView2<'_, f32>,
        past: usize,
        n_head: usize,
        ablate: u32,
    ) -> Result<Array2<f32>, GpuError> {
        let (t, c) = (qkv.nrows(), k.ncols());
        let hd = head_size(c, n_head)?;
        let y = self
            .checked(|| {
                let (qb, kb, vb, yb) = (
                    self.upload("qkv", &flat(qkv)),
                    self.upload("k", &flat(k)),
                    self.upload("v", &flat(v)),
                    self.buffer("y", t * c),
                );
                let mut batch = Batch::new(self);
                let scale = 1.0 / (hd as f32).sqrt();
                batch.add(
                    Kernel::Attention,
                    &params::Attention {
                        t: t as u32,
                        past: past as u32,
                        n_head: n_head as u32,
                        hd: hd as u32,
                        c: c as u32,
                        ablate,
                        scale,
                        n_kv: 0,
                    },
                    &[&qb, &kb, &vb, &yb],
                    [t as u32, n_head as u32, 1],
                );
                batch.submit();
                yb
            })
            .await?;
        shape2(self.read(&y, 0, t * c).await?, t, c)
    }
    async fn attention_weights(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        past: usize,
        n_head: usize,
    ) -> Result<Array3<f32>, GpuError> {
        let (t, c) = (qkv.nrows(), k.ncols());
        let (hd, s) = (head_size(c, n_head)?, past + t);
        let w = self
            .checked(|| {
                let (qb, kb, wb) = (
                    self.upload("qkv", &flat(qkv)),
                    self.upload("k", &flat(k)),
                    self.buffer("weights", n_head * t * s),
                );
                let mut batch = Batch::new(self);
                let scale = 1.0 / (hd as f32).sqrt();
                let p = params::Scores {
                    t: t as u32,
                    past: past as u32,
                    n_head: n_head as u32,
                    hd: hd as u32,
                    c: c as u32,
                    s: s as u32,
                    scale,
                    n_kv: 0,
                };
                kernels::attention_weights(&mut batch, p, &qb, &kb, &wb);
                batch.submit();
                wb
            })
            .await?;
        let flat = self.read(&w, 0, n_head * t * s).await?;
        Array3::from_shape_vec((n_head, t, s), flat).map_err(|e| GpuError::Failed(e.to_string()))
    }
    async fn attend(
        &self,
        qkv: ArrayView2<'_, f32>,
        k: ArrayView2<'_, f32>,
        v: ArrayView2<'_, f32>,
        n_head: usize,
        causal: bool,
        ablate: u32,
    ) -> Result<(Array2<f32>, Array3<f32>), GpuError> {
        let (t, (s_len, c)) = (qkv.nrows(), k.dim());
        let hd = head_size(c, n_head)?;
        let (y, w) = self
            .checked(|| {
                let (qb, kb, vb) =
                    (self.upload("qkv", &flat(qkv)), self.upload("k", &flat(k)), self.upload("v", &flat(v)));
                let (yb, wb) = (self.buffer("y", t * c), self.buffer("w", n_head * t * s_len));
                let mut batch = Batch::new(self);
                let p = params::Attend {
                    t: t as u32,
                    s: s_len as u32,
                    hd: hd as u32,
                    q_stride: qkv.ncols() as u32,
                    row0: 0,
                    causal: causal as u32,
                    ablate,
                    scale: 1.0 / (hd as f32).sqrt(),
                };
                kernels::attend(&mut batch, p, n_head, (&qb, &kb, &vb), (&yb, &wb));
                batch.submit();
                (yb, wb)
            })
            .await?;
        let w = self.read(&w, 0, n_head * t * s_len).await?;
        let w = Array3::from_shape_vec((n_head, t, s_len), w).map_err(|e| GpuError::Failed(e.to_string()))?;
        Ok((shape2(self.read(&y, 0, t * c).await?, t, c)?, w))
    }
    async fn softmax(&self, x: ArrayView2<'_, f32>, causal: Option<(usize, usize)>) -> Result<Array2<f32>, GpuError> {
        let (rows, n) = x.dim();
        let (t, past, on) = causal.map_or((1, 0, 0), |(t, p)| (t, p, 1));
        let xb = self
            .checked(|| {
                let xb = self.upload("x", &flat(x));
                let mut batch = Batch::new(self);
                batch.add(
                    Kernel::Softmax,
                    &params::Softmax {
                        rows: rows as u32,
                        n: n as u32,
                        t: t as u32,
                        past: past as u32,
                        causal: on,
                        ..Default::default()
                    },
                    &[&xb],
                    [rows as u32, 1, 1],
                );
                batch.submit();
                xb
            })
            .await?;
        shape2(self.read(&xb, 0, rows * n).await?, rows, n)
    }
}
