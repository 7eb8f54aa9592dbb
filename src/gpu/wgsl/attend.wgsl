// Attention with its weights written out, for the translation model (`marian::gpu`): for T
// queries and the S keys and values of k and v ((S, C) each, C = H·d), head h's weights
// w[h, i, j] = softmax_j(scale · q_i · k_j) and its output y[i, h·d .. (h+1)·d] = Σ_j w[h, i, j] v_j,
// zeros for a head whose bit is set in `ablate`. Without `causal` every query sees every key (the
// encoder's self-attention, cross-attention); with it the T queries are the last T of the S
// positions and query i sees keys 0 ..= S − T + i (the decoder's self-attention over its cache),
// the other weights exactly 0. CPU twins: `numerics::flash::full_attention` and
// `numerics::flash::causal_attention`, head by head.
//
// Queries are rows row0 .. row0 + T of q, `q_stride` apart (rows of [Q | K | V], or of Q alone),
// and the outputs go to the same rows of y (rows of C): a beam's rows among several. The weights
// are (H, T, S). H is the dispatch's: one workgroup per (query i, head h), 64 threads; d ≤ 64.
//
// Thread t scores keys t, t + 64, …, keeping the scores in w, then the row's maximum and sum
// are reduced over the workgroup and each thread normalises its own entries; after a storage
// barrier thread t < d sums output dimension t over every key. Unlike attention.wgsl this is
// not fused: the weights are wanted, and the model is small.

struct Params { t: u32, s: u32, hd: u32, q_stride: u32, row0: u32, causal: u32, ablate: u32, scale: f32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<storage, read_write> w: array<f32>;

var<workgroup> qh: array<f32, 64>;

@compute @workgroup_size(64)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = wid.x;
    let h = wid.y;
    let t = lid.x;
    let c = groups.y * p.hd;
    let col = h * p.hd;
    if (t < p.hd) {
        qh[t] = q[(p.row0 + i) * p.q_stride + col + t];
    }
    workgroupBarrier();
    var valid = p.s;
    if (p.causal != 0u) {
        valid = min(p.s, p.s - p.t + i + 1u);
    }
    let row = (h * p.t + i) * p.s;
    var m = -3.0e38;
    for (var j = t; j < valid; j += 64u) {
        var score = 0.0;
        for (var d = 0u; d < p.hd; d++) {
            score = fma(qh[d], k[j * c + col + d], score);
        }
        score *= p.scale;
        w[row + j] = score;
        m = max(m, score);
    }
    m = workgroup_max(t, m);
    var sum = 0.0;
    for (var j = t; j < valid; j += 64u) {
        let e = exp(w[row + j] - m);
        w[row + j] = e;
        sum += e;
    }
    let inv = 1.0 / workgroup_sum(t, sum);
    for (var j = t; j < p.s; j += 64u) {
        w[row + j] = select(0.0, w[row + j] * inv, j < valid);
    }
    storageBarrier();
    if (t < p.hd) {
        var acc = 0.0;
        for (var j = 0u; j < valid; j++) {
            acc = fma(w[row + j], v[j * c + col + t], acc);
        }
        let knocked = ((p.ablate >> h) & 1u) == 1u;
        y[(p.row0 + i) * c + col + t] = select(acc, 0.0, knocked);
    }
}
