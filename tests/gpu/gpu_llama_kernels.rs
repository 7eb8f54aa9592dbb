//! The Llama family's kernels on every backend: one test body (`llama_kernels_match_their_definitions`)
//! runs on the CPU twins (`llama::ops`, `numerics::flash`) and on the GPU (Mesa's lavapipe here
//! and in CI): RMSNorm, RoPE, SwiGLU's gate and grouped-query attention over a KV cache, each
//! checked against its definition written out below as plain loops in f64.
//!
//! The test command fails the GPU run where no adapter exists (`common::gpu`).

use crate::common;
use attention_live::numerics::rng::Rng;
use common::gpu_ops::Cpu;
use common::llama_ops::LlamaOps;
use ndarray::{Array1, Array2};

/// f32 sums in another order than the f64 definitions, over rows of at most a few hundred
/// values of size about 1: a few ulps (1e-6), well under this on every backend.
const TOL: f64 = 2e-5;

fn random(rng: &mut Rng, rows: usize, cols: usize, scale: f64) -> Array2<f32> {
    Array2::from_shape_fn((rows, cols), |_| (rng.normal() * scale) as f32)
}

/// The largest error, relative to the value where it exceeds 1 and absolute below.
fn close<'a>(name: &str, backend: &str, ours: impl IntoIterator<Item = &'a f32>, want: &[f64], tol: f64) {
    let ours: Vec<f32> = ours.into_iter().copied().collect();
    assert_eq!(ours.len(), want.len(), "{backend} {name}: sizes differ");
    let err = ours.iter().zip(want).map(|(a, b)| (*a as f64 - b).abs() / b.abs().max(1.0)).fold(0.0, f64::max);
    assert!(err <= tol, "{backend} {name}: off by {err:.2e} (tolerance {tol:.0e})");
}

/// Causal attention of query head h for query i at position past + i over KV head g's keys and
/// values (S, ·): softmax over keys 0 ..= past + i of q·k/√d, then Σ weights · v. Returns
/// (weights over all S, output).
fn attend(q: &[f32], keys: &[Vec<f64>], values: &[Vec<f64>], visible: usize) -> (Vec<f64>, Vec<f64>) {
    let d = q.len();
    let scores: Vec<f64> =
        (0..visible).map(|j| (0..d).map(|e| q[e] as f64 * keys[j][e]).sum::<f64>() / (d as f64).sqrt()).collect();
    let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = scores.iter().map(|s| (s - m).exp()).sum();
    let mut w: Vec<f64> = scores.iter().map(|s| (s - m).exp() / z).collect();
    let out = (0..d).map(|e| (0..visible).map(|j| w[j] * values[j][e]).sum()).collect();
    w.resize(keys.len(), 0.0);
    (w, out)
}

async fn llama_kernels_match_their_definitions<B: LlamaOps>(b: &B) {
    let name = b.name();
    let mut rng = Rng::new(21);

    // RMSNorm: rows of 130 (two strides of the 64 threads, the second partial), one row far
    // from zero mean (RMSNorm does not centre it), and one so small that ε = 1e-6 weighs as
    // much as the mean square (ε in the wrong place moves it by 30 %).
    let mut x = random(&mut rng, 4, 130, 2.0);
    x.row_mut(1).mapv_inplace(|v| v + 20.0);
    x.row_mut(3).mapv_inplace(|v| v * 5e-4);
    let w = Array1::from_shape_fn(130, |i| 1.0 + i as f32 * 0.01);
    let eps = 1e-6;
    let mut want = Vec::new();
    for row in x.rows() {
        let ms = row.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / 130.0;
        want.extend(row.iter().zip(&w).map(|(&v, &g)| v as f64 / (ms + eps as f64).sqrt() * g as f64));
    }
    close("rms_norm", &name, &b.rms_norm(x.view(), &w, eps).await.unwrap(), &want, TOL);

    // Decoding's RMSNorm inside the product (1 and 3 rows, 67 columns: a partial workgroup of
    // 64): sums of 130 products of normalised values up to about 3, within 1e-4 as the layer
    // norm's fused product in tests/gpu/gpu_kernels.rs.
    let proj = random(&mut rng, 130, 67, 0.2);
    for m in [1, 3] {
        let rows = x.slice(ndarray::s![..m, ..]);
        let normed = Array2::from_shape_vec((4, 130), want.clone()).unwrap();
        let want: Vec<f64> = (0..m)
            .flat_map(|r| (0..67).map(move |j| (r, j)))
            .map(|(r, j)| (0..130).map(|i| normed[[r, i]] * proj[[i, j]] as f64).sum())
            .collect();
        let y = b.rms_norm_linear(rows, &w, eps, proj.view()).await.unwrap();
        close(&format!("rms_norm and linear, {m} rows"), &name, &y, &want, 1e-4);
    }

    // RoPE on rows laid out as the model's [Q | K | V]: 3 query heads and 1 key head of 8 are
    // turned, the value head is not. At positions from 0 and from 1000 (angles of 1000 rad).
    // Angles as Hugging Face computes them: θᵢ and position · θᵢ in f32, cos and sin here in
    // f64; both backends read the same f32 cos and sin, so they agree with this to a few ulps.
    let (d, theta) = (8, 10_000.0f64);
    let x = random(&mut rng, 5, 5 * d, 1.0);
    for past in [0, 1000] {
        let mut want = x.mapv(|v| v as f64);
        for (r, mut row) in want.rows_mut().into_iter().enumerate() {
            for h in 0..4 {
                for i in 0..d / 2 {
                    let inv = 1.0 / (theta as f32).powf((2 * i) as f32 / d as f32);
                    let a = ((past + r) as f32 * inv) as f64;
                    let (x1, x2) = (x[[r, h * d + i]] as f64, x[[r, h * d + i + d / 2]] as f64);
                    row[h * d + i] = x1 * a.cos() - x2 * a.sin();
                    row[h * d + i + d / 2] = x2 * a.cos() + x1 * a.sin();
                }
            }
        }
        let y = b.rope(x.view(), (d, 4), theta, past).await.unwrap();
        close(&format!("rope from position {past}"), &name, &y, want.as_slice().unwrap(), 2e-6);
        assert_eq!(y.slice(ndarray::s![.., 4 * d..]), x.slice(ndarray::s![.., 4 * d..]), "{name}: V is not turned");
    }

    // SwiGLU's gate over a range of g that includes large |g| (e⁻ᵍ overflows f32 past 88).
    let (t, f) = (3, 70);
    let mut gu = random(&mut rng, t, 2 * f, 1.0);
    for r in 0..t {
        for j in 0..f {
            gu[[r, j]] = (r * f + j) as f32 * 0.95 - 100.0;
        }
    }
    let want: Vec<f64> = (0..t * f)
        .map(|i| {
            let (g, u) = (gu[[i / f, i % f]] as f64, gu[[i / f, f + i % f]] as f64);
            g / (1.0 + (-g).exp()) * u
        })
        .collect();
    close("swiglu", &name, &b.swiglu(gu.view()).await.unwrap(), &want, 1e-6);

    // Grouped-query attention over a cache: 3 cached positions + 4 new ones (a prompt after a
    // prompt), then 1 new one (a decoding step), 2 rows to spare: groups of 3 (6 heads, 2 KV
    // heads), one KV head for all (multi-query), and one per head (multi-head, GPT-2's case);
    // and a long row (300 cached + 2: two tiles of 256 keys of the fused kernel) in groups of 2.
    let cases = [(6, 2, 8), (4, 1, 16), (3, 3, 8)].into_iter().flat_map(|h| [(h, 3, 4), (h, 8, 1)]);
    for ((n_head, n_kv, d), past, t) in cases.chain([((4, 2, 8), 300, 2)]) {
        let (qw, kvw) = (n_head * d, n_kv * d);
        let qkv = random(&mut rng, t, qw + 2 * kvw, 1.5);
        let cap = past + t + 2; // rows past the new ones stay as they were
        let (k0, v0) = (random(&mut rng, cap, kvw, 1.0), random(&mut rng, cap, kvw, 1.0));
        let ablate = 0b10; // head 1 knocked out
        let (y, k, v) = b.attention(qkv.view(), (k0.view(), v0.view()), past, (n_head, n_kv), ablate).await.unwrap();
        let what = format!("attention, {n_head} heads sharing {n_kv}, {t} after {past}");
        // The new keys and values land in rows past .. past + T, nothing else moves.
        let (mut want_k, mut want_v) = (k0.mapv(|x| x as f64), v0.mapv(|x| x as f64));
        for i in 0..t {
            for j in 0..kvw {
                want_k[[past + i, j]] = qkv[[i, qw + j]] as f64;
                want_v[[past + i, j]] = qkv[[i, qw + kvw + j]] as f64;
            }
        }
        close(&format!("{what}: keys cached"), &name, &k, want_k.as_slice().unwrap(), 0.0);
        close(&format!("{what}: values cached"), &name, &v, want_v.as_slice().unwrap(), 0.0);
        let w = b.attention_weights(qkv.view(), k.view(), past, (n_head, n_kv)).await.unwrap();
        let (mut want_y, mut want_w) = (vec![0.0; t * qw], Vec::new());
        for h in 0..n_head {
            // Query head h reads KV head h / (H / KV).
            let g = h / (n_head / n_kv);
            let cols = |m: &Array2<f64>| -> Vec<Vec<f64>> {
                (0..past + t).map(|j| (0..d).map(|e| m[[j, g * d + e]]).collect()).collect()
            };
            let (keys, values) = (cols(&want_k), cols(&want_v));
            for i in 0..t {
                let q: Vec<f32> = (0..d).map(|e| qkv[[i, h * d + e]]).collect();
                let (wts, out) = attend(&q, &keys, &values, past + i + 1);
                want_w.extend(wts);
                if h != 1 {
                    want_y[i * qw + h * d..i * qw + (h + 1) * d].copy_from_slice(&out);
                }
            }
        }
        close(&what, &name, &y, &want_y, TOL);
        close(&format!("{what}: weights"), &name, &w, &want_w, 1e-6);
        assert!(w.iter().zip(&want_w).all(|(a, b)| *b != 0.0 || *a == 0.0), "{name}: masked weights are exactly 0");
    }
}

#[test]
fn llama_kernels_match_their_definitions_on_the_cpu() {
    pollster::block_on(llama_kernels_match_their_definitions(&Cpu));
}

#[test]
fn llama_kernels_match_their_definitions_on_the_gpu() {
    if let Some(gpu) = common::gpu() {
        eprintln!("GPU: {}", gpu.name);
        pollster::block_on(llama_kernels_match_their_definitions(&gpu));
    }
}
