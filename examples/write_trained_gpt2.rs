//! Writes a checkpoint as the training lab exports it (the copy task, a few training steps):
//! `config.json` with `char_vocab` and an F32 `model.safetensors`, and `expected.json` with the
//! training engine's own attention and loss on the probe, for checking the export:
//! - by the browser test of the GPT-2 chapter's trained model (tests/browser/gpt2-trained.test.mjs);
//! - by Hugging Face `transformers` (scripts/train/check_export.py).
//!
//! Never committed:
//!
//!     cargo run --example write_trained_gpt2 -- /tmp/trained-gpt2 [learned|sinusoidal|none] [mlp]

use attention_live::train::export::checkpoint;
use attention_live::train::task::Batch;
use attention_live::train::{Positions, Task, TrainConfig, Trainer};

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "/tmp/trained-gpt2".into());
    let positions = match args.next().as_deref() {
        None | Some("learned") => Positions::Learned,
        Some("sinusoidal") => Positions::Sinusoidal,
        Some("none") => Positions::None,
        Some(other) => return Err(format!("unknown positions {other}: learned, sinusoidal or none")),
    };
    let mlp = args.next().as_deref() == Some("mlp");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {dir}: {e}"))?;
    // The copy task at the lab's first defaults (2 × 2 heads, width 32), which the checks expect.
    let cfg =
        TrainConfig { task: Task::Copy, n_head: 2, n_embd: 32, lr: 3e-3, positions, mlp, ..TrainConfig::default() };
    let mut t = Trainer::new(cfg)?;
    for _ in 0..20 {
        t.step()?;
    }
    let ck = checkpoint(t.model())?;
    std::fs::write(format!("{dir}/config.json"), &ck.config_json).map_err(|e| e.to_string())?;
    std::fs::write(format!("{dir}/model.safetensors"), &ck.safetensors).map_err(|e| e.to_string())?;
    // The probe, every next token scored (as `labels=ids` in transformers).
    let ids = t.probe().to_vec();
    let mut targets: Vec<i32> = ids[1..].iter().map(|&i| i as i32).collect();
    targets.push(-1);
    let fwd = t.model().forward(&Batch { b: 1, t: ids.len(), ids: ids.clone(), targets })?;
    let expected = serde_json::json!({ "ids": ids, "loss": fwd.loss, "attention": fwd.attention() });
    std::fs::write(format!("{dir}/expected.json"), expected.to_string()).map_err(|e| e.to_string())?;
    println!("wrote {dir}: {} bytes of weights", ck.safetensors.len());
    Ok(())
}
