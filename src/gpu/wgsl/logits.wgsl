// Logits against the tied embedding table: out[m, v] = Σ_c h[m, c] · wte[v, c].
// h is (M, C), wte is (V, C) (one row per token, as stored), out is (M, V).
// CPU twin: `gpt2::ops::tied_logits`.
//
// The table is read in place, never transposed: each workgroup takes 8 vocabulary rows, and 32
// threads share each row, thread `lane` reading columns lane, lane + 32, … (neighbouring
// threads read neighbouring addresses), before the 32 partial sums are added in a tree.
// The table may come in chunks of rows (see embed.wgsl): this dispatch holds rows
// v0 .. v0 + rows of the V and writes those columns of `out`.

struct Params { m: u32, v: u32, c: u32, v0: u32, rows: u32, pad0: u32, pad1: u32, pad2: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> h: array<f32>;
@group(0) @binding(2) var<storage, read> wte: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(32, 8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let lane = lid.x;
    let v = wid.x * 8u + lid.y; // row within the chunk
    let m = wid.y;
    var sum = 0.0;
    if (v < p.rows) {
        for (var c = lane; c < p.c; c += 32u) {
            sum = fma(h[m * p.c + c], wte[v * p.c + c], sum);
        }
    }
    let slot = lid.y * 32u + lane;
    partial[slot] = sum;
    workgroupBarrier();
    for (var stride = 16u; stride > 0u; stride /= 2u) {
        if (lane < stride) {
            partial[slot] += partial[slot + stride];
        }
        workgroupBarrier();
    }
    if (lane == 0u && v < p.rows) {
        out[m * p.v + p.v0 + v] = partial[slot];
    }
}
