// Shrinks each head's (T, S) weight matrix to (R, K) thumbnails for the model view: each cell is
// the largest weight of its block, so a sharp weight stays visible in a small picture.
// w is (H, T, S); out gets (H, R, K) at element `offset`. CPU twin: `numerics::attention::max_pool_into`.
// Block a of the rows is a·T/R .. max((a+1)·T/R, a·T/R + 1), and likewise for columns.

struct Params { h: u32, t: u32, s: u32, r: u32, k: u32, offset: u32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = gid.x;
    if (idx >= p.h * p.r * p.k) {
        return;
    }
    let head = idx / (p.r * p.k);
    let a = (idx / p.k) % p.r;
    let b = idx % p.k;
    let i0 = a * p.t / p.r;
    let i1 = max((a + 1u) * p.t / p.r, i0 + 1u);
    let j0 = b * p.s / p.k;
    let j1 = max((b + 1u) * p.s / p.k, j0 + 1u);
    var m = 0.0;
    for (var i = i0; i < i1; i++) {
        for (var j = j0; j < j1; j++) {
            m = max(m, w[(head * p.t + i) * p.s + j]);
        }
    }
    out[p.offset + idx] = m;
}
