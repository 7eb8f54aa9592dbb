// Appends the new tokens' keys and values to one layer's KV cache.
// qkv's rows row0 .. row0 + T are read, each (3C) = [Q | K | V] (row0: a beam's row among
// several); the caches are (capacity, C); rows past .. past + T are written.
// CPU twin: `KvCache::append`.

struct Params { t: u32, c: u32, past: u32, row0: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;
@group(0) @binding(2) var<storage, read_write> k_cache: array<f32>;
@group(0) @binding(3) var<storage, read_write> v_cache: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= p.t * p.c) {
        return;
    }
    let t = i / p.c;
    let col = i % p.c;
    let dst = (p.past + t) * p.c + col;
    let src = (p.row0 + t) * 3u * p.c;
    k_cache[dst] = qkv[src + p.c + col];
    v_cache[dst] = qkv[src + 2u * p.c + col];
}
