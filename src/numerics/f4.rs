//! Four f32 lanes: a WebAssembly SIMD vector in the browser, a plain array natively (where
//! only the tests run this code, to check it). The CPU matrix kernels (`packed`) are written
//! with it.
#[cfg(target_arch = "wasm32")]
use core::arch::wasm32::{f32x4_add, f32x4_splat, v128, v128_load, v128_load32_splat, v128_store};

#[derive(Clone, Copy)]
#[cfg(target_arch = "wasm32")]
pub struct F4(v128);
#[derive(Clone, Copy)]
#[cfg(not(target_arch = "wasm32"))]
pub struct F4([f32; 4]);

#[cfg(target_arch = "wasm32")]
impl F4 {
    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn zero() -> F4 {
        F4(f32x4_splat(0.0))
    }
    /// # Safety
    /// `p .. p + 4` must be readable.
    #[inline]
    #[target_feature(enable = "simd128")]
    pub unsafe fn load(p: *const f32) -> F4 {
        F4(unsafe { v128_load(p as *const v128) })
    }
    /// # Safety
    /// `p` must be readable. One load that fills all four lanes.
    #[inline]
    #[target_feature(enable = "simd128")]
    pub unsafe fn load_splat(p: *const f32) -> F4 {
        F4(unsafe { v128_load32_splat(p as *const u32) })
    }
    /// self + a · b. In the relaxed-SIMD build (where the browser has it: `kit::worker`) one
    /// fused multiply-add where the machine has FMA, rounding once instead of twice; elsewhere
    /// a multiply then an add.
    #[inline]
    #[target_feature(enable = "simd128")]
    pub fn mul_add(self, a: F4, b: F4) -> F4 {
        #[cfg(target_feature = "relaxed-simd")]
        return F4(core::arch::wasm32::f32x4_relaxed_madd(a.0, b.0, self.0));
        #[cfg(not(target_feature = "relaxed-simd"))]
        F4(f32x4_add(self.0, core::arch::wasm32::f32x4_mul(a.0, b.0)))
    }
    /// self + a
    #[inline]
    #[target_feature(enable = "simd128")]
    #[allow(clippy::should_implement_trait)] // an operator cannot carry #[target_feature]
    pub fn add(self, a: F4) -> F4 {
        F4(f32x4_add(self.0, a.0))
    }
    /// # Safety
    /// `p .. p + 4` must be writable.
    #[inline]
    #[target_feature(enable = "simd128")]
    pub unsafe fn store(self, p: *mut f32) {
        unsafe { v128_store(p as *mut v128, self.0) }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl F4 {
    pub fn zero() -> F4 {
        F4([0.0; 4])
    }
    /// # Safety
    /// `p .. p + 4` must be readable.
    pub unsafe fn load(p: *const f32) -> F4 {
        F4(unsafe { [*p, *p.add(1), *p.add(2), *p.add(3)] })
    }
    /// # Safety
    /// `p` must be readable.
    pub unsafe fn load_splat(p: *const f32) -> F4 {
        F4([unsafe { *p }; 4])
    }
    // The same methods as the wasm32 version, whose `add` cannot be an operator.
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, a: F4) -> F4 {
        F4(std::array::from_fn(|l| self.0[l] + a.0[l]))
    }
    pub fn mul_add(self, a: F4, b: F4) -> F4 {
        F4(std::array::from_fn(|l| self.0[l] + a.0[l] * b.0[l]))
    }
    /// # Safety
    /// `p .. p + 4` must be writable.
    pub unsafe fn store(self, p: *mut f32) {
        for (l, v) in self.0.iter().enumerate() {
            unsafe { *p.add(l) = *v };
        }
    }
}
