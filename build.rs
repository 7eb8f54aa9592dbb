//! Renders `chapters/*.md` (listed in `chapters/ORDER`) into Rust statics at build time, so the
//! browser receives ready HTML + MathML and no markdown or LaTeX parser ships in the wasm.

#[path = "src/exercises/format.rs"]
pub mod exercise_format;
/// `crate::exercises::format` as the library names it, for the renderer.
mod exercises {
    pub use super::exercise_format as format;
}
#[path = "src/chapters/plain.rs"]
mod plain;
#[path = "src/chapters/render.rs"]
mod render;
#[path = "src/chapters/site_gen.rs"]
mod site_gen;

use std::fmt::Write as _;
use std::{env, fs, path::Path};

use render::render_chapter;

fn main() {
    println!("cargo:rerun-if-changed=chapters");
    let dir = Path::new("chapters");
    let order = fs::read_to_string(dir.join("ORDER")).expect("chapters/ORDER is missing");
    let mut code = String::from("pub static CHAPTERS: &[Chapter] = &[\n");
    // Heading ids, the search index and each page's summary (src/chapters/site_gen.rs). The
    // page's wasm gets neither the prose nor the search index: the static pages carry the prose
    // and `search.json` the index (written by examples/site_pages.rs).
    let lean = env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32");
    let mut site = site_gen::Site::new(lean);
    // Every problem in every chapter, listed together: a malformed chapter fails the build.
    let mut refused = Vec::new();
    for (lineno, line) in order.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = line.split('|').map(str::trim).collect();
        let [slug, title, source] = parts[..] else {
            panic!("chapters/ORDER line {}: expected `slug | title | file`", lineno + 1);
        };
        let (body, prose_id) = if source == "coming" {
            ("None".to_string(), String::new())
        } else {
            println!("cargo:rerun-if-changed=chapters/{source}");
            let md = fs::read_to_string(dir.join(source)).unwrap_or_else(|e| panic!("chapters/{source}: {e}"));
            let rendered = render_chapter(&md);
            refused.extend(rendered.problems.iter().map(|p| format!("chapters/{source}: {p}")));
            // A malformed exercise or directive shows a notice on the page; the build lists it.
            for s in &rendered.segments {
                if let render::RawSegment::Bad(msg) = s {
                    println!("cargo:warning=chapters/{source}: {msg}");
                }
            }
            site.page(slug, title, &md, rendered.segments, &mut refused)
        };
        writeln!(code, "    Chapter {{ slug: {slug:?}, title: {title:?}, body: {body}, prose_id: {prose_id:?} }},")
            .unwrap();
    }
    code.push_str("];\n");
    println!("cargo:rerun-if-changed=chapters/REFERENCE");
    code.push_str(&site.reference_pages(dir, &mut refused));
    let home = fs::read_to_string(dir.join("home.md")).unwrap_or_default();
    site.home(&home);
    code.push_str(&site.code());
    let mut problems = Vec::new();
    let home_html = render::markdown_to_html(&home, &mut problems);
    refused.extend(problems.iter().map(|p| format!("chapters/home.md: {}", p.message)));
    if !refused.is_empty() {
        panic!("the chapters have {} problem(s):\n{}", refused.len(), refused.join("\n"));
    }
    writeln!(code, "pub static HOME_HTML: &str = {home_html:?};").unwrap();
    let out = std::path::PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::write(out.join("chapters_gen.rs"), code).unwrap();
    fs::write(out.join("search.json"), site.search_json()).unwrap();
    bundled_files();
}

/// The size and SHA-256 of every file under `static/models` (the bundled models the site
/// serves), as `formats::bundled::FILES`: the page refuses a served file that differs.
fn bundled_files() {
    use sha2::{Digest, Sha256};
    println!("cargo:rerun-if-changed=static/models");
    let mut files = Vec::new();
    let mut dirs = vec![Path::new("static/models").to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                println!("cargo:rerun-if-changed={}", path.display());
                dirs.push(path);
            } else {
                println!("cargo:rerun-if-changed={}", path.display());
                let bytes = fs::read(&path).unwrap();
                let hash: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
                let site_path = path.strip_prefix("static").unwrap().to_string_lossy().replace('\\', "/");
                files.push(format!("    (\"/{site_path}\", {}, \"{hash}\"),\n", bytes.len()));
            }
        }
    }
    files.sort();
    let code = format!("pub static FILES: &[(&str, u64, &str)] = &[\n{}];\n", files.concat());
    fs::write(Path::new(&env::var("OUT_DIR").unwrap()).join("bundled_gen.rs"), code).unwrap();
}
