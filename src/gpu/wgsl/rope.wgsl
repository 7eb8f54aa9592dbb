// RoPE in place, in Hugging Face's `rotate_half` convention: in each head of width D,
// dimension i pairs with dimension i + D/2 (the two halves, not adjacent pairs), and the pair
// turns by the angle aᵢ = position · θᵢ:
//   x′ᵢ       = xᵢ cos aᵢ − xᵢ₊D/2 sin aᵢ
//   x′ᵢ₊D/2 = xᵢ₊D/2 cos aᵢ + xᵢ sin aᵢ
// CPU twin: `llama::ops::Rope::apply`.
//
// x holds T rows of `stride` floats; the first `heads` heads of each row are turned (in the
// model's fused [Q | K | V] rows: the H query heads and the KV key heads, not the values).
// Row r is at position past + r.
//
// The angles' cos and sin come from the host (`table`, (T, D): row r is [cos aᵢ | sin aᵢ] for
// row r's position), computed by the twin's `Rope::new`, in f32 as Hugging Face does. WGSL's
// own cos and sin promise only an absolute error of 2⁻¹¹ on [−π, π] and nothing outside it:
// far too little at position 1000, where a(0) = 1000 radians.
//
// One thread per (row, head, pair): each pair is read and written by one thread only.

struct Params { t: u32, stride: u32, heads: u32, hd: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> table: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let half = p.hd / 2u;
    let idx = gid.x;
    if (idx >= p.t * p.heads * half) {
        return;
    }
    let i = idx % half;
    let h = (idx / half) % p.heads;
    let r = idx / (half * p.heads);
    let c = table[r * p.hd + i];
    let s = table[r * p.hd + half + i];
    let a = r * p.stride + h * p.hd + i;
    let b = a + half;
    let x1 = x[a];
    let x2 = x[b];
    x[a] = x1 * c - x2 * s;
    x[b] = x2 * c + x1 * s;
}
