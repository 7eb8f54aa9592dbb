// Scaled attention scores of every head, for drawing the weights (the fused kernel in
// attention.wgsl never stores them): s[h, i, j] = q_i · k_j / √d for the T new queries and all
// S = past + T keys. Masked entries (j > past + i) are left for softmax.wgsl to zero.
// CPU twin: the first line of `gpt2::ops::causal_attention`.

struct Params { t: u32, past: u32, n_head: u32, hd: u32, c: u32, s: u32, scale: f32, pad: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;
@group(0) @binding(2) var<storage, read> k_cache: array<f32>;
@group(0) @binding(3) var<storage, read_write> scores: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = wid.x;
    let h = wid.y;
    let col = h * p.hd;
    let row = (h * p.t + i) * p.s;
    for (var j = lid.x; j < p.s; j += 64u) {
        var s = 0.0;
        for (var d = 0u; d < p.hd; d++) {
            s = fma(qkv[i * 3u * p.c + col + d], k_cache[j * p.c + col + d], s);
        }
        scores[row + j] = s * p.scale;
    }
}
