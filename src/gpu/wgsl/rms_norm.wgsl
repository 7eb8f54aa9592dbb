// RMSNorm of each row (Llama's `LlamaRMSNorm`): y = w ⊙ x / √(mean(x²) + ε), no centring and
// no bias. y is (rows, n), normalising rows row0 .. row0 + rows of x (the final norm takes only
// the rows whose logits are wanted). CPU twin: `llama::ops::rms_norm`.
//
// One workgroup per row: 64 threads add strided squares, then a tree adds the 64 partial sums
// (`wgsl/reduce.wgsl`). The twin sums in f64; f32 here loses a few ulps of the mean over the
// rows the models have (a relative 1e-7), far below the tests' tolerances.

struct Params { rows: u32, n: u32, eps: f32, row0: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let t = lid.x;
    let base = (p.row0 + wid.x) * p.n;
    let out = wid.x * p.n;
    var s = 0.0;
    for (var i = t; i < p.n; i += 64u) {
        let v = x[base + i];
        s = fma(v, v, s);
    }
    let inv = inverseSqrt(workgroup_sum(t, s) / f32(p.n) + p.eps);
    for (var i = t; i < p.n; i += 64u) {
        // The twin's order: w · (x · inv).
        y[out + i] = weight[i] * (x[base + i] * inv);
    }
}
