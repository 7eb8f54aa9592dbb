//! The lab's transformer: GPT-2's architecture (pre-layer-norm blocks, causal multi-head
//! attention, an optional MLP with the tanh GELU, a tied output head), forward and backward by
//! hand, one function per operation, in f32.
//!
//! All parameters live in one flat vector (`Model::params`), in the order and with the names and
//! layouts of a Hugging Face GPT-2 checkpoint (Conv1D: a weight is (in, out) and y = x W + b);
//! gradients are a vector of the same layout, so clipping and AdamW are single loops.
//!
//! Shapes: B examples of T tokens, N = B·T rows; width C, H heads of d = C / H columns, V tokens.

use ndarray::{Array2, ArrayView2, ArrayViewMut2};

use super::task::Batch;
use super::{ModelConfig, Positions};
#[cfg(target_arch = "wasm32")]
use crate::numerics::f4::F4;
use crate::numerics::gelu::{exp, gelu_in_place};
use crate::numerics::packed::{matmul, matmul_then, Then};
use crate::numerics::par::{self, SharedOut};
use crate::numerics::rng::Rng;

const LN_EPS: f32 = 1e-5;
const SQRT_2_OVER_PI: f32 = 0.797_884_6;

/// One named parameter tensor in the flat vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub name: String,
    pub shape: Vec<usize>,
    pub offset: usize,
}

impl Entry {
    pub fn range(&self) -> std::ops::Range<usize> {
        self.offset..self.offset + self.shape.iter().product::<usize>()
    }
}

/// A tensor's place in the flat vector: (offset, rows, cols); a vector has rows = 1.
#[derive(Debug, Clone, Copy)]
struct Place {
    off: usize,
    rows: usize,
    cols: usize,
}

impl Place {
    fn len(self) -> usize {
        self.rows * self.cols
    }
    fn of(self, buf: &[f32]) -> &[f32] {
        &buf[self.off..self.off + self.len()]
    }
    fn of_mut(self, buf: &mut [f32]) -> &mut [f32] {
        &mut buf[self.off..self.off + self.len()]
    }
    fn view(self, buf: &[f32]) -> ArrayView2<'_, f32> {
        ArrayView2::from_shape((self.rows, self.cols), self.of(buf)).expect("a place fits its buffer")
    }
    fn view_mut(self, buf: &mut [f32]) -> ArrayViewMut2<'_, f32> {
        ArrayViewMut2::from_shape((self.rows, self.cols), self.of_mut(buf)).expect("a place fits its buffer")
    }
}

/// A linear layer's weight (in, out) and bias (out).
#[derive(Debug, Clone, Copy)]
struct Linear {
    w: Place,
    b: Place,
}

/// A layer norm's γ and β (C each).
#[derive(Debug, Clone, Copy)]
struct Norm {
    w: Place,
    b: Place,
}

#[derive(Debug, Clone, Copy)]
struct Mlp {
    ln_2: Norm,
    c_fc: Linear,
    c_proj: Linear,
}

#[derive(Debug, Clone, Copy)]
struct Block {
    ln_1: Norm,
    c_attn: Linear,
    c_proj: Linear,
    mlp: Option<Mlp>,
}

#[derive(Debug, Clone)]
struct Places {
    wte: Place,
    wpe: Option<Place>,
    blocks: Vec<Block>,
    ln_f: Norm,
}

/// Lays the tensors out in checkpoint order and names them.
struct Builder {
    entries: Vec<Entry>,
    len: usize,
}

impl Builder {
    fn tensor(&mut self, name: String, rows: usize, cols: usize, shape: Vec<usize>) -> Place {
        let place = Place { off: self.len, rows, cols };
        self.entries.push(Entry { name, shape, offset: self.len });
        self.len += rows * cols;
        place
    }
    fn matrix(&mut self, name: String, rows: usize, cols: usize) -> Place {
        self.tensor(name, rows, cols, vec![rows, cols])
    }
    fn vector(&mut self, name: String, n: usize) -> Place {
        self.tensor(name, 1, n, vec![n])
    }
    fn linear(&mut self, name: &str, inp: usize, out: usize) -> Linear {
        Linear { w: self.matrix(format!("{name}.weight"), inp, out), b: self.vector(format!("{name}.bias"), out) }
    }
    fn norm(&mut self, name: &str, c: usize) -> Norm {
        Norm { w: self.vector(format!("{name}.weight"), c), b: self.vector(format!("{name}.bias"), c) }
    }
}

fn places(cfg: &ModelConfig) -> (Vec<Entry>, usize, Places) {
    let c = cfg.n_embd;
    let mut b = Builder { entries: Vec::new(), len: 0 };
    let wte = b.matrix("wte.weight".into(), cfg.vocab, c);
    let wpe = (cfg.positions == Positions::Learned).then(|| b.matrix("wpe.weight".into(), cfg.n_positions, c));
    let blocks = (0..cfg.n_layer)
        .map(|i| {
            let p = format!("h.{i}");
            let ln_1 = b.norm(&format!("{p}.ln_1"), c);
            let c_attn = b.linear(&format!("{p}.attn.c_attn"), c, 3 * c);
            let c_proj = b.linear(&format!("{p}.attn.c_proj"), c, c);
            let mlp = cfg.mlp.then(|| Mlp {
                ln_2: b.norm(&format!("{p}.ln_2"), c),
                c_fc: b.linear(&format!("{p}.mlp.c_fc"), c, 4 * c),
                c_proj: b.linear(&format!("{p}.mlp.c_proj"), 4 * c, c),
            });
            Block { ln_1, c_attn, c_proj, mlp }
        })
        .collect();
    let ln_f = b.norm("ln_f", c);
    (b.entries, b.len, Places { wte, wpe, blocks, ln_f })
}

/// The model: its shape, its parameters, and the fixed position tables its shape implies.
#[derive(Debug, Clone)]
pub struct Model {
    pub cfg: ModelConfig,
    pub entries: Vec<Entry>,
    pub params: Vec<f32>,
    places: Places,
    /// Sinusoidal positions: the (n_positions, C) table added to the embeddings.
    table: Option<Array2<f32>>,
    /// RoPE: cos and sin of t·ω_i, (n_positions, d/2) each, row-major.
    rope: Option<(Vec<f32>, Vec<f32>)>,
}

/// A layer norm's per-row statistics, kept for the backward pass.
#[derive(Debug, Clone)]
struct NormCache {
    mean: Vec<f32>,
    rstd: Vec<f32>,
}

#[derive(Debug, Clone)]
struct BlockCache {
    /// The block's input (N, C).
    x: Array2<f32>,
    ln_1: NormCache,
    /// ln_1's output (N, C).
    a: Array2<f32>,
    /// Queries (rotated with RoPE), keys (rotated) and values (N, 3C).
    qkv: Array2<f32>,
    /// Attention weights (B, H, T, T), row-major, zero above the diagonal.
    att: Vec<f32>,
    /// The heads' outputs side by side, before c_proj (N, C).
    y: Array2<f32>,
    mlp: Option<MlpCache>,
}

#[derive(Debug, Clone)]
struct MlpCache {
    /// The residual stream after attention (N, C): the MLP's input.
    mid: Array2<f32>,
    ln_2: NormCache,
    /// ln_2's output (N, C).
    m: Array2<f32>,
    /// c_fc's output before the GELU (N, 4C).
    pre: Array2<f32>,
    /// After the GELU (N, 4C).
    act: Array2<f32>,
}

/// What a forward pass leaves for the backward pass and the reader.
#[derive(Debug, Clone)]
pub struct Forward {
    /// Mean cross-entropy over the scored targets (0 when none is scored).
    pub loss: f32,
    /// Scored targets whose most likely token was right, and how many were scored.
    pub correct: usize,
    pub counted: usize,
    blocks: Vec<BlockCache>,
    /// The final layer norm's input and output (N, C).
    last: Array2<f32>,
    ln_f: NormCache,
    out: Array2<f32>,
    /// Softmax of the logits on scored rows, zero on the others (N, V).
    probs: Array2<f32>,
}

impl Forward {
    /// Every head's attention weights, (L, B, H, T, T) flattened: layer by layer.
    pub fn attention(&self) -> Vec<f32> {
        self.blocks.iter().flat_map(|b| b.att.iter().copied()).collect()
    }
}

impl Model {
    /// A model of this shape with every parameter 0.
    pub fn zeros(cfg: &ModelConfig) -> Result<Model, String> {
        cfg.check()?;
        let (entries, len, places) = places(cfg);
        let (t, c) = (cfg.n_positions, cfg.n_embd);
        let table = (cfg.positions == Positions::Sinusoidal)
            .then(|| crate::numerics::positional::sinusoidal(t, c, 10_000.0).mapv(|v| v as f32));
        let rope = (cfg.positions == Positions::Rope).then(|| {
            let half = cfg.head_dim() / 2;
            let (mut cos, mut sin) = (Vec::with_capacity(t * half), Vec::with_capacity(t * half));
            for pos in 0..t {
                for i in 0..half {
                    // ω_i = 1 / 10000^(2i/d), the angle in f64 then rounded once.
                    let angle = pos as f64 * crate::numerics::positional::frequency(i, 2 * half, 10_000.0);
                    cos.push(angle.cos() as f32);
                    sin.push(angle.sin() as f32);
                }
            }
            (cos, sin)
        });
        Ok(Model { cfg: cfg.clone(), entries, params: vec![0.0; len], places, table, rope })
    }

    /// GPT-2's initialisation: weights N(0, 0.02²), the projections into the residual stream
    /// N(0, (0.02 / √(2L))²) so the stream's variance does not grow with depth, biases 0, layer
    /// norms γ = 1, β = 0.
    pub fn init(cfg: &ModelConfig, seed: u64) -> Result<Model, String> {
        let mut m = Model::zeros(cfg)?;
        let mut rng = Rng::new(seed);
        let residual = 0.02 / (2.0 * cfg.n_layer as f64).sqrt();
        for e in &m.entries {
            let std = if e.name.ends_with(".bias") || e.name.contains("ln_") {
                None
            } else if e.name.ends_with("c_proj.weight") {
                Some(residual)
            } else {
                Some(0.02)
            };
            for v in &mut m.params[e.range()] {
                *v = match std {
                    Some(s) => (s * rng.normal()) as f32,
                    None if e.name.contains("ln_") && e.name.ends_with(".weight") => 1.0,
                    None => 0.0,
                };
            }
        }
        Ok(m)
    }

    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// A parameter's values by its checkpoint name.
    pub fn get(&self, name: &str) -> Option<&[f32]> {
        self.entry(name).map(|e| &self.params[e.range()])
    }

    /// Sets a parameter by name; the values must have its size.
    pub fn set(&mut self, name: &str, values: &[f32]) -> Result<(), String> {
        let e = self.entry(name).ok_or_else(|| format!("the model has no parameter {name}"))?;
        let r = e.range();
        if values.len() != r.len() {
            return Err(format!("{name} has {} values, not {}", r.len(), values.len()));
        }
        self.params[r].copy_from_slice(values);
        Ok(())
    }

    /// The (range, weight decay) groups for AdamW: matrices (embeddings and weights) decay,
    /// biases and layer norms do not.
    pub fn decay_groups(&self, wd: f32) -> Vec<(std::ops::Range<usize>, f32)> {
        self.entries.iter().map(|e| (e.range(), if e.shape.len() == 2 { wd } else { 0.0 })).collect()
    }

    /// The forward pass, keeping what the backward pass needs.
    pub fn forward(&self, batch: &Batch) -> Result<Forward, String> {
        let (b, t) = (batch.b, batch.t);
        let cfg = &self.cfg;
        let (c, h, d) = (cfg.n_embd, cfg.n_head, cfg.head_dim());
        if t > cfg.n_positions || t == 0 {
            return Err(format!("a sequence of {t} tokens does not fit {} positions", cfg.n_positions));
        }
        if batch.ids.len() != b * t || batch.targets.len() != b * t {
            return Err("the batch's ids and targets do not have B × T entries".into());
        }
        if let Some(&bad) = batch.ids.iter().find(|&&id| id as usize >= cfg.vocab) {
            return Err(format!("token id {bad} is outside the vocabulary of {}", cfg.vocab));
        }
        let p = &self.params;
        let pl = &self.places;

        // Embeddings (N, C): the token's row of wte, plus its position's vector.
        let wte = pl.wte.view(p);
        let mut x = Array2::<f32>::zeros((b * t, c));
        for (n, mut row) in x.rows_mut().into_iter().enumerate() {
            row.assign(&wte.row(batch.ids[n] as usize));
            let pos = n % t;
            if let Some(wpe) = pl.wpe {
                row += &wpe.view(p).row(pos);
            } else if let Some(table) = &self.table {
                row += &table.row(pos);
            }
        }

        let mut blocks = Vec::with_capacity(pl.blocks.len());
        for blk in &pl.blocks {
            let (a, ln_1) = layer_norm(x.view(), blk.ln_1.w.of(p), blk.ln_1.b.of(p));
            // (N, C) x (C, 3C) -> (N, 3C)
            let mut qkv = linear(a.view(), blk.c_attn, p);
            if let Some((cos, sin)) = &self.rope {
                rotate(&mut qkv, t, h, d, cos, sin, 1.0);
            }
            let (att, y) = attention(qkv.view(), b, t, h, d);
            // The residual stream after attention (N, C), added in place (no third array).
            let mut mid = linear(y.view(), blk.c_proj, p);
            mid += &x;
            let (next, mlp) = match blk.mlp {
                // Without the MLP, `mid` is the block's output as it is: nothing to copy or keep.
                None => (mid, None),
                Some(mlp) => {
                    let (m, ln_2) = layer_norm(mid.view(), mlp.ln_2.w.of(p), mlp.ln_2.b.of(p));
                    // (N, C) x (C, 4C) -> (N, 4C)
                    let pre = linear(m.view(), mlp.c_fc, p);
                    // (N, 4C): the GELU, on four lanes at a time in the browser, rows split across threads.
                    let mut act = pre.clone();
                    let (width, work) = (act.ncols(), act.len().saturating_mul(par::ROW_PASS_WORK));
                    let rows = act.as_slice_mut().expect("a fresh array is contiguous");
                    par::for_rows(rows, width, work, |_, rows| gelu_in_place(rows));
                    let mut next = linear(act.view(), mlp.c_proj, p);
                    next += &mid;
                    (next, Some(MlpCache { mid, ln_2, m, pre, act }))
                }
            };
            blocks.push(BlockCache { x: std::mem::replace(&mut x, next), ln_1, a, qkv, att, y, mlp });
        }

        let (out, ln_f) = layer_norm(x.view(), pl.ln_f.w.of(p), pl.ln_f.b.of(p));
        // The tied head: (N, C) x (C, V) -> (N, V).
        let logits = matmul(out.view(), wte.t());
        let mut probs = Array2::<f32>::zeros(logits.dim());
        let (mut loss, mut correct, mut counted) = (0.0f64, 0, 0);
        for (n, &target) in batch.targets.iter().enumerate() {
            let Ok(target) = usize::try_from(target) else { continue };
            if target >= cfg.vocab {
                return Err(format!("target {target} is outside the vocabulary of {}", cfg.vocab));
            }
            let row = logits.row(n);
            // Softmax after subtracting the row's maximum: every exponent is ≤ 0, none overflows,
            // and −log p[target] = log Σ e^(z − max) − (z_target − max) stays exact.
            let max = row.fold(f32::NEG_INFINITY, |m, &z| m.max(z));
            let mut pr = probs.row_mut(n);
            let mut sum = 0.0f32;
            for (q, &z) in pr.iter_mut().zip(row) {
                *q = exp(z - max);
                sum += *q;
            }
            pr.mapv_inplace(|q| q / sum);
            loss += (sum.ln() - (row[target] - max)) as f64;
            let best = row.iter().enumerate().fold(0, |bi, (i, &z)| if z > row[bi] { i } else { bi });
            correct += (best == target) as usize;
            counted += 1;
        }
        let loss = if counted > 0 { (loss / counted as f64) as f32 } else { 0.0 };
        Ok(Forward { loss, correct, counted, blocks, last: x, ln_f, out, probs })
    }

    /// The gradient of the forward pass's loss with respect to every parameter (the layout of
    /// `params`).
    pub fn backward(&self, batch: &Batch, fwd: &Forward) -> Vec<f32> {
        let (b, t) = (batch.b, batch.t);
        let (c, h, d) = (self.cfg.n_embd, self.cfg.n_head, self.cfg.head_dim());
        let p = &self.params;
        let pl = &self.places;
        let mut grad = vec![0.0f32; p.len()];
        if fwd.counted == 0 {
            return grad;
        }

        // Cross-entropy through softmax: dL/dz = (p − onehot(target)) / count on scored rows.
        let mut dlogits = fwd.probs.clone();
        for (n, &target) in batch.targets.iter().enumerate() {
            if let Ok(target) = usize::try_from(target) {
                dlogits[[n, target]] -= 1.0;
            }
        }
        dlogits /= fwd.counted as f32;
        // logits = out wteᵀ: d wte += dlogitsᵀ out (V, C); d out = dlogits wte (N, C).
        add_to(pl.wte.view_mut(&mut grad), matmul(dlogits.t(), fwd.out.view()).view());
        let dout = matmul(dlogits.view(), pl.wte.view(p));
        let mut dx = Array2::<f32>::zeros((b * t, c));
        layer_norm_backward(dout.view(), fwd.last.view(), &fwd.ln_f, pl.ln_f, p, &mut grad, &mut dx);

        for (blk, cache) in pl.blocks.iter().zip(&fwd.blocks).rev() {
            // dx is the gradient at the block's output; the residual adds it to its input's.
            if let (Some(mlp), Some(mc)) = (blk.mlp, &cache.mlp) {
                let mut dpre = linear_backward(dx.view(), mc.act.view(), mlp.c_proj, p, &mut grad); // (N, 4C)
                let (pre, act) = (mc.pre.as_slice().expect("contiguous"), mc.act.as_slice().expect("contiguous"));
                let (width, work) = (dpre.ncols(), dpre.len().saturating_mul(par::ROW_PASS_WORK));
                let rows = dpre.as_slice_mut().expect("a fresh array is contiguous");
                // Element by element: rows split across threads.
                par::for_rows(rows, width, work, |row0, dy| {
                    let at = row0 * width..row0 * width + dy.len();
                    gelu_backward(&pre[at.clone()], &act[at], dy);
                });
                let dm = linear_backward(dpre.view(), mc.m.view(), mlp.c_fc, p, &mut grad);
                // The residual passes dx through; ln_2's gradient adds to it in place.
                layer_norm_backward(dm.view(), mc.mid.view(), &mc.ln_2, mlp.ln_2, p, &mut grad, &mut dx);
            }
            let dy = linear_backward(dx.view(), cache.y.view(), blk.c_proj, p, &mut grad);
            let mut dqkv = attention_backward(dy.view(), cache.qkv.view(), &cache.att, b, t, h, d);
            if let Some((cos, sin)) = &self.rope {
                // The rotation is orthogonal: its gradient rotates back by the opposite angle.
                rotate(&mut dqkv, t, h, d, cos, sin, -1.0);
            }
            let da = linear_backward(dqkv.view(), cache.a.view(), blk.c_attn, p, &mut grad);
            layer_norm_backward(da.view(), cache.x.view(), &cache.ln_1, blk.ln_1, p, &mut grad, &mut dx);
        }

        // Embeddings: each row's gradient goes to its token's row of wte and its position's wpe.
        for (n, row) in dx.rows().into_iter().enumerate() {
            let mut g = pl.wte.view_mut(&mut grad);
            g.row_mut(batch.ids[n] as usize).scaled_add(1.0, &row);
            if let Some(wpe) = pl.wpe {
                wpe.view_mut(&mut grad).row_mut(n % t).scaled_add(1.0, &row);
            }
        }
        grad
    }

    /// Every head's attention on one sequence: (L, H, T, T) flattened.
    pub fn attention_on(&self, ids: &[u32]) -> Result<Vec<f32>, String> {
        let batch = Batch { b: 1, t: ids.len(), ids: ids.to_vec(), targets: vec![-1; ids.len()] };
        Ok(self.forward(&batch)?.attention())
    }
}

/// Adds `src` into `dst` (same shape).
fn add_to(mut dst: ArrayViewMut2<f32>, src: ArrayView2<f32>) {
    dst += &src;
}

/// x W + b: (N, in) x (in, out) -> (N, out), the bias added to each output as it is stored
/// (in the browser by the thread that summed it).
fn linear(x: ArrayView2<f32>, lin: Linear, p: &[f32]) -> Array2<f32> {
    matmul_then(x, lin.w.view(p), Then::Bias(lin.b.of(p)))
}

/// The backward of y = x W + b: accumulates dW += xᵀ dy and db += Σ_rows dy into `grad`, and
/// returns dx = dy Wᵀ.
fn linear_backward(dy: ArrayView2<f32>, x: ArrayView2<f32>, lin: Linear, p: &[f32], grad: &mut [f32]) -> Array2<f32> {
    add_to(lin.w.view_mut(grad), matmul(x.t(), dy).view()); // (in, N) x (N, out)
    let db = lin.b.of_mut(grad);
    // Row by row as slices (ndarray's iterators cost several times a slice's at the worker's opt-level "z").
    let rows = dy.as_standard_layout();
    for row in rows.as_slice().expect("standard layout").chunks_exact(dy.ncols().max(1)) {
        db.iter_mut().zip(row).for_each(|(g, &v)| *g += v);
    }
    matmul(dy, lin.w.view(p).t()) // (N, out) x (out, in)
}

/// Layer norm of each row: γ ⊙ (x − μ) / √(σ² + ε) + β, σ² biased as PyTorch's. Rows split
/// across threads.
fn layer_norm(x: ArrayView2<f32>, w: &[f32], b: &[f32]) -> (Array2<f32>, NormCache) {
    let (n, c) = x.dim();
    let mut out = x.as_standard_layout().into_owned();
    // (mean, 1 / std) of each row: (N, 2).
    let mut stats = vec![0.0f32; 2 * n];
    let shared = SharedOut::new(&mut stats);
    let rows = out.as_slice_mut().expect("a fresh array is contiguous");
    par::for_rows(rows, c, rows.len().saturating_mul(par::ROW_PASS_WORK), |row0, rows| {
        for (i, row) in rows.chunks_exact_mut(c).enumerate() {
            let mut row = ndarray::ArrayViewMut1::from(row);
            let len = row.len() as f32;
            let mu = row.sum() / len;
            let var = row.iter().map(|&v| (v - mu) * (v - mu)).sum::<f32>() / len;
            let r = 1.0 / (var + LN_EPS).sqrt();
            for ((v, &g), &bb) in row.iter_mut().zip(w).zip(b) {
                *v = (*v - mu) * r * g + bb;
            }
            // SAFETY: row row0 + i is this call's (for_rows hands out disjoint rows), and stats
            // holds 2 values for each of the N rows.
            unsafe { shared.slice(2 * (row0 + i), 2) }.copy_from_slice(&[mu, r]);
        }
    });
    let (mean, rstd) = stats.chunks_exact(2).map(|s| (s[0], s[1])).unzip();
    (out, NormCache { mean, rstd })
}

/// The backward of a layer norm: accumulates dγ, dβ into `grad` and adds dx into `dx`.
/// With x̂ = (x − μ) r and g = dout ⊙ γ: dx = r (g − mean(g) − x̂ mean(g ⊙ x̂)), because μ and r
/// depend on every entry of the row. dx row by row, rows split across threads; then dγ and dβ,
/// sums over the rows, on one thread in row order (so they do not depend on the split).
fn layer_norm_backward(
    dout: ArrayView2<f32>,
    x: ArrayView2<f32>,
    cache: &NormCache,
    norm: Norm,
    p: &[f32],
    grad: &mut [f32],
    dx: &mut Array2<f32>,
) {
    let w = norm.w.of(p);
    let c = w.len();
    if c == 0 {
        return;
    }
    // Rows as slices (both are fresh arrays: no copy is made).
    let (dout, x) = (dout.as_standard_layout(), x.as_standard_layout());
    let (dout, x) = (dout.as_slice().expect("standard layout"), x.as_slice().expect("standard layout"));
    // x̂ of every row (N, C), kept from the first pass for dγ.
    let mut xhat = vec![0.0f32; x.len()];
    let shared = SharedOut::new(&mut xhat);
    let rows = dx.as_slice_mut().expect("dx is a fresh, contiguous array");
    par::for_rows(rows, c, rows.len().saturating_mul(par::ROW_PASS_WORK), |row0, rows| {
        let mut g = vec![0.0f32; c];
        for (i, out) in rows.chunks_exact_mut(c).enumerate() {
            let n = row0 + i;
            let (drow, xrow) = (&dout[n * c..(n + 1) * c], &x[n * c..(n + 1) * c]);
            let (mu, r) = (cache.mean[n], cache.rstd[n]);
            // SAFETY: row n of xhat is this call's (for_rows hands out disjoint rows), within its N × C values.
            let xh = unsafe { shared.slice(n * c, c) };
            let (mut mean_g, mut mean_gx) = (0.0f32, 0.0f32);
            for i in 0..c {
                xh[i] = (xrow[i] - mu) * r;
                g[i] = drow[i] * w[i];
                mean_g += g[i];
                mean_gx += g[i] * xh[i];
            }
            mean_g /= c as f32;
            mean_gx /= c as f32;
            for ((o, &gi), &xh) in out.iter_mut().zip(&g).zip(&*xh) {
                *o += r * (gi - mean_g - xh * mean_gx);
            }
        }
    });
    let mut dw = vec![0.0f32; c];
    let mut db = vec![0.0f32; c];
    for (drow, xh) in dout.chunks_exact(c).zip(xhat.chunks_exact(c)) {
        for i in 0..c {
            dw[i] += drow[i] * xh[i];
            db[i] += drow[i];
        }
    }
    norm.w.of_mut(grad).iter_mut().zip(&dw).for_each(|(g, v)| *g += v);
    norm.b.of_mut(grad).iter_mut().zip(&db).for_each(|(g, v)| *g += v);
}

/// dL/dx of the tanh GELU from dL/dy (in place), with no second exponential. The forward's
/// y = x s with s = 1 / (1 + e^(−2u)) = ½(1 + tanh u), so s = y / x, and 1 − tanh² u = 4 s (1 − s):
/// y' = ½(1 + tanh u) + ½x(1 − tanh² u) u' = s + 2 x s (1 − s) √(2/π)(1 + 3·0.044715 x²).
/// Near x = 0, y / x would lose digits to underflow; there u ≈ 0 and s = ½ to f32 precision.
fn gelu_backward(pre: &[f32], act: &[f32], dy: &mut [f32]) {
    for ((g, &x), &y) in dy.iter_mut().zip(pre).zip(act) {
        let s = if x.abs() < 1e-20 { 0.5 } else { y / x };
        let du = SQRT_2_OVER_PI * (1.0 + 3.0 * 0.044715 * x * x);
        *g *= s + 2.0 * x * s * (1.0 - s) * du;
    }
}

/// Rotates the queries and keys in `qkv` (N, 3C) by their positions (RoPE, adjacent pairs of
/// each head's d columns); `dir` −1 rotates back (the gradient's way).
fn rotate(qkv: &mut Array2<f32>, t: usize, h: usize, d: usize, cos: &[f32], sin: &[f32], dir: f32) {
    let half = d / 2;
    let c = h * d;
    for (n, mut row) in qkv.rows_mut().into_iter().enumerate() {
        let pos = n % t;
        let (cs, sn) = (&cos[pos * half..(pos + 1) * half], &sin[pos * half..(pos + 1) * half]);
        // The queries (columns 0..C) and the keys (C..2C); the values are not rotated.
        for part in [0, c] {
            for head in 0..h {
                let base = part + head * d;
                for i in 0..half {
                    let (x0, x1) = (row[base + 2 * i], row[base + 2 * i + 1]);
                    let (co, si) = (cs[i], dir * sn[i]);
                    row[base + 2 * i] = x0 * co - x1 * si;
                    row[base + 2 * i + 1] = x0 * si + x1 * co;
                }
            }
        }
    }
}

/// a · b over equal lengths, in four interleaved partial sums (lane l takes the entries
/// l, l + 4, …), then (s0 + s1) + (s2 + s3) + the tail: independent additions that natively
/// LLVM keeps in one vector register (a single running sum would be serial).
#[cfg(not(target_arch = "wasm32"))]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (ac, bc) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f32 = ac.remainder().iter().zip(bc.remainder()).map(|(x, y)| x * y).sum();
    let mut acc = [0.0f32; 4];
    for (x, y) in ac.zip(bc) {
        for l in 0..4 {
            acc[l] += x[l] * y[l];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// y += s x over equal lengths.
#[cfg(not(target_arch = "wasm32"))]
fn axpy(y: &mut [f32], s: f32, x: &[f32]) {
    y.iter_mut().zip(x).for_each(|(o, &v)| *o += s * v);
}

/// `dot` in the browser, with the same partial sums on explicit WebAssembly SIMD lanes: at
/// opt-level "z" the compiler neither vectorises nor unrolls (natively this `F4` version is
/// slower than the plain loop, which LLVM vectorises itself).
#[cfg(target_arch = "wasm32")]
#[inline]
#[target_feature(enable = "simd128")]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let n4 = n / 4 * 4;
    let mut acc = F4::zero();
    for i in (0..n4).step_by(4) {
        // SAFETY: i + 4 ≤ n4 ≤ the length of both slices.
        acc = unsafe { acc.mul_add(F4::load(a.as_ptr().add(i)), F4::load(b.as_ptr().add(i))) };
    }
    let mut lanes = [0.0f32; 4];
    // SAFETY: lanes holds four values.
    unsafe { acc.store(lanes.as_mut_ptr()) };
    let tail: f32 = a[n4..n].iter().zip(&b[n4..n]).map(|(x, y)| x * y).sum();
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + tail
}

/// `axpy` in the browser, four lanes at a time.
#[cfg(target_arch = "wasm32")]
#[inline]
#[target_feature(enable = "simd128")]
fn axpy(y: &mut [f32], s: f32, x: &[f32]) {
    let n = y.len().min(x.len());
    let n4 = n / 4 * 4;
    // SAFETY: s is readable.
    let sv = unsafe { F4::load_splat(&s) };
    for i in (0..n4).step_by(4) {
        // SAFETY: i + 4 ≤ n4 ≤ the length of both slices.
        unsafe {
            let p = y.as_mut_ptr().add(i);
            F4::load(p).mul_add(sv, F4::load(x.as_ptr().add(i))).store(p);
        }
    }
    y[n4..n].iter_mut().zip(&x[n4..n]).for_each(|(o, &v)| *o += s * v);
}

/// One head of one example in contiguous (T, d) buffers: attention's inner loops then run on
/// plain slices of d values instead of strided views into (N, 3C) rows.
struct HeadBuf {
    /// Queries, keys, values (T, d) each.
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
}

impl HeadBuf {
    fn new(t: usize, d: usize) -> HeadBuf {
        HeadBuf { q: vec![0.0; t * d], k: vec![0.0; t * d], v: vec![0.0; t * d] }
    }

    /// Copies example `bi`'s head columns out of qkv (N, 3C): q from 0..C, k from C..2C, v from 2C..3C.
    fn gather(&mut self, qkv: &[f32], bi: usize, head: usize, t: usize, d: usize, c: usize) {
        for (part, buf) in [&mut self.q, &mut self.k, &mut self.v].into_iter().enumerate() {
            gather(buf, qkv, 3 * c, part * c + head * d, bi * t, d);
        }
    }
}

/// out (T, d) = columns col .. col + d of rows row0 .. row0 + T of a matrix with `stride` columns.
fn gather(out: &mut [f32], src: &[f32], stride: usize, col: usize, row0: usize, d: usize) {
    for (i, o) in out.chunks_exact_mut(d).enumerate() {
        let at = (row0 + i) * stride + col;
        o.copy_from_slice(&src[at..at + d]);
    }
}

/// The inverse of `gather`: writes (T, d) into columns col .. col + d of rows row0 .. .
fn scatter(dst: &mut [f32], src: &[f32], stride: usize, col: usize, row0: usize, d: usize) {
    for (i, s) in src.chunks_exact(d).enumerate() {
        let at = (row0 + i) * stride + col;
        dst[at..at + d].copy_from_slice(s);
    }
}

/// Causal multi-head attention from qkv (N, 3C): the weights (B, H, T, T) and the heads'
/// outputs side by side (N, C). The B · H (example, head) pairs are independent: on several
/// threads each takes a run of them (`par::map`, in order, so the outputs are those of one thread).
fn attention(qkv: ArrayView2<f32>, b: usize, t: usize, h: usize, d: usize) -> (Vec<f32>, Array2<f32>) {
    let c = h * d;
    let scale = 1.0 / (d as f32).sqrt();
    let qkv = qkv.as_standard_layout();
    let qkv = qkv.as_slice().expect("standard layout");
    // Per pair: its weights (T, T) and its output (T, d).
    let heads = par::map(b * h, b * h * t * t * d, |u| {
        let (bi, head) = (u / h, u % h);
        let mut hb = HeadBuf::new(t, d);
        hb.gather(qkv, bi, head, t, d, c);
        let (mut att, mut yh) = (vec![0.0f32; t * t], vec![0.0f32; t * d]);
        head_forward(&hb, &mut att, &mut yh, d, scale);
        (att, yh)
    });
    let mut att = Vec::with_capacity(b * h * t * t);
    let mut y = vec![0.0f32; b * t * c]; // (N, C)
    for (u, (a, yh)) in heads.into_iter().enumerate() {
        att.extend_from_slice(&a);
        scatter(&mut y, &yh, c, (u % h) * d, (u / h) * t, d);
    }
    (att, Array2::from_shape_vec((b * t, c), y).expect("N × C values"))
}

/// The backward of `attention`: dqkv (N, 3C) from dy (N, C), the (example, head) pairs split
/// as in the forward.
fn attention_backward(
    dy: ArrayView2<f32>,
    qkv: ArrayView2<f32>,
    att: &[f32],
    b: usize,
    t: usize,
    h: usize,
    d: usize,
) -> Array2<f32> {
    let c = h * d;
    let scale = 1.0 / (d as f32).sqrt();
    let (dy, qkv) = (dy.as_standard_layout(), qkv.as_standard_layout());
    let (dy, qkv) = (dy.as_slice().expect("standard layout"), qkv.as_slice().expect("standard layout"));
    // Per pair: the gradients of its queries, keys and values, (T, d) each.
    let grads = par::map(b * h, 2 * b * h * t * t * d, |u| {
        let (bi, head) = (u / h, u % h);
        let (mut hb, mut g) = (HeadBuf::new(t, d), HeadBuf::new(t, d));
        let (mut dyh, mut datt) = (vec![0.0f32; t * d], vec![0.0f32; t]);
        hb.gather(qkv, bi, head, t, d, c);
        gather(&mut dyh, dy, c, head * d, bi * t, d);
        head_backward(&hb, &dyh, &att[u * t * t..][..t * t], &mut g, &mut datt, d, scale);
        g
    });
    let mut dqkv = vec![0.0f32; b * t * 3 * c]; // (N, 3C)
    for (u, g) in grads.iter().enumerate() {
        for (part, buf) in [&g.q, &g.k, &g.v].into_iter().enumerate() {
            scatter(&mut dqkv, buf, 3 * c, part * c + (u % h) * d, (u / h) * t, d);
        }
    }
    Array2::from_shape_vec((b * t, 3 * c), dqkv).expect("N × 3C values")
}

/// One head of one example: the weights att (T, T), row by row and zero above the diagonal, and
/// the output yh (T, d), from the head's queries, keys and values.
#[cfg_attr(target_arch = "wasm32", target_feature(enable = "simd128"))]
fn head_forward(hb: &HeadBuf, att: &mut [f32], yh: &mut [f32], d: usize, scale: f32) {
    let t = yh.len() / d;
    yh.fill(0.0);
    for (i, (qi, yi)) in hb.q.chunks_exact(d).zip(yh.chunks_exact_mut(d)).enumerate() {
        let a = &mut att[i * t..][..=i];
        // Scores for keys 0..=i only: the causal mask leaves the rest at weight 0.
        let mut max = f32::NEG_INFINITY;
        for (aj, kj) in a.iter_mut().zip(hb.k.chunks_exact(d)) {
            *aj = dot(qi, kj) * scale;
            max = max.max(*aj);
        }
        let mut sum = 0.0;
        for aj in a.iter_mut() {
            *aj = exp(*aj - max);
            sum += *aj;
        }
        // y_i = Σ_j a_ij v_j.
        for (aj, vj) in a.iter_mut().zip(hb.v.chunks_exact(d)) {
            *aj /= sum;
            axpy(yi, *aj, vj);
        }
    }
}

/// The backward of `head_forward`: g's q, k, v (T, d) each get the gradients from dyh (T, d);
/// `datt` is scratch of T values.
#[cfg_attr(target_arch = "wasm32", target_feature(enable = "simd128"))]
fn head_backward(hb: &HeadBuf, dyh: &[f32], att: &[f32], g: &mut HeadBuf, datt: &mut [f32], d: usize, scale: f32) {
    let t = dyh.len() / d;
    g.q.fill(0.0);
    g.k.fill(0.0);
    g.v.fill(0.0);
    for (i, ((dyi, qi), dqi)) in dyh.chunks_exact(d).zip(hb.q.chunks_exact(d)).zip(g.q.chunks_exact_mut(d)).enumerate()
    {
        let a = &att[i * t..][..=i];
        // y_i = Σ_j a_ij v_j: da_ij = dy_i · v_j, dv_j += a_ij dy_i.
        for (j, (vj, dvj)) in hb.v.chunks_exact(d).zip(g.v.chunks_exact_mut(d)).take(i + 1).enumerate() {
            datt[j] = dot(dyi, vj);
            axpy(dvj, a[j], dyi);
        }
        // Softmax: ds_ij = a_ij (da_ij − Σ_k a_ik da_ik); then through the scaling.
        let dot_a: f32 = a.iter().zip(datt.iter()).map(|(x, y)| x * y).sum();
        for (j, (kj, dkj)) in hb.k.chunks_exact(d).zip(g.k.chunks_exact_mut(d)).take(i + 1).enumerate() {
            let ds = a[j] * (datt[j] - dot_a) * scale;
            // s_ij = q_i · k_j: dq_i += ds k_j, dk_j += ds q_i.
            axpy(dqi, ds, kj);
            axpy(dkj, ds, qi);
        }
    }
}
