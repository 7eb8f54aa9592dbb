//! Each kernel's parameters as a typed `#[repr(C)]` struct, beside the `struct Params` its WGSL
//! declares: the same fields, in the same order, of the same types (`tests/gpu/gpu_kernels.rs`
//! reads every WGSL file and checks each against its struct, so the two cannot drift). A
//! dispatch takes its kernel's struct (`Batch::add`), never an array laid out by hand.
//!
//! The `pad` fields keep a struct a whole number of 16 bytes, as a uniform buffer wants.

use bytemuck::{Pod, Zeroable};

use super::kernels::Kernel;

/// A kernel's parameters: the bytes of its uniform, and what it is checked against.
pub trait KernelParams: Pod {
    /// The kernels that read this struct.
    const KERNELS: &'static [Kernel];
    /// The WGSL files (in `src/gpu/wgsl/`) whose `struct Params` it mirrors.
    const WGSL: &'static [&'static str];
    /// (name, WGSL type) of each field, in order.
    const FIELDS: &'static [(&'static str, &'static str)];
}

macro_rules! params {
    ($(
        $(#[$doc:meta])*
        $name:ident for [$($kernel:ident),+] in [$($file:literal),+] { $($field:ident: $ty:ident),+ $(,)? }
    )+) => {
        $(
            $(#[$doc])*
            #[repr(C)]
            #[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
            pub struct $name {
                $(pub $field: $ty),+
            }

            impl KernelParams for $name {
                const KERNELS: &'static [Kernel] = &[$(Kernel::$kernel),+];
                const WGSL: &'static [&'static str] = &[$($file),+];
                const FIELDS: &'static [(&'static str, &'static str)] = &[$((stringify!($field), stringify!($ty))),+];
            }
        )+

        /// Every struct: (its WGSL files, its fields, its size in bytes), for the test that
        /// checks them against the WGSL.
        pub const ALL: &[(&[&str], &[(&str, &str)], usize)] =
            &[$((<$name as KernelParams>::WGSL, <$name as KernelParams>::FIELDS, std::mem::size_of::<$name>())),+];
    };
}

params! {
    /// y = x W + b (with GELU or accumulation as the epilogue): x (m, k), W (k, n).
    Matmul for [Matmul, Matvec, MatmulF16, MatvecF16] in ["matmul.wgsl", "matvec.wgsl"] {
        m: u32, n: u32, k: u32, accumulate: u32, gelu: u32,
    }
    /// `Matmul` on the layer norm (or, with `rms`, the RMSNorm) of x, in one dispatch.
    MatvecLn for [MatvecLn, MatvecLnF16] in ["matvec_ln.wgsl"] {
        m: u32, n: u32, k: u32, accumulate: u32, gelu: u32, eps: f32, rms: u32,
    }
    /// Logits of `m` rows against the table's rows v0 .. v0 + rows of a vocabulary of `v`.
    Logits for [Logits] in ["logits.wgsl"] {
        m: u32, v: u32, c: u32, v0: u32, rows: u32, pad0: u32, pad1: u32, pad2: u32,
    }
    /// Layer norm or RMSNorm of `rows` rows of width `n`, from row `row0`.
    Norm for [LayerNorm, RmsNorm] in ["layer_norm.wgsl", "rms_norm.wgsl"] {
        rows: u32, n: u32, eps: f32, row0: u32,
    }
    /// An activation (`kernels::Act` as `kind`) in place on `n` values.
    Activation for [Activation] in ["activation.wgsl"] {
        n: u32, kind: u32, pad0: u32, pad1: u32,
    }
    /// x = table[ids] (+ positions unless `no_positions`), for the table's rows v0 .. v0 + rows.
    Embed for [Embed] in ["embed.wgsl"] {
        t: u32, c: u32, past: u32, v0: u32, rows: u32, no_positions: u32, pad1: u32, pad2: u32,
    }
    /// The new rows' keys and values (qkv's rows from `row0`) appended to the cache.
    KvAppend for [KvAppend] in ["kv_append.wgsl"] {
        t: u32, c: u32, past: u32, row0: u32,
    }
    /// Fused causal attention of T new rows over `past` + T positions; heads in `ablate`
    /// knocked out; `n_kv` key and value heads (0: one per query head).
    Attention for [Attention] in ["attention.wgsl"] {
        t: u32, past: u32, n_head: u32, hd: u32, c: u32, ablate: u32, scale: f32, n_kv: u32,
    }
    /// The (H, T, S) scores of the same attention, written out for the page.
    Scores for [Scores] in ["scores.wgsl"] {
        t: u32, past: u32, n_head: u32, hd: u32, c: u32, s: u32, scale: f32, n_kv: u32,
    }
    /// Softmax of `rows` rows of `n` in place, causal when asked.
    Softmax for [Softmax] in ["softmax.wgsl"] {
        rows: u32, n: u32, t: u32, past: u32, causal: u32, pad0: u32, pad1: u32, pad2: u32,
    }
    /// Each head's (T, S) weights max-pooled to (r, k) at `offset` of the thumbnails.
    Pool for [Pool] in ["pool.wgsl"] {
        h: u32, t: u32, s: u32, r: u32, k: u32, offset: u32, pad0: u32, pad1: u32,
    }
    /// RoPE in place on `heads` heads of width `hd`, rows `stride` apart.
    Rope for [Rope] in ["rope.wgsl"] {
        t: u32, stride: u32, heads: u32, hd: u32,
    }
    /// Attention of T queries (rows `row0` .., `q_stride` apart) over S keys, its weights written
    /// out; causal over the last T positions when `causal`; heads in `ablate` knocked out.
    Attend for [Attend] in ["attend.wgsl"] {
        t: u32, s: u32, hd: u32, q_stride: u32, row0: u32, causal: u32, ablate: u32, scale: f32,
    }
    /// SwiGLU's gate: silu(gate) ⊙ up over (T, F).
    Swiglu for [Swiglu] in ["swiglu.wgsl"] {
        t: u32, f: u32, pad0: u32, pad1: u32,
    }
}
