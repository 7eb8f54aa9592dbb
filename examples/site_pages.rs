//! Writes each route's static HTML into the built site (run by `scripts/build.sh` after
//! Trunk): `cargo run --example site_pages -- dist`. Every page gets its own title,
//! description, Open Graph tags and summary (`chapters::static_pages`), from the `index.html`
//! that Trunk wrote; a chapter's page also carries its prose, and `search.json` the search
//! index (neither is in the page's wasm). With `SITE_URL=https://…` set, `og:url` and
//! `og:image` are absolute.
//! Last, the service worker's precache list and version (`chapters::offline`) go into `sw.js`
//! and `offline.json`, from every file the site now holds (`-- dist precache` does only that).

// A build-time tool: it reads the native-only half of the chapters.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::main()
}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::path::Path;

    use attention_live::chapters::static_pages::{fill, pages};

    pub fn main() {
        let dist = std::env::args().nth(1).unwrap_or_else(|| "dist".into());
        let dist = Path::new(&dist);
        // `site_pages dist precache`: only the list again (after files were added, e.g. thumbnails).
        if std::env::args().nth(2).as_deref() == Some("precache") {
            write_precache(dist);
            return;
        }
        let template = match std::fs::read_to_string(dist.join("index.html")) {
            Ok(t) => t,
            Err(e) => {
                eprintln!(
                    "site_pages: cannot read {}: {e} (build the site with Trunk first)",
                    dist.join("index.html").display()
                );
                std::process::exit(1);
            }
        };
        // The page's app (scripts/build_page.sh builds it into `page-<hash>/`): the chunks' integrity
        // in its split loader, then its start-up script in the template.
        let template = match page_folder(dist) {
            Some(folder) => {
                use attention_live::chapters::security::{page_start, split_loader, PAGE_JS, PAGE_WASM, SPLIT_LOADER};
                let dir = dist.join(&folder);
                let loader = dir.join(SPLIT_LOADER);
                let js = String::from_utf8(crate::read_file(&loader)).unwrap_or_else(|e| die(&loader, e));
                let checked =
                    split_loader(&js, |name| std::fs::read(dir.join(name)).map_err(|e| format!("{name}: {e}")))
                        .unwrap_or_else(|e| die(&loader, e));
                std::fs::write(&loader, &checked).unwrap_or_else(|e| die(&loader, e));
                let (main_js, wasm) = (crate::read_file(&dir.join(PAGE_JS)), crate::read_file(&dir.join(PAGE_WASM)));
                page_start(&template, &folder, &main_js, checked.as_bytes(), &wasm)
                    .unwrap_or_else(|e| die(&dist.join("index.html"), e))
            }
            None => die(dist, "no page-*/ folder (scripts/build_page.sh builds it)"),
        };
        // The policy and the wasm's integrity first: every page is made from this template.
        let template = attention_live::chapters::security::harden(&template).unwrap_or_else(|e| {
            eprintln!("site_pages: index.html: {e}");
            std::process::exit(1);
        });
        let loader = dist.join("gpt2-worker_loader.js");
        if let Ok(js) = std::fs::read_to_string(&loader) {
            let read = |name: &str| {
                std::fs::read(dist.join(name)).unwrap_or_else(|e| {
                    eprintln!("site_pages: {name}: {e}");
                    std::process::exit(1);
                })
            };
            match attention_live::chapters::security::worker_loader(
                &js,
                &read("gpt2-worker.js"),
                &read("gpt2-worker_bg.wasm"),
            ) {
                Some(checked) => std::fs::write(&loader, checked).unwrap_or_else(|e| {
                    eprintln!("site_pages: {}: {e}", loader.display());
                    std::process::exit(1);
                }),
                // Already rewritten (the build is re-run), or Trunk's shim changed: say so.
                None if js.contains("integrity") => {}
                None => {
                    eprintln!("site_pages: {} is not the loader shim expected; it is left unchecked", loader.display());
                    std::process::exit(1);
                }
            }
        }
        // The threaded build of the worker (scripts/build_threads.sh) has no shim: its loader is written here.
        if dist.join("gpt2-worker-mt.js").exists() {
            let loader = attention_live::chapters::security::checked_loader(
                "gpt2-worker-mt",
                &crate::read_file(&dist.join("gpt2-worker-mt.js")),
                &crate::read_file(&dist.join("gpt2-worker-mt_bg.wasm")),
            );
            std::fs::write(dist.join("gpt2-worker-mt_loader.js"), loader).unwrap_or_else(|e| {
                eprintln!("site_pages: gpt2-worker-mt_loader.js: {e}");
                std::process::exit(1);
            });
        }
        // Where the site will be served, if known: link previews then get absolute URLs and a picture.
        let site = std::env::var("SITE_URL").ok().filter(|s| !s.trim().is_empty());
        let mut written = 0;
        for page in pages() {
            let page = match &site {
                Some(site) => page.at_site(site),
                None => page,
            };
            let html = fill(&template, &page).unwrap_or_else(|e| {
                eprintln!("site_pages: {}: {e}", page.file);
                std::process::exit(1);
            });
            let path = dist.join(&page.file);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).unwrap_or_else(|e| {
                    eprintln!("site_pages: {}: {e}", dir.display());
                    std::process::exit(1);
                });
            }
            std::fs::write(&path, html).unwrap_or_else(|e| {
                eprintln!("site_pages: {}: {e}", path.display());
                std::process::exit(1);
            });
            written += 1;
        }
        println!("[build] static pages: {written} files with their own title, description and summary");
        // The search index, which the page fetches (it is not in the page's wasm).
        use attention_live::chapters::{SEARCH_FILE, SEARCH_JSON};
        std::fs::write(dist.join(SEARCH_FILE), SEARCH_JSON).unwrap_or_else(|e| die(&dist.join(SEARCH_FILE), e));
        write_precache(dist);
    }

    /// The folder of the page's build (`page-<hash>`), if there is one.
    fn page_folder(dist: &Path) -> Option<String> {
        let mut found: Vec<String> = std::fs::read_dir(dist)
            .ok()?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| name.starts_with("page-"))
            .collect();
        found.sort();
        found.pop()
    }

    fn die(what: &Path, e: impl std::fmt::Display) -> ! {
        eprintln!("site_pages: {}: {e}", what.display());
        std::process::exit(1);
    }

    /// Every file under `dir`, as (path relative to `root` with `/` separators, contents).
    fn files(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| die(dir, e));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| die(dir, e)).path();
            if path.is_dir() {
                files(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap_or(&path);
                let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                out.push((rel.join("/"), std::fs::read(&path).unwrap_or_else(|e| die(&path, e))));
            }
        }
    }

    /// The service worker's list of files to keep for offline reading, and its version.
    fn write_precache(dist: &Path) {
        use attention_live::chapters::offline::{fill_sw, precache, INFO_FILE, SW_FILE};
        let sw_path = dist.join(SW_FILE);
        let sw = std::fs::read_to_string(&sw_path).unwrap_or_else(|e| die(&sw_path, e));
        let mut all = Vec::new();
        files(dist, dist, &mut all);
        let pre = precache(&all);
        std::fs::write(&sw_path, fill_sw(&sw, &pre).unwrap_or_else(|e| die(&sw_path, e)))
            .unwrap_or_else(|e| die(&sw_path, e));
        let info = dist.join(INFO_FILE);
        let json = serde_json::to_string(&pre).unwrap_or_else(|e| die(&info, e));
        std::fs::write(&info, json).unwrap_or_else(|e| die(&info, e));
        println!(
            "[build] offline: {} files, {} bytes kept by the service worker (version {})",
            pre.files.len(),
            pre.bytes,
            pre.version
        );
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn read_file(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| {
        eprintln!("site_pages: {}: {e}", path.display());
        std::process::exit(1);
    })
}
