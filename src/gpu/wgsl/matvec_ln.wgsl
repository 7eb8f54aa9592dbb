// Layer norm, then the matrix-vector product: C = LN(A) B + bias, with matvec.wgsl's epilogues
// (C += … with `accumulate`, C = GELU(…) with `gelu`). A is (M, K) with K = C of the model,
// B is (K, N), C is (M, N); LN(A) = γ ⊙ (A − μ) / √(σ² + ε) + β over each row.
// CPU twin: `gpt2::ops::layer_norm`, then `gpt2::ops::linear`. With `rms` set the norm is
// RMSNorm instead (the Llama family's): μ = 0 and β = 0, so LN(A) = γ ⊙ A / √(mean(A²) + ε);
// CPU twin `llama::ops::rms_norm`, then the product (`llama::weights::Linear::apply`).
//
// When decoding, each layer norm normalises one row right before a product reads it. Here every
// workgroup normalises its row itself, on the fly: two sums over K values (the mean, then the
// variance around it, as layer_norm.wgsl), a few microseconds of arithmetic, where a dispatch
// of its own costs a fixed overhead on a real GPU and a trip of the row through memory. The
// product is then matvec.wgsl's: 64 columns × 4 slices of K per workgroup of 256 threads.

struct Params { m: u32, n: u32, k: u32, accumulate: u32, gelu: u32, eps: f32, rms: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
// WEIGHT is f32, or f16 on adapters with `shader-f16` (`kernels::weight_header`).
@group(0) @binding(2) var<storage, read> b: array<WEIGHT>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;
@group(0) @binding(5) var<storage, read> gamma: array<f32>;
@group(0) @binding(6) var<storage, read> beta: array<f32>;

var<workgroup> partial: array<f32, 256>;

// The sum of `v` over the 256 threads, for every thread (a tree of 8 halvings). Call from
// uniform control flow; the last barrier lets `partial` be reused.
fn block_sum(tid: u32, v: f32) -> f32 {
    partial[tid] = v;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride /= 2u) {
        if (tid < stride) {
            partial[tid] += partial[tid + stride];
        }
        workgroupBarrier();
    }
    let total = partial[0];
    workgroupBarrier();
    return total;
}

@compute @workgroup_size(64, 4)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let col = wid.x * 64u + lid.x;
    let row = wid.y;
    let tid = lid.y * 64u + lid.x;
    let base = row * p.k;
    var mean = 0.0;
    if (p.rms == 0u) { // uniform: every thread takes the same branch, barriers included
        var s = 0.0;
        for (var k = tid; k < p.k; k += 256u) {
            s += a[base + k];
        }
        mean = block_sum(tid, s) / f32(p.k);
    }
    var q = 0.0;
    for (var k = tid; k < p.k; k += 256u) {
        let d = a[base + k] - mean;
        q = fma(d, d, q);
    }
    let inv = inverseSqrt(block_sum(tid, q) / f32(p.k) + p.eps);
    var sum = 0.0;
    if (col < p.n) {
        for (var k = lid.y; k < p.k; k += 4u) {
            let x = (a[base + k] - mean) * inv * gamma[k] + beta[k];
            sum = fma(x, f32(b[k * p.n + col]), sum);
        }
    }
    partial[tid] = sum;
    workgroupBarrier();
    if (lid.y == 0u && col < p.n) {
        var v = partial[lid.x] + partial[64u + lid.x] + partial[128u + lid.x] + partial[192u + lid.x] + bias[col];
        if (p.gelu != 0u) {
            v = gelu_new(v);
        }
        if (p.accumulate != 0u) {
            v += c[row * p.n + col];
        }
        c[row * p.n + col] = v;
    }
}
