// GPT-2's GELU ("gelu_new"), the tanh form, in place:
// x ← 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))). CPU twin: `gpt2::ops::gelu_new`.
//
// tanh is written as 1 − 2 / (exp(2u) + 1): WGSL's tanh may return NaN for large |u| on some
// drivers, and this form saturates to ±1 cleanly (exp overflowing to +∞ gives 1).

struct Params { n: u32, pad0: u32, pad1: u32, pad2: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= p.n) {
        return;
    }
    let v = x[i];
    let u = 0.7978846 * (v + 0.044715 * v * v * v);
    let th = 1.0 - 2.0 / (exp(2.0 * u) + 1.0);
    x[i] = 0.5 * v * (1.0 + th);
}
