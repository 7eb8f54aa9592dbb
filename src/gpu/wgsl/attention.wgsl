// Fused causal attention with an online softmax (the FlashAttention idea): the T × S matrix of
// weights is never stored. CPU twins: `gpt2::ops::causal_attention` (naive, same result) and
// `numerics::flash::tiled_attention` (the same tiling and rescaling, step by step); per group of
// heads, `numerics::flash::causal_attention` as `llama::model` calls it.
//
// Inputs: qkv (T, C + 2W) = [Q | K | V] for the T new tokens at positions past .. past + T, and
// one layer's key and value caches (S ≥ past + T rows of W). Query head h owns columns
// h·d .. (h+1)·d of Q (C = H·d). Grouped-query attention: the H query heads share `n_kv` key
// and value heads (W = n_kv·d), and query head h reads KV head g = h / (H / n_kv), columns
// g·d .. (g+1)·d of K, V and the caches. `n_kv` = 0 means n_kv = H (multi-head attention, GPT-2:
// W = C and g = h). Output: y (T, C), head h's output in its columns (zeros when ablated).
//
// The new tokens' keys and values are read from qkv, and workgroup (i, h) of the first query
// head of each group also appends its row's slice of the group's K and V to the caches (the
// CPU twin `KvCache::append`; the same as kv_append.wgsl, one dispatch fewer per layer). No
// workgroup reads a cache row that another writes: rows below `past` are read, rows from
// `past` on are written.
//
// One workgroup per (query row i, head h); thread t of 64 scores keys t, t + 64, t + 128 and
// t + 192 of the current tile of 256 keys, and thread `d` accumulates output dimension d
// (d < 64: GPT-2's and SmolLM2's head size). Big tiles mean few workgroup barriers per key.
// Query i sees keys 0 ..= past + i. Over the tiles it keeps
//   m: the largest score so far,   l: Σ exp(score − m),   acc: Σ exp(score − m) · v[d].
// When a tile raises the maximum from m to m', the old sums are multiplied by exp(m − m'),
// which is what they would have been had m' been subtracted from the start. At the end
// y = acc / l = Σ softmax(scores) · v, exactly as the naive formula.

struct Params { t: u32, past: u32, n_head: u32, hd: u32, c: u32, ablate: u32, scale: f32, n_kv: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;
@group(0) @binding(2) var<storage, read_write> k_cache: array<f32>;
@group(0) @binding(3) var<storage, read_write> v_cache: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

const TILE: u32 = 256u;
const PER_THREAD: u32 = 4u;
// A finite stand-in for −∞ (WGSL has no infinity literal): exp(NEG - m) is exactly 0.
const NEG: f32 = -3.0e38;

var<workgroup> q: array<f32, 64>;
var<workgroup> probs: array<f32, 256>;

// The number of KV heads (0 stands for one per query head).
fn kv_heads() -> u32 {
    return select(p.n_kv, p.n_head, p.n_kv == 0u);
}

// The width W of a key row (all KV heads) and of a row of qkv.
fn kv_width() -> u32 {
    return kv_heads() * p.hd;
}

fn row_width() -> u32 {
    return p.c + 2u * kv_width();
}

// Element e (< W) of position j's key and value: from the caches for the positions before this
// call, from qkv for the new ones.
fn key(j: u32, e: u32) -> f32 {
    if (j < p.past) {
        return k_cache[j * kv_width() + e];
    }
    return qkv[(j - p.past) * row_width() + p.c + e];
}

fn value(j: u32, e: u32) -> f32 {
    if (j < p.past) {
        return v_cache[j * kv_width() + e];
    }
    return qkv[(j - p.past) * row_width() + p.c + kv_width() + e];
}

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = wid.x;
    let h = wid.y;
    let t = lid.x;
    let col = h * p.hd;
    let group = p.n_head / kv_heads();
    let kv_col = (h / group) * p.hd; // this head's KV head's columns
    let visible = p.past + i + 1u;
    // The query, pre-multiplied by 1/√d.
    if (t < p.hd) {
        let row = i * row_width();
        q[t] = qkv[row + col + t] * p.scale;
        if (h % group == 0u) {
            let dst = (p.past + i) * kv_width() + kv_col + t;
            k_cache[dst] = qkv[row + p.c + kv_col + t];
            v_cache[dst] = qkv[row + p.c + kv_width() + kv_col + t];
        }
    }
    workgroupBarrier();
    var m = NEG;
    var l = 0.0;
    var acc = 0.0;
    for (var j0 = 0u; j0 < visible; j0 += TILE) {
        // (1, d) x (d, TILE) -> (1, TILE): this thread's 4 scores; keys past `visible` are masked.
        var sc: array<f32, 4>;
        var local_max = NEG;
        for (var r = 0u; r < PER_THREAD; r++) {
            let j = j0 + r * 64u + t;
            var s = NEG;
            if (j < visible) {
                s = 0.0;
                for (var d = 0u; d < p.hd; d++) {
                    s = fma(q[d], key(j, kv_col + d), s);
                }
            }
            sc[r] = s;
            local_max = max(local_max, s);
        }
        let m_new = max(m, workgroup_max(t, local_max));
        var local_sum = 0.0;
        for (var r = 0u; r < PER_THREAD; r++) {
            var e = 0.0;
            if (j0 + r * 64u + t < visible) {
                e = exp(sc[r] - m_new);
            }
            probs[r * 64u + t] = e;
            local_sum += e;
        }
        let rescale = exp(m - m_new);
        l = l * rescale + workgroup_sum(t, local_sum);
        acc *= rescale;
        // (1, TILE) x (TILE, d) -> (1, d): thread t adds dimension t.
        if (t < p.hd) {
            let n = min(TILE, visible - j0);
            for (var jj = 0u; jj < n; jj++) {
                acc = fma(probs[jj], value(j0 + jj, kv_col + t), acc);
            }
        }
        m = m_new;
        workgroupBarrier(); // `probs` is rewritten by the next tile
    }
    if (t < p.hd) {
        var out = acc / l;
        if (((p.ablate >> h) & 1u) != 0u) {
            out = 0.0; // knocked out: the head's slice is zeroed before c_proj mixes the heads
        }
        y[i * p.c + col + t] = out;
    }
}
