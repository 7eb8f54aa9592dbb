//! What a run asks of the device, counted where it happens: on a real GPU a small model's time
//! per token goes to these (each submission, readback and bind group costs the driver and the
//! browser a fixed time), not to arithmetic. `tests/gpu/gpu_counts.rs` holds GPT-2's decoding to
//! its budget; the native benchmark prints them.

/// Totals since the device was opened (`Gpu::counts`); `since` gives one run's share.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Compute dispatches (kernel launches).
    pub dispatches: u64,
    /// Command buffers submitted to the queue.
    pub submits: u64,
    /// Host-to-device writes: `queue.write_buffer` and buffers created with contents.
    pub writes: u64,
    /// Device-to-host readbacks (`map_async`) and the bytes they brought back.
    pub readbacks: u64,
    pub readback_bytes: u64,
    /// Bind groups created (a cached one, reused, is not counted again).
    pub bind_groups: u64,
}

impl Counts {
    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts {
            dispatches: self.dispatches - earlier.dispatches,
            submits: self.submits - earlier.submits,
            writes: self.writes - earlier.writes,
            readbacks: self.readbacks - earlier.readbacks,
            readback_bytes: self.readback_bytes - earlier.readback_bytes,
            bind_groups: self.bind_groups - earlier.bind_groups,
        }
    }
}

impl std::fmt::Display for Counts {
    /// "65 dispatches, 1 submit, 2 writes, 1 readback (201.0 KB), 0 bind groups"
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |n: u64| if n == 1 { "" } else { "s" };
        write!(
            f,
            "{} dispatch{}, {} submit{}, {} write{}, {} readback{} ({:.1} KB), {} bind group{}",
            self.dispatches,
            if self.dispatches == 1 { "" } else { "es" },
            self.submits,
            s(self.submits),
            self.writes,
            s(self.writes),
            self.readbacks,
            s(self.readbacks),
            self.readback_bytes as f64 / 1e3,
            self.bind_groups,
            s(self.bind_groups)
        )
    }
}
