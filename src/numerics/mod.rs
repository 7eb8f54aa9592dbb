//! Pure numerics on ndarray: no DOM, built and tested natively.
pub mod kernel_regression;
pub mod rng;
pub mod soft_lookup;
pub mod softmax;
pub mod attention;
pub mod positional;
pub mod block;
pub mod flash;
pub mod kv_cache;
pub mod window;
pub mod low_rank;
pub mod format;
pub mod f4;
pub mod packed;
