// GPT-2's GELU in place: x ← gelu_new(x) (`wgsl/gelu_new.wgsl`, in front of this file).
// CPU twin: `gpt2::ops::gelu_new`. (GPT-2's forward applies it in the epilogue of the MLP's
// first product instead: `Epilogue::Gelu` in matmul.wgsl and matvec.wgsl.)

struct Params { n: u32, pad0: u32, pad1: u32, pad2: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= p.n) {
        return;
    }
    x[i] = gelu_new(x[i]);
}
