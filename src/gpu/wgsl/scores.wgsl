// Scaled attention scores of every head, for drawing the weights (the fused kernel in
// attention.wgsl never stores them): s[h, i, j] = q_i · k_j / √d for the T new queries and all
// S = past + T keys. Masked entries (j > past + i) are left for softmax.wgsl to zero.
// CPU twin: the first line of `gpt2::ops::causal_attention`.
// Grouped-query attention as in attention.wgsl: qkv rows are [Q | K | V], C + 2W wide, the cache
// rows W = n_kv · d wide, and query head h reads KV head h / (H / n_kv); `n_kv` = 0 means one
// KV head per query head (GPT-2).

struct Params { t: u32, past: u32, n_head: u32, hd: u32, c: u32, s: u32, scale: f32, n_kv: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;
@group(0) @binding(2) var<storage, read> k_cache: array<f32>;
@group(0) @binding(3) var<storage, read_write> scores: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = wid.x;
    let h = wid.y;
    let col = h * p.hd;
    let n_kv = select(p.n_kv, p.n_head, p.n_kv == 0u);
    let kv_w = n_kv * p.hd;
    let kv_col = (h / (p.n_head / n_kv)) * p.hd;
    let row = (h * p.t + i) * p.s;
    for (var j = lid.x; j < p.s; j += 64u) {
        var s = 0.0;
        for (var d = 0u; d < p.hd; d++) {
            s = fma(qkv[i * (p.c + 2u * kv_w) + col + d], k_cache[j * kv_w + kv_col + d], s);
        }
        scores[row + j] = s * p.scale;
    }
}
