// The same product as matmul.wgsl for a few rows of A (decoding with the KV cache has M = 1):
// C = A B + bias (or C += … with `accumulate`, or C = GELU(A B + bias) with `gelu`).
// A is (M, K), B is (K, N), C is (M, N).
// CPU twin: `gpt2::ops::linear`.
//
// A 64 × 64 tile would compute 63 rows of nothing when M = 1. Here each workgroup owns 64
// columns of one row of C. Its 256 threads are 64 columns × 4 slices of K: thread (j, s) sums
// A[m, k] B[k, j] over k ≡ s (mod 4), reading B row by row so neighbouring threads read
// neighbouring addresses, and the 4 partial sums are then added in workgroup memory.

struct Params { m: u32, n: u32, k: u32, accumulate: u32, gelu: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
// WEIGHT is f32, or f16 on adapters with `shader-f16` (`kernels::weight_header`): half the
// bytes to read, summed in f32 all the same.
@group(0) @binding(2) var<storage, read> b: array<WEIGHT>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(64, 4)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let col = wid.x * 64u + lid.x;
    let row = wid.y;
    var sum = 0.0;
    if (col < p.n) {
        for (var k = lid.y; k < p.k; k += 4u) {
            sum = fma(a[row * p.k + k], f32(b[k * p.n + col]), sum);
        }
    }
    partial[lid.y * 64u + lid.x] = sum;
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
