// Reductions over a workgroup of 64 threads, shared by the kernels that need them (layer norm,
// softmax, attention): `kernels.rs` puts this file in front of their source, as WGSL has no
// include. Each thread passes its partial value; a tree halves the live threads at every step
// (6 steps for 64), and every thread gets the total. Call from uniform control flow (every
// thread of the workgroup): they contain barriers. The last barrier lets `red` be reused.

var<workgroup> red: array<f32, 64>;

fn workgroup_sum(t: u32, v: f32) -> f32 {
    red[t] = v;
    workgroupBarrier();
    for (var stride = 32u; stride > 0u; stride /= 2u) {
        if (t < stride) {
            red[t] += red[t + stride];
        }
        workgroupBarrier();
    }
    let total = red[0];
    workgroupBarrier();
    return total;
}

fn workgroup_max(t: u32, v: f32) -> f32 {
    red[t] = v;
    workgroupBarrier();
    for (var stride = 32u; stride > 0u; stride /= 2u) {
        if (t < stride) {
            red[t] = max(red[t], red[t + stride]);
        }
        workgroupBarrier();
    }
    let top = red[0];
    workgroupBarrier();
    return top;
}

