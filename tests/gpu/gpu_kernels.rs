//! Every kernel on every backend: one test body (`kernels_match_their_definitions`) runs on the
//! CPU twins and on the GPU (Mesa's lavapipe here and in CI), each result checked against the
//! kernel's definition written out below as plain loops in f64.
//!
//! The test command fails the GPU run where no adapter exists (`common::gpu`).

use crate::common;
use attention_live::gpt2::weights::{LayerNorm, Linear};
use attention_live::gpu::kernels::Act;
use attention_live::numerics::rng::Rng;
use common::gpu_ops::{linear_in, Cpu, Ops};
use ndarray::{Array1, Array2, Array3};

/// f32 sums in another order than the f64 definitions: well under this on every backend.
const TOL: f32 = 2e-5;

fn random(rng: &mut Rng, rows: usize, cols: usize, scale: f64) -> Array2<f32> {
    Array2::from_shape_fn((rows, cols), |_| (rng.normal() * scale) as f32)
}

fn close(name: &str, backend: &str, ours: &[f32], want: &[f64], tol: f32) {
    assert_eq!(ours.len(), want.len(), "{backend} {name}: sizes differ");
    let err = ours.iter().zip(want).map(|(a, b)| (*a as f64 - b).abs() as f32).fold(0.0, f32::max);
    assert!(err <= tol, "{backend} {name}: off by {err} (tolerance {tol})");
}

fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh())
}

/// Attention of head h for query row i, as the formula reads: softmax over keys 0..=past+sees of
/// q·k/√d, then Σ weights · v (causal: sees = i, the query at position past + i). Returns
/// (weights over S, output).
fn attend(
    qkv: &Array2<f32>,
    k: &Array2<f32>,
    v: &Array2<f32>,
    past: usize,
    n_head: usize,
    (h, sees, i): (usize, usize, usize),
) -> (Vec<f64>, Vec<f64>) {
    let c = k.ncols();
    let hd = c / n_head;
    let s_len = past + qkv.nrows();
    let visible = past + sees + 1;
    let scores: Vec<f64> = (0..visible)
        .map(|j| {
            (0..hd).map(|d| qkv[[i, h * hd + d]] as f64 * k[[j, h * hd + d]] as f64).sum::<f64>() / (hd as f64).sqrt()
        })
        .collect();
    let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = scores.iter().map(|s| (s - m).exp()).sum();
    let mut w: Vec<f64> = scores.iter().map(|s| (s - m).exp() / z).collect();
    let out = (0..hd).map(|d| (0..visible).map(|j| w[j] * v[[j, h * hd + d]] as f64).sum()).collect();
    w.resize(s_len, 0.0);
    (w, out)
}

async fn kernels_match_their_definitions<B: Ops>(b: &B) {
    let name = b.name();
    let mut rng = Rng::new(7);

    // linear: 3 row counts cover the matrix-vector kernel (1, 3 rows) and the tiled one (70 rows:
    // two tiles of rows, the second partial); 67 columns leave a partial tile of columns.
    for m in [1, 3, 70] {
        let (k, n) = (45, 67);
        let x = random(&mut rng, m, k, 1.0);
        let lin = Linear::new(random(&mut rng, k, n, 0.2), Array1::from_shape_fn(n, |j| j as f32 * 0.01));
        let y0 = random(&mut rng, m, n, 1.0);
        let want = |acc: bool| -> Vec<f64> {
            let mut out = Vec::new();
            for r in 0..m {
                for j in 0..n {
                    let dot: f64 = (0..k).map(|i| x[[r, i]] as f64 * lin.weight()[[i, j]] as f64).sum();
                    out.push(dot + lin.bias[j] as f64 + if acc { y0[[r, j]] as f64 } else { 0.0 });
                }
            }
            out
        };
        let y = b.linear(x.view(), &lin, None).await.unwrap();
        close(&format!("linear {m}x{k}x{n}"), &name, y.as_slice().unwrap(), &want(false), TOL);
        let y = b.linear(x.view(), &lin, Some(y0.view())).await.unwrap();
        close(&format!("linear {m}x{k}x{n} accumulated"), &name, y.as_slice().unwrap(), &want(true), TOL);
        let y = b.linear_gelu(x.view(), &lin).await.unwrap();
        let want_gelu: Vec<f64> = want(false).into_iter().map(gelu).collect();
        close(&format!("linear {m}x{k}x{n} with GELU"), &name, y.as_slice().unwrap(), &want_gelu, TOL);
        if m <= 4 {
            // Decoding's layer norm inside the product, on rows far from zero mean.
            let x = x.mapv(|v| v * 2.0 + 5.0);
            let ln = LayerNorm {
                weight: Array1::from_shape_fn(k, |i| 1.0 + i as f32 * 0.02),
                bias: Array1::from_shape_fn(k, |i| 0.1 - i as f32 * 0.01),
            };
            let mut want = Vec::new();
            for r in 0..m {
                let mean = (0..k).map(|i| x[[r, i]] as f64).sum::<f64>() / k as f64;
                let var = (0..k).map(|i| (x[[r, i]] as f64 - mean).powi(2)).sum::<f64>() / k as f64;
                let normed: Vec<f64> = (0..k)
                    .map(|i| (x[[r, i]] as f64 - mean) / (var + 1e-5).sqrt() * ln.weight[i] as f64 + ln.bias[i] as f64)
                    .collect();
                for j in 0..n {
                    let dot: f64 = (0..k).map(|i| normed[i] * lin.weight()[[i, j]] as f64).sum();
                    want.push(dot + lin.bias[j] as f64);
                }
            }
            let y = b.norm_linear(x.view(), &ln, 1e-5, &lin).await.unwrap();
            close(&format!("layer norm and linear {m}x{k}x{n}"), &name, y.as_slice().unwrap(), &want, 1e-4);
        }
    }

    // logits against a (V, C) table with V not a multiple of the 8 rows per workgroup.
    let (h, wte) = (random(&mut rng, 2, 40, 1.0), random(&mut rng, 101, 40, 0.3));
    let want: Vec<f64> = (0..2)
        .flat_map(|r| (0..101).map(move |v| (r, v)))
        .map(|(r, v)| (0..40).map(|c| h[[r, c]] as f64 * wte[[v, c]] as f64).sum())
        .collect();
    close("logits", &name, b.logits(h.view(), wte.view()).await.unwrap().as_slice().unwrap(), &want, TOL);

    // layer norm on rows with a large common offset (the two-pass variance keeps it exact).
    let x = random(&mut rng, 5, 130, 2.0).mapv(|v| v + 50.0);
    let ln = LayerNorm {
        weight: Array1::from_shape_fn(130, |i| 1.0 + i as f32 * 0.01),
        bias: Array1::from_shape_fn(130, |i| -(i as f32) * 0.02),
    };
    let mut want = Vec::new();
    for row in x.rows() {
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / 130.0;
        let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / 130.0;
        for (i, &v) in row.iter().enumerate() {
            want.push((v as f64 - mean) / (var + 1e-5).sqrt() * ln.weight[i] as f64 + ln.bias[i] as f64);
        }
    }
    close("layer_norm", &name, b.layer_norm(x.view(), &ln, 1e-5).await.unwrap().as_slice().unwrap(), &want, 1e-4);

    // GELU over a range that includes large |x| (where tanh saturates).
    let x = Array2::from_shape_fn((3, 100), |(r, c)| (r as f32 * 100.0 + c as f32 - 150.0) * 0.2);
    let want: Vec<f64> = x.iter().map(|&v| gelu(v as f64)).collect();
    close("gelu", &name, b.activation(x.view(), Act::GeluNew).await.unwrap().as_slice().unwrap(), &want, 1e-5);
    // The translation model's activations, against their formulas in f64.
    type Formula = fn(f64) -> f64;
    let formulas: [(Act, Formula); 3] = [
        (Act::Relu, |v| v.max(0.0)),
        (Act::Silu, |v| v / (1.0 + (-v).exp())),
        (Act::Gelu, |v| 0.5 * v * (1.0 + libm::erf(v / std::f64::consts::SQRT_2))),
    ];
    for (act, f) in formulas {
        let want: Vec<f64> = x.iter().map(|&v| f(v as f64)).collect();
        close(&format!("{act:?}"), &name, b.activation(x.view(), act).await.unwrap().as_slice().unwrap(), &want, 1e-5);
    }

    // embeddings at positions 3 .. 3 + 4
    let (wte, wpe) = (random(&mut rng, 20, 16, 1.0), random(&mut rng, 10, 16, 1.0));
    let ids = [5u32, 0, 19, 5];
    let want: Vec<f64> = ids
        .iter()
        .enumerate()
        .flat_map(|(t, &id)| (0..16).map(move |c| (t, id, c)))
        .map(|(t, id, c)| wte[[id as usize, c]] as f64 + wpe[[3 + t, c]] as f64)
        .collect();
    close("embed", &name, b.embed(&ids, wte.view(), wpe.view(), 3).await.unwrap().as_slice().unwrap(), &want, 1e-6);

    // Attention over a cache: 3 heads of 8, 2 cached positions + 5 new ones, capacity 9.
    let (n_head, c, past, t) = (3, 24, 2, 5);
    let qkv = random(&mut rng, t, 3 * c, 1.5);
    let (k0, v0) = (random(&mut rng, 9, c, 1.0), random(&mut rng, 9, c, 1.0));
    let (k, v) = b.kv_append(qkv.view(), k0.view(), v0.view(), past).await.unwrap();
    let mut want_k = k0.mapv(|x| x as f64);
    let mut want_v = v0.mapv(|x| x as f64);
    for i in 0..t {
        for j in 0..c {
            want_k[[past + i, j]] = qkv[[i, c + j]] as f64;
            want_v[[past + i, j]] = qkv[[i, 2 * c + j]] as f64;
        }
    }
    close("kv_append keys", &name, k.as_slice().unwrap(), want_k.as_slice().unwrap(), 0.0);
    close("kv_append values", &name, v.as_slice().unwrap(), want_v.as_slice().unwrap(), 0.0);
    let ablate = 0b010; // head 1 knocked out
    let y = b.attention(qkv.view(), k.view(), v.view(), past, n_head, ablate).await.unwrap();
    let w = b.attention_weights(qkv.view(), k.view(), past, n_head).await.unwrap();
    let mut want_y = Array2::<f64>::zeros((t, c));
    let mut want_w = Array3::<f64>::zeros((n_head, t, past + t));
    for h in 0..n_head {
        for i in 0..t {
            let (wts, out) = attend(&qkv, &k, &v, past, n_head, (h, i, i));
            for (j, x) in wts.iter().enumerate() {
                want_w[[h, i, j]] = *x;
            }
            if h != 1 {
                for (d, x) in out.iter().enumerate() {
                    want_y[[i, h * 8 + d]] = *x;
                }
            }
        }
    }
    close("attention", &name, y.as_slice().unwrap(), want_y.as_slice().unwrap(), TOL);
    close("attention weights", &name, w.as_slice().unwrap(), want_w.as_slice().unwrap(), 1e-6);
    assert!(
        w.iter().zip(want_w.iter()).all(|(a, b)| (*b != 0.0) || *a == 0.0),
        "{name}: masked weights must be exactly 0"
    );

    // The translation model's attention, weights written out: over the 7 positions just cached,
    // without a mask (every query sees every key) and causal over the last 5, head 2 knocked out.
    let s_len = past + t;
    let (k7, v7) = (k.slice(ndarray::s![..s_len, ..]), v.slice(ndarray::s![..s_len, ..]));
    for causal in [false, true] {
        let (y, w) = b.attend(qkv.view(), k7, v7, n_head, causal, 0b100).await.unwrap();
        let what = if causal { "attend, causal" } else { "attend, no mask" };
        for h in 0..n_head {
            for i in 0..t {
                // Without a mask, query i sees what the last query of a causal pass sees: all S keys.
                let (wts, out) = attend(&qkv, &k, &v, past, n_head, (h, if causal { i } else { t - 1 }, i));
                close(what, &name, w.slice(ndarray::s![h, i, ..]).as_slice().unwrap(), &wts, 1e-6);
                let want = if h == 2 { vec![0.0; out.len()] } else { out };
                let hd = c / n_head;
                close(what, &name, y.slice(ndarray::s![i, h * hd..(h + 1) * hd]).as_slice().unwrap(), &want, TOL);
            }
        }
    }
    // Past the kernel's 64 threads: 150 keys (each thread scores three), the queries from a matrix
    // of Q alone (rows C apart), two heads of 8.
    let (n_head, c, t, s_len) = (2, 16, 3, 150);
    let q = random(&mut rng, t, c, 1.5);
    let (k, v) = (random(&mut rng, s_len, c, 1.0), random(&mut rng, s_len, c, 1.0));
    for causal in [false, true] {
        let (y, w) = b.attend(q.view(), k.view(), v.view(), n_head, causal, 0).await.unwrap();
        for h in 0..n_head {
            for i in 0..t {
                let (wts, out) = attend(&q, &k, &v, s_len - t, n_head, (h, if causal { i } else { t - 1 }, i));
                close("attend, 150 keys", &name, w.slice(ndarray::s![h, i, ..]).as_slice().unwrap(), &wts, 1e-6);
                close(
                    "attend, 150 keys",
                    &name,
                    y.slice(ndarray::s![i, h * 8..(h + 1) * 8]).as_slice().unwrap(),
                    &out,
                    TOL,
                );
            }
        }
    }

    // A long causal row (600 keys: three 256-key tiles of the fused kernel, whose running
    // maximum must be rescaled) with a sharp score far from the first tile.
    let (n_head, c, t) = (1, 16, 600);
    let mut qkv = random(&mut rng, t, 3 * c, 1.0);
    for d in 0..c {
        qkv[[550, c + d]] = qkv[[599, d]] * 4.0; // key 550 matches the last query strongly
    }
    let (k0, v0) = (Array2::zeros((t, c)), Array2::zeros((t, c)));
    let (k, v) = b.kv_append(qkv.view(), k0.view(), v0.view(), 0).await.unwrap();
    let y = b.attention(qkv.view(), k.view(), v.view(), 0, n_head, 0).await.unwrap();
    for i in [0, 255, 256, 599] {
        let (_, out) = attend(&qkv, &k, &v, 0, 1, (0, i, i));
        close(
            &format!("attention over {} tiles, row {i}", i / 256 + 1),
            &name,
            y.row(i).as_slice().unwrap(),
            &out,
            TOL,
        );
    }

    // Softmax: plain rows with large scores (max-subtract), and causal rows.
    let x = random(&mut rng, 4, 70, 30.0);
    let want: Vec<f64> = x
        .rows()
        .into_iter()
        .flat_map(|row| {
            let m = row.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)) as f64;
            let z: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
            row.iter().map(move |&v| (v as f64 - m).exp() / z).collect::<Vec<_>>()
        })
        .collect();
    close("softmax", &name, b.softmax(x.view(), None).await.unwrap().as_slice().unwrap(), &want, 1e-6);
    let x = random(&mut rng, 6, 5, 1.0); // 2 heads × 3 queries at positions 2, 3, 4
    let sm = b.softmax(x.view(), Some((3, 2))).await.unwrap();
    for (r, row) in sm.rows().into_iter().enumerate() {
        let valid = 2 + r % 3 + 1;
        assert!((row.iter().map(|&v| v as f64).sum::<f64>() - 1.0).abs() < 1e-5, "{name}: causal row {r} sums to 1");
        assert!(row.iter().skip(valid).all(|&v| v == 0.0), "{name}: causal row {r} is 0 after {valid} entries");
    }
}

#[test]
fn kernels_match_their_definitions_on_the_cpu() {
    pollster::block_on(kernels_match_their_definitions(&Cpu));
}

#[test]
fn kernels_match_their_definitions_on_the_gpu() {
    if let Some(gpu) = common::gpu() {
        eprintln!("GPU: {}", gpu.name);
        pollster::block_on(kernels_match_their_definitions(&gpu));
    }
}

/// f16 weights (the `matmul_f16` and `matvec_f16` kernels) against their CPU twin: the same
/// product with every weight rounded to f16, in f64. Where the adapter lacks `shader-f16` the
/// weights stay f32 and the f32 definition applies.
#[test]
fn f16_weight_products_match_their_cpu_twin() {
    use attention_live::gpu::Precision;
    use common::gpu_ops::round_linear_to_f16;
    let Some(gpu) = common::gpu().filter(common::has_f16) else { return };
    let mut rng = Rng::new(16);
    for (m, k, n) in [(1, 64, 96), (3, 77, 130), (70, 33, 65)] {
        let x = random(&mut rng, m, k, 1.0);
        let lin = Linear::new(random(&mut rng, k, n, 0.2), Array1::from_shape_fn(n, |j| j as f32 * 0.01));
        let twin = round_linear_to_f16(&lin);
        // The rounding is real: about 3 decimal digits per weight.
        assert!(twin.weight().iter().zip(lin.weight().iter()).any(|(a, b)| a != b));
        let want: Vec<f64> = (0..m)
            .flat_map(|r| (0..n).map(move |j| (r, j)))
            .map(|(r, j)| {
                (0..k).map(|i| x[[r, i]] as f64 * twin.weight()[[i, j]] as f64).sum::<f64>() + twin.bias[j] as f64
            })
            .collect();
        let y = pollster::block_on(linear_in(&gpu, x.view(), &lin, None, Precision::F16)).unwrap();
        close(&format!("f16 linear {m}x{k}x{n}"), &gpu.name, y.as_slice().unwrap(), &want, TOL);
        // …and it is the rounding, not the kernel, that separates it from the f32 product.
        let exact: Vec<f64> = (0..m)
            .flat_map(|r| (0..n).map(move |j| (r, j)))
            .map(|(r, j)| {
                (0..k).map(|i| x[[r, i]] as f64 * lin.weight()[[i, j]] as f64).sum::<f64>() + lin.bias[j] as f64
            })
            .collect();
        let gap = y.iter().zip(&exact).map(|(a, b)| (*a as f64 - b).abs()).fold(0.0, f64::max);
        assert!(gap > 1e-5 && gap < 1e-2, "f16 vs f32 product: {gap}");
    }
}

/// `(name, type)` of each field of the `struct Params` a WGSL file declares, in order.
fn wgsl_params(source: &str) -> Option<Vec<(String, String)>> {
    let body = source.split("struct Params {").nth(1)?.split('}').next()?;
    let fields = body.split(',').map(str::trim).filter(|f| !f.is_empty());
    Some(
        fields
            .map(|f| {
                let (name, ty) = f.split_once(':').expect("a field is `name: type`");
                (name.trim().to_string(), ty.trim().to_string())
            })
            .collect(),
    )
}

/// Every kernel's typed parameters against its WGSL's `struct Params`: the same names, in the
/// same order, of the same types, and the Rust struct the size the WGSL one is (4 bytes a field,
/// no padding between); every WGSL file that declares parameters has its struct.
#[test]
fn each_kernels_params_struct_matches_its_wgsl() {
    use attention_live::gpu::params::ALL;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/gpu/wgsl");
    let mut covered = Vec::new();
    for (files, fields, size) in ALL {
        let ours: Vec<(String, String)> = fields.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
        assert_eq!(*size, 4 * fields.len(), "{files:?}: the struct is padded");
        for file in *files {
            let source = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
            let theirs = wgsl_params(&source).unwrap_or_else(|| panic!("{file} declares no struct Params"));
            assert_eq!(ours, theirs, "{file}: the Rust struct and the WGSL's differ");
            covered.push(file.to_string());
        }
    }
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if wgsl_params(&std::fs::read_to_string(&path).unwrap()).is_some() {
            assert!(covered.contains(&name), "{name} declares struct Params, but no Rust struct mirrors it");
        }
    }
}
