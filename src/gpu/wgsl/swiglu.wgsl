// SwiGLU's gate: a = silu(g) ⊙ u, where each row of `gu` is [g | u] (T, 2F), the outputs of
// the MLP's gate and up projections side by side (one product with both weights), and a is
// (T, F). silu(g) = g · σ(g) = g / (1 + e⁻ᵍ). CPU twin: `llama::ops::silu` and the product in
// `Llama::mlp`.

struct Params { t: u32, f: u32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> gu: array<f32>;
@group(0) @binding(2) var<storage, read_write> a: array<f32>;

// σ(g) written so that exp never overflows: e⁻ᵍ only for g ≥ 0, eᵍ only for g < 0 (an f32 exp
// past 88 is infinite, and WGSL leaves what it returns there to the implementation).
fn silu(g: f32) -> f32 {
    if (g >= 0.0) {
        return g / (1.0 + exp(-g));
    }
    let e = exp(g);
    return g * e / (1.0 + e);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= p.t * p.f) {
        return;
    }
    let r = i / p.f;
    let j = i % p.f;
    let row = r * 2u * p.f;
    a[i] = silu(gu[row + j]) * gu[row + p.f + j];
}
