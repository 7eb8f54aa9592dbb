// GPT-2's GELU ("gelu_new"), the tanh form: 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))).
// CPU twin: `gpt2::ops::gelu_new`. Put in front of the kernels that apply it.
//
// tanh is written as 1 − 2 / (exp(2u) + 1): WGSL's tanh may return NaN for large |u| on some
// drivers, and this form saturates to ±1 cleanly (exp overflowing to +∞ gives 1).

fn gelu_new(v: f32) -> f32 {
    let u = 0.7978846 * (v + 0.044715 * v * v * v);
    let th = 1.0 - 2.0 / (exp(2.0 * u) + 1.0);
    return 0.5 * v * (1.0 + th);
}

