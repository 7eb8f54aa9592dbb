//! One test body for looking inside a model on any backend: the session's logit lens,
//! patching sweep and head detectors against `scripts/inside/make_fixtures.py`'s numbers
//! (PyTorch and `transformers` with hooks), on the CPU (`tests/engines/inside.rs`) and on the GPU
//! (`tests/gpu/inside_gpu.rs`).

use attention_live::session::inside::{PatchQuery, Sweep};
use attention_live::session::{Gpt2Session, LlamaSession, ModelFamily, Session};
use pollster::block_on;
use serde_json::Value;

use super::{checkpoint, floats, ids};

/// A fixture of `tests/fixtures/inside/`.
pub fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/inside/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The fixture's model folder, relative to the repository.
pub fn folder(name: &str) -> String {
    fixture(name)["model"].as_str().unwrap().to_string()
}

/// The chapter's pair of prompts, the cat and the dog story, with the default answers.
pub fn cat_and_dog(sweep: Sweep) -> PatchQuery {
    PatchQuery {
        id: 1,
        clean: "My cat is small, cute, and fluffy. She likes".into(),
        corrupt: "My dog is small, cute, and fluffy. She likes".into(),
        sweep,
        ..Default::default()
    }
}

/// The GPT-2 session on fixture `name`'s model.
pub fn gpt2(name: &str) -> Gpt2Session {
    let (cfg, bytes) = checkpoint(&folder(name));
    Gpt2Session::new(&cfg, &bytes).unwrap()
}

/// The Llama-family session on fixture `name`'s model, with its folder's tokenizer (the random
/// fixtures': the 300-token test tokenizer).
pub fn llama(name: &str) -> LlamaSession {
    let dir = folder(name);
    let (cfg, bytes) = checkpoint(&dir);
    let root = env!("CARGO_MANIFEST_DIR");
    let own = format!("{root}/{dir}/tokenizer.json");
    let path = if std::path::Path::new(&own).exists() {
        own
    } else {
        format!("{root}/tests/fixtures/llama/tokenizer300/tokenizer.json")
    };
    LlamaSession::new(&cfg, &bytes, &std::fs::read_to_string(path).unwrap()).unwrap()
}

fn grid(v: &Value) -> Vec<Vec<f32>> {
    v.as_array().unwrap().iter().map(floats).collect()
}

fn close(ours: f32, theirs: f32, tol: f32, what: &str) {
    assert!((ours - theirs).abs() <= tol, "{what}: {ours} vs {theirs} (tolerance {tol})");
}

/// The lens, the patching sweep (both kinds) and the head scores of `s` match fixture `name`.
pub fn matches_reference<F: ModelFamily>(s: &Session<F>, name: &str) {
    let f = fixture(name);
    let tol = 1e-4;

    // Logit lens: every boundary's top-5 and the followed token's probability at every position.
    let lens = &f["lens"];
    let tokens = ids(&lens["tokens"]);
    let track = lens["track"].as_u64().unwrap() as u32;
    let ours = block_on(s.lens_ids(1, &tokens, Some(track))).unwrap();
    let (top_ids, top_probs) = (lens["top_ids"].as_array().unwrap(), lens["top_probs"].as_array().unwrap());
    assert_eq!(ours.top.len(), top_ids.len(), "{name}: boundaries");
    for (b, (row_ids, row_p)) in top_ids.iter().zip(top_probs).enumerate() {
        for (t, (want_ids, want_p)) in row_ids.as_array().unwrap().iter().zip(row_p.as_array().unwrap()).enumerate() {
            let (want_ids, want_p) = (ids(want_ids), floats(want_p));
            let got = &ours.top[b][t];
            for (k, c) in got.iter().enumerate() {
                close(
                    c.prob as f32,
                    want_p[k],
                    tol,
                    &format!("{name}: lens p at boundary {b}, position {t}, rank {k}"),
                );
                // Ids agree unless two probabilities tie within the tolerance.
                let tied = want_p.iter().enumerate().any(|(j, p)| j != k && (p - want_p[k]).abs() <= tol);
                assert!(tied || c.id == want_ids[k], "{name}: lens boundary {b} position {t} rank {k}");
            }
        }
    }
    for (b, row) in grid(&lens["track_probs"]).iter().enumerate() {
        for (t, &p) in row.iter().enumerate() {
            close(ours.track_probs[b][t] as f32, p, tol, &format!("{name}: followed token at {b}, {t}"));
        }
    }

    // Patching: the metric of every residual-stream cell and every head, and both plain runs.
    let p = &f["patching"];
    let (answer, wrong) = (p["answer"].as_u64().unwrap() as u32, p["wrong"].as_u64().unwrap() as u32);
    let mut sweep = block_on(s.start_patching_ids(
        1,
        ids(&p["clean"]),
        ids(&p["corrupt"]),
        (Some(answer), Some(wrong)),
        Sweep::Both,
    ))
    .unwrap();
    while !sweep.finished() {
        block_on(s.patch_step(&mut sweep)).unwrap();
    }
    let ours = sweep.answer();
    let clean = p["clean_metric"].as_f64().unwrap() as f32;
    // Logit differences: a tolerance relative to their size.
    let tol_m = tol * clean.abs().max(1.0) * 10.0;
    close(ours.clean_run.metric, clean, tol_m, &format!("{name}: clean metric"));
    close(ours.corrupt_run.metric, p["corrupt_metric"].as_f64().unwrap() as f32, tol_m, name);
    for (b, row) in grid(&p["residual"]).iter().enumerate() {
        for (t, &m) in row.iter().enumerate() {
            close(
                ours.residual[b][t].metric,
                m,
                tol_m,
                &format!("{name}: residual patch at boundary {b}, position {t}"),
            );
        }
    }
    for (l, row) in grid(&p["heads"]).iter().enumerate() {
        for (h, &m) in row.iter().enumerate() {
            close(ours.heads[l][h].metric, m, tol_m, &format!("{name}: head {l}.{h} patched"));
        }
    }

    // Head detectors on the fixture's repeated sequence.
    let h = &f["heads"];
    let (n, offset) = (h["n"].as_u64().unwrap() as usize, h["offset"].as_u64().unwrap() as usize);
    let ours = block_on(s.head_scores_on(1, &ids(&h["tokens"]), n, offset)).unwrap();
    for (key, got) in [("previous", &ours.previous), ("induction", &ours.induction), ("duplicate", &ours.duplicate)] {
        for (l, row) in grid(&h[key]).iter().enumerate() {
            for (head, &want) in row.iter().enumerate() {
                close(got[l][head], want, tol, &format!("{name}: {key} score of head {l}.{head}"));
            }
        }
    }
}
