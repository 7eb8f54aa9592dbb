// An MLP's activation in place on n values, by `kind`: 0 GPT-2's GELU, the tanh form
// (`wgsl/gelu_new.wgsl`, in front of this file), 1 ReLU, 2 SiLU (swish: x σ(x), OPUS-MT's),
// 3 GELU with erf. CPU twins: `gpt2::ops::gelu_new` and `marian::model::activate`. (GPT-2's
// forward applies its GELU in the epilogue of the MLP's first product instead:
// `Epilogue::Gelu` in matmul.wgsl and matvec.wgsl.)
//
// erf is Abramowitz and Stegun's 7.1.26 (WGSL has none): |error| ≤ 1.5e-7, so GELU is within
// 1e-7 |x| of its formula. σ(x) is 1 / (1 + e^(−x)), which saturates cleanly both ways.

struct Params { n: u32, kind: u32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;

fn erf(v: f32) -> f32 {
    let a = abs(v);
    let t = 1.0 / (1.0 + 0.3275911 * a);
    let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return sign(v) * (1.0 - poly * exp(-a * a));
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= p.n) {
        return;
    }
    let v = x[i];
    switch p.kind {
        case 1u: {
            x[i] = max(v, 0.0);
        }
        case 2u: {
            x[i] = v / (1.0 + exp(-v));
        }
        case 3u: {
            x[i] = 0.5 * v * (1.0 + erf(v * 0.70710678));
        }
        default: {
            x[i] = gelu_new(v);
        }
    }
}
