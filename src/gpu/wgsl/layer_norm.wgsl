// Layer norm of each row: y = γ ⊙ (x − μ) / √(σ² + ε) + β, with the biased variance (as
// PyTorch). y is (rows, n), normalising rows row0 .. row0 + rows of x (the final layer norm
// takes only the last rows, whose logits are wanted). CPU twin: `gpt2::ops::layer_norm`.
//
// One workgroup per row. The mean and then the variance are each a sum over the row: 64
// threads add strided elements, then a tree adds the 64 partial sums. Subtracting the mean
// before squaring (two passes, not E[x²] − E[x]²) keeps the variance accurate in f32.

struct Params { rows: u32, n: u32, eps: f32, row0: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> gamma: array<f32>;
@group(0) @binding(3) var<storage, read> beta: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let t = lid.x;
    let base = (p.row0 + wid.x) * p.n;
    let out = wid.x * p.n;
    var s = 0.0;
    for (var i = t; i < p.n; i += 64u) {
        s += x[base + i];
    }
    let mean = workgroup_sum(t, s) / f32(p.n);
    var q = 0.0;
    for (var i = t; i < p.n; i += 64u) {
        let d = x[base + i] - mean;
        q = fma(d, d, q);
    }
    let inv = inverseSqrt(workgroup_sum(t, q) / f32(p.n) + p.eps);
    for (var i = t; i < p.n; i += 64u) {
        y[out + i] = (x[base + i] - mean) * inv * gamma[i] + beta[i];
    }
}
