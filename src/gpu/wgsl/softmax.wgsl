// Masked softmax of each row, in place. x is (rows, n); row r keeps its first `valid(r)`
// entries and the rest become exactly 0. With `causal` set, rows come in groups of T queries at
// positions past .. past + T and valid(r) = past + (r mod T) + 1; otherwise valid(r) = n.
// CPU twins: `numerics::softmax::masked_softmax` and the mask of `gpt2::ops::causal_attention`.
//
// The row maximum is subtracted before exp so that no score overflows: softmax is unchanged by
// a constant shift, and every exponent is then ≤ 0.

struct Params { rows: u32, n: u32, t: u32, past: u32, causal: u32, pad0: u32, pad1: u32, pad2: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let r = wid.x;
    let t = lid.x;
    let base = r * p.n;
    var valid = p.n;
    if (p.causal != 0u) {
        valid = min(p.n, p.past + r % p.t + 1u);
    }
    var m = -3.0e38;
    for (var j = t; j < valid; j += 64u) {
        m = max(m, x[base + j]);
    }
    m = workgroup_max(t, m);
    var s = 0.0;
    for (var j = t; j < valid; j += 64u) {
        let e = exp(x[base + j] - m);
        x[base + j] = e;
        s += e;
    }
    let inv = 1.0 / workgroup_sum(t, s);
    for (var j = t; j < p.n; j += 64u) {
        if (j < valid) {
            x[base + j] *= inv;
        } else {
            x[base + j] = 0.0;
        }
    }
}
