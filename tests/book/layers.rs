//! The library's layers, each importing only those below it:
//!
//! ```text
//! numerics, formats, state          pure functions, file formats, typed URL state
//!   -> gpu                          the compute backend (buffers and kernels, no model)
//!   -> model                        what every family shares: forward options and outputs, caches, errors, limits
//!   -> train, seq2seq, gpt2,        the engines, one per family, DOM-free (gpt2, llama run on the backend too)
//!      llama, marian, vit
//!                                   (a session family's engine is found by its `engine.rs`: `impl CpuModel for`)
//!   -> session                      one session generic over the families, and the worker's protocol
//!   -> kit                          what demo views are built from: plots, controls (wasm only)
//!   -> demos                        each demo in one file: parameters, compute, view
//!   -> exercises                    checked exercises: answer keys, checks, goals on demos
//!   -> chapters                     the book's content, which places the demos
//!   -> ui, worker                   the pages and the compute worker (wasm only)
//! ```
//!
//! This test reads every source file and fails on an import that points upwards or sideways.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The layers below the engines, in order.
const BELOW: [&str; 5] = ["numerics", "formats", "state", "gpu", "model"];
/// The engines without a session family: the training lab's, the opening chapter's toy models,
/// the translation models' and the Vision Transformer's.
const OTHER_ENGINES: [&str; 4] = ["seq2seq", "train", "marian", "vit"];
/// The layers above the engines, in order.
const ABOVE: [&str; 7] = ["session", "kit", "demos", "exercises", "chapters", "ui", "worker"];

/// The model families' engines: each folder of `src` whose `engine.rs` implements `CpuModel`
/// (`gpt2`, `llama`, and any family added later, with no line here).
fn families() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: Vec<String> = fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| {
            let dir = e.unwrap().path();
            let engine = fs::read_to_string(dir.join("engine.rs")).ok()?;
            engine.contains("impl CpuModel for").then(|| dir.file_name()?.to_str().map(String::from))?
        })
        .collect();
    out.sort();
    out
}

/// The top-level modules, in the order of the layers above.
fn modules() -> Vec<String> {
    let engines = OTHER_ENGINES.iter().map(|m| m.to_string()).chain(families());
    BELOW.iter().map(|m| m.to_string()).chain(engines).chain(ABOVE.iter().map(|m| m.to_string())).collect()
}

/// Every module from the first to `last`, in layer order.
fn up_to(last: &str) -> Vec<String> {
    let all = modules();
    let end = all.iter().position(|m| m == last).expect("a module");
    all[..=end].to_vec()
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|m| m.to_string()).collect()
}

/// What each top-level module may import besides itself.
fn allowed(module: &str) -> Option<Vec<String>> {
    let families = families();
    Some(match module {
        "numerics" | "formats" | "state" => vec![],
        "gpu" => names(&["numerics", "formats"]),
        "model" => names(&["numerics", "formats", "gpu"]),
        "train" | "seq2seq" => names(&["numerics", "formats"]),
        "marian" | "vit" => names(&["numerics", "formats", "gpu", "model"]),
        "session" => {
            [names(&["numerics", "formats", "gpu", "model", "train", "seq2seq", "marian", "vit"]), families].concat()
        }
        "kit" | "worker" => up_to("session"),
        "demos" => up_to("kit"),
        "exercises" => [up_to("session"), names(&["demos"])].concat(),
        "chapters" => names(&["numerics", "formats", "state", "demos", "exercises"]),
        "ui" => up_to("chapters"),
        m if families.iter().any(|f| f == m) => names(&["numerics", "formats", "gpu", "model"]),
        _ => return None,
    })
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The top-level modules `src` names as `crate::<module>`, outside comments.
fn imports(src: &str) -> Vec<String> {
    let modules = modules();
    let mut found = Vec::new();
    for line in src.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if modules.contains(&name) {
                found.push(name);
            }
        }
    }
    found
}

#[test]
fn no_layer_imports_a_higher_one() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap();
        let Some(module) =
            rel.components().next().and_then(|c| c.as_os_str().to_str()).map(|s| s.trim_end_matches(".rs"))
        else {
            continue;
        };
        if ["lib", "main", "worker_main"].contains(&module) {
            continue; // the top
        }
        let Some(ok) = allowed(module) else {
            wrong.push(format!("src/{}: {module} is in no layer (add it to this test's lists)", rel.display()));
            continue;
        };
        let src = fs::read_to_string(file).unwrap();
        let mut seen = BTreeMap::new();
        for m in imports(&src) {
            *seen.entry(m).or_insert(0) += 1;
        }
        for m in seen.keys() {
            if m == module || ok.contains(m) {
                continue;
            }
            wrong.push(format!("src/{}: {module} imports {m}", rel.display()));
        }
    }
    assert!(wrong.is_empty(), "imports against the layers:\n{}", wrong.join("\n"));
}

#[test]
fn the_scanner_sees_an_upward_import() {
    // The check itself: an import in code counts, one in a comment does not.
    assert_eq!(imports("use crate::ui::plot; // crate::worker\nlet x = crate::gpt2::ops::linear;"), ["ui", "gpt2"]);
    // The families' engines are found by their `impl CpuModel`.
    let found = families();
    assert!(["gpt2", "llama"].iter().all(|f| found.iter().any(|m| m == f)), "{found:?}");
    assert_eq!(allowed("llama").unwrap(), ["numerics", "formats", "gpu", "model"]);
    assert!(allowed("session").unwrap().contains(&"llama".to_string()));
    assert!(allowed("nowhere").is_none());
}

/// House style: no line of Rust over 120 columns (rustfmt.toml's width; rustfmt does not wrap
/// strings, comments or `view!` markup, so this catches what it leaves).
#[test]
fn no_line_is_longer_than_120_columns() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("build.rs")];
    for dir in ["src", "tests", "examples"] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut long = Vec::new();
    for file in &files {
        for (i, line) in fs::read_to_string(file).unwrap().lines().enumerate() {
            let width = line.chars().count();
            if width > 120 {
                long.push(format!("{}:{}: {width} columns", file.strip_prefix(root).unwrap().display(), i + 1));
            }
        }
    }
    assert!(long.is_empty(), "{} lines over 120 columns:\n{}", long.len(), long.join("\n"));
}
