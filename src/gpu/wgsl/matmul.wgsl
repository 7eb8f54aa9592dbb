// Tiled matrix product with bias: C = A B + bias, or C += A B + bias when `accumulate` is set
// (the residual connection x ← x + f(x) written straight into x), or C = GELU(A B + bias) when
// `gelu` is set (the MLP's activation, applied before the value is stored).
// A is (M, K), B is (K, N) (the checkpoint's Conv1D layout: in × out), C is (M, N), row-major.
// CPU twin: `gpt2::ops::linear`.
//
// Each workgroup computes a 64 × 64 tile of C. The K dimension is walked in steps of 16: the
// workgroup copies a 64 × 16 slab of A and a 16 × 64 slab of B into workgroup memory once, and
// every thread then reads them 16 times, so each value of A and B comes from global memory
// once per tile instead of once per output. Each of the 16 × 16 threads keeps a 4 × 4 block of C
// in registers.

struct Params { m: u32, n: u32, k: u32, accumulate: u32, gelu: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
// WEIGHT is f32, or f16 on adapters with `shader-f16` (`kernels::weight_header`): half the
// bytes to read, summed in f32 all the same.
@group(0) @binding(2) var<storage, read> b: array<WEIGHT>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;

const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 16u;

var<workgroup> a_tile: array<f32, 1024>; // [k][m]: BK × BM
var<workgroup> b_tile: array<f32, 1024>; // [k][n]: BK × BN

@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let row0 = wid.y * BM;
    let col0 = wid.x * BN;
    let tid = lid.y * 16u + lid.x;
    var acc: array<f32, 16>;
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        // 256 threads load 1024 values of each slab, 4 each; out-of-range values are 0.
        for (var i = 0u; i < 4u; i++) {
            let idx = tid + i * 256u;
            let r = idx / BK;
            let ka = idx % BK;
            var av = 0.0;
            if (row0 + r < p.m && k0 + ka < p.k) {
                av = a[(row0 + r) * p.k + k0 + ka];
            }
            a_tile[ka * BM + r] = av;
            let kb = idx / BN;
            let cb = idx % BN;
            var bv = 0.0;
            if (k0 + kb < p.k && col0 + cb < p.n) {
                bv = f32(b[(k0 + kb) * p.n + col0 + cb]);
            }
            b_tile[kb * BN + cb] = bv;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk++) {
            var ar: array<f32, 4>;
            var br: array<f32, 4>;
            for (var i = 0u; i < 4u; i++) {
                ar[i] = a_tile[kk * BM + lid.y * 4u + i];
                br[i] = b_tile[kk * BN + lid.x * 4u + i];
            }
            for (var i = 0u; i < 4u; i++) {
                for (var j = 0u; j < 4u; j++) {
                    acc[i * 4u + j] = fma(ar[i], br[j], acc[i * 4u + j]);
                }
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i++) {
        let r = row0 + lid.y * 4u + i;
        for (var j = 0u; j < 4u; j++) {
            let col = col0 + lid.x * 4u + j;
            if (r < p.m && col < p.n) {
                var v = acc[i * 4u + j] + bias[col];
                if (p.gelu != 0u) {
                    v = gelu_new(v);
                }
                if (p.accumulate != 0u) {
                    v += c[r * p.n + col];
                }
                c[r * p.n + col] = v;
            }
        }
    }
}
