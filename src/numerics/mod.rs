//! Pure numerics on ndarray: no DOM, built and tested natively.
pub mod attention;
pub mod block;
pub mod f4;
pub mod flash;
pub mod format;
pub mod gelu;
pub mod kernel_regression;
pub mod kv_cache;
pub mod low_rank;
pub mod packed;
pub mod par;
pub mod positional;
pub mod rng;
pub mod silu;
pub mod soft_lookup;
pub mod softmax;
pub mod window;
