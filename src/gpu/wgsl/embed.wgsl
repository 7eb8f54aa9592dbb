// Token and position embeddings: x[t, :] = wte[ids[t], :] + wpe[past + t, :].
// x is (T, C). CPU twin: the first lines of `Gpt2::forward`. With `no_positions` set (the
// Llama family, whose positions are RoPE's rotations) x[t, :] = wte[ids[t], :] and wpe is not
// read: the first lines of `Llama::forward`.
//
// The table may come in chunks of rows (GPT-2's 154 MB table is larger than many GPUs allow in
// one binding): this dispatch holds rows v0 .. v0 + rows and writes only the tokens among them,
// so with one dispatch per chunk each row of x is written exactly once.

struct Params { t: u32, c: u32, past: u32, v0: u32, rows: u32, no_positions: u32, pad1: u32, pad2: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ids: array<u32>;
@group(0) @binding(2) var<storage, read> wte: array<f32>;
@group(0) @binding(3) var<storage, read> wpe: array<f32>;
@group(0) @binding(4) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= p.t * p.c) {
        return;
    }
    let t = i / p.c;
    let col = i % p.c;
    let id = ids[t];
    if (id < p.v0 || id >= p.v0 + p.rows) {
        return;
    }
    var v = wte[(id - p.v0) * p.c + col];
    if (p.no_positions == 0u) {
        v += wpe[(p.past + t) * p.c + col];
    }
    x[i] = v;
}
