//! A training run as bytes, so the reader's browser can keep it across a reload: the trainer's
//! whole state (settings, weights, AdamW's moments and step count, the batch generator's state,
//! the step) and what the lab showed of it (every step's figures, the head snapshots). A run
//! restored from these bytes goes on exactly as the one that was saved would have.
//!
//! Layout: the 8 bytes [`MAGIC`] (the format's version in its last byte), a little-endian u32
//! length and that many bytes of JSON ([`Header`]: everything but the arrays), then f32
//! little-endian: the weights, AdamW's first and second moments (one each per weight), and each
//! snapshot's attention (L · H · T · T each, T the probe's length). [`decode`] checks every
//! length and value, so a stored copy that is damaged or of another version is refused with the
//! reason rather than trained on.

use serde::{Deserialize, Serialize};

use super::trainer::{HeadSnapshot, StepStats, Trainer};
use super::TrainConfig;

/// "AL run", format 1.
pub const MAGIC: [u8; 8] = *b"ALrun\0\0\x01";

#[derive(Serialize, Deserialize)]
struct Header {
    config: TrainConfig,
    step: usize,
    /// The batch generator's state.
    rng: u64,
    /// AdamW's steps taken.
    adam_t: i32,
    history: Vec<StepStats>,
    /// Without their attention (it follows the moments).
    snapshots: Vec<HeadSnapshot>,
}

/// A run read back: the trainer at its step, and the lab's record of it.
pub struct SavedRun {
    pub trainer: Trainer,
    pub history: Vec<StepStats>,
    pub snapshots: Vec<HeadSnapshot>,
}

/// The run's bytes.
pub fn encode(trainer: &Trainer, history: &[StepStats], snapshots: &[HeadSnapshot]) -> Vec<u8> {
    let (m, v, adam_t) = trainer.moments();
    let header = Header {
        config: trainer.config.clone(),
        step: trainer.step_count(),
        rng: trainer.rng_state(),
        adam_t,
        history: history.to_vec(),
        snapshots: snapshots.to_vec(),
    };
    let json = serde_json::to_vec(&header).expect("a header of plain values serialises");
    let params = &trainer.model().params;
    let floats = params.len() + m.len() + v.len() + snapshots.iter().map(|s| s.attention.len()).sum::<usize>();
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + json.len() + 4 * floats);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&json);
    for values in [&params[..], m, v].into_iter().chain(snapshots.iter().map(|s| &s.attention[..])) {
        out.extend(values.iter().flat_map(|x| x.to_le_bytes()));
    }
    out
}

/// Reads `n` f32 from the front of `rest`.
fn floats(rest: &mut &[u8], n: usize, what: &str) -> Result<Vec<f32>, String> {
    let bytes = n.checked_mul(4).filter(|&b| b <= rest.len()).ok_or_else(|| format!("it ends inside {what}"))?;
    let (mine, tail) = rest.split_at(bytes);
    *rest = tail;
    let values: Vec<f32> = mine.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    if values.iter().any(|x| !x.is_finite()) {
        return Err(format!("{what} hold a value that is not finite"));
    }
    Ok(values)
}

/// The run in `bytes`, or why it cannot be one.
pub fn decode(bytes: &[u8]) -> Result<SavedRun, String> {
    let fail = |why: String| format!("the saved run was not restored: {why}");
    if bytes.len() < MAGIC.len() + 4 || bytes[..MAGIC.len() - 1] != MAGIC[..MAGIC.len() - 1] {
        return Err(fail("it is not a training run".into()));
    }
    if bytes[MAGIC.len() - 1] != MAGIC[MAGIC.len() - 1] {
        return Err(fail(format!("it is of format {}, not {}", bytes[MAGIC.len() - 1], MAGIC[MAGIC.len() - 1])));
    }
    let len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
    let json = 12usize.checked_add(len).and_then(|end| bytes.get(12..end));
    let json = json.ok_or_else(|| fail("it ends inside its header".into()))?;
    let header: Header = serde_json::from_slice(json).map_err(|e| fail(format!("its header is not readable ({e})")))?;
    let step = header.step;
    if header.config.steps < step || header.adam_t < 0 || header.adam_t as usize != step {
        return Err(fail(format!("its step ({step}) does not fit its settings")));
    }
    if header.history.len() != step || header.history.iter().enumerate().any(|(i, s)| s.step != i + 1) {
        return Err(fail("its loss curve does not have one entry per step".into()));
    }
    let mut trainer = Trainer::new(header.config.clone()).map_err(fail)?;
    let n = trainer.model().params.len();
    let mut rest = &bytes[12 + len..];
    let params = floats(&mut rest, n, "its weights").map_err(fail)?;
    let m = floats(&mut rest, n, "its optimiser's moments").map_err(fail)?;
    let v = floats(&mut rest, n, "its optimiser's moments").map_err(fail)?;
    let cfg = &header.config;
    let t = trainer.probe().len();
    let per = cfg.n_layer * cfg.n_head * t * t;
    let mut snapshots = header.snapshots;
    let mut last = None;
    for s in &mut snapshots {
        let heads = cfg.n_layer * cfg.n_head;
        if s.step > step || last.is_some_and(|l| s.step <= l) || s.previous.len() != heads || s.induction.len() != heads
        {
            return Err(fail("its head snapshots do not fit its run".into()));
        }
        last = Some(s.step);
        s.attention = floats(&mut rest, per, "its head snapshots").map_err(fail)?;
    }
    if !rest.is_empty() {
        return Err(fail(format!("{} bytes follow its last snapshot", rest.len())));
    }
    trainer.restore(step, header.rng, params, (m, v, header.adam_t)).map_err(fail)?;
    Ok(SavedRun { trainer, history: header.history, snapshots })
}
