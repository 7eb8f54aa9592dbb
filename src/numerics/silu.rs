//! SiLU ("swish"), x · σ(x) = x / (1 + e⁻ˣ), the gate of the Llama family's SwiGLU MLP:
//! down(silu(gate(x)) ⊙ up(x)).
//!
//! It runs on every hidden unit of every layer: 128 tokens × 1,536 units × 30 layers = 5.9
//! million times per 128-token prompt of SmolLM2-135M. In the browser the C library's `expf` is
//! software, one value at a time; here e⁻ˣ is GPT-2's GELU's polynomial `gelu::exp`, which has
//! no branches, so the browser runs it on four lanes (`silu_mul_in_place`), operation for
//! operation as the scalar `silu`. Against SiLU in f64 the result is within 1.6e-7 relative
//! (measured on [−80, 80] in steps of 0.001: tests/engines/llama.rs, `silu_matches_its_formula`), under
//! two units in f32's last place.
//!
//! Neither end needs a special case: for x ≪ 0, e⁻ˣ is clamped at e^87 ≈ 6e37, and x / 6e37
//! (−1.6e-34 for x = −10⁴) is 0 to f32 precision, as the true value x eˣ is; for x ≫ 0 it is
//! clamped at e⁻⁸⁷ and the result is x.

use super::gelu::exp;

pub fn silu(x: f32) -> f32 {
    x / (1.0 + exp(-x))
}

/// SwiGLU's gating, element by element: gate ← silu(gate) ⊙ up (both (T, F), the same layout).
/// Four lanes at a time with SIMD128 in the browser.
pub fn silu_mul_in_place(gate: &mut [f32], up: &[f32]) {
    assert_eq!(gate.len(), up.len(), "gate and up differ in length");
    // (On wasm, SIMD functions are safe to call: a module using SIMD128 fails validation where
    // SIMD is missing.)
    #[cfg(target_arch = "wasm32")]
    simd::silu_mul_in_place(gate, up);
    #[cfg(not(target_arch = "wasm32"))]
    gate.iter_mut().zip(up).for_each(|(g, &u)| *g = silu(*g) * u);
}

#[cfg(target_arch = "wasm32")]
mod simd {
    use core::arch::wasm32::*;

    use super::super::gelu::simd::exp4;
    use super::silu;

    #[target_feature(enable = "simd128")]
    pub fn silu_mul_in_place(gate: &mut [f32], up: &[f32]) {
        let n4 = gate.len() / 4 * 4;
        for i in (0..n4).step_by(4) {
            // SAFETY: i + 4 ≤ n4 ≤ the length of both slices (asserted equal by the caller);
            // v128 loads and stores need no alignment.
            unsafe {
                let p = gate.as_mut_ptr().add(i) as *mut v128;
                let x = v128_load(p);
                let e = exp4(f32x4_neg(x));
                let s = f32x4_div(x, f32x4_add(f32x4_splat(1.0), e));
                v128_store(p, f32x4_mul(s, v128_load(up.as_ptr().add(i) as *const v128)));
            }
        }
        for (g, &u) in gate[n4..].iter_mut().zip(&up[n4..]) {
            *g = silu(*g) * u;
        }
    }
}
