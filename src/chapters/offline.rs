//! What the service worker keeps for reading offline, decided at build time
//! (`examples/site_pages.rs`, after Trunk and the route pages): every file of the built site
//! (each route's page, the stylesheet, both wasm engines and their loaders, the bundled models)
//! except the service worker itself. The list and a version go into `sw.js` (so a new build
//! is a changed `sw.js`, which is how a browser notices a new deployment) and into
//! `offline.json`, which the home page reads to say how much the browser keeps.
//!
//! The version is a hash of every listed file's path and contents: any change in the site
//! makes a new cache, and an unchanged rebuild keeps the reader's.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The service worker's own file (never precached: the browser fetches it to look for updates).
pub const SW_FILE: &str = "sw.js";
/// What the build writes for the page: the version, the number of files and their total size.
pub const INFO_FILE: &str = "offline.json";
/// The placeholder in `static/sw.js` that the build replaces with the list.
const SLOT_START: &str = "/*build*/";
const SLOT_END: &str = "/*/build*/";

/// The precache of one build, as `sw.js` and `offline.json` carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Precache {
    pub version: String,
    /// Paths relative to the site's root ("index.html", "models/stories/model.safetensors").
    pub files: Vec<String>,
    /// Their total size in bytes (`offline.json` itself not counted).
    pub bytes: u64,
}

/// Whether a file of the built site belongs in the precache: everything but the service worker
/// and hidden files.
pub fn precached(path: &str) -> bool {
    path != SW_FILE && !path.split('/').any(|part| part.starts_with('.'))
}

/// The precache of the site's files, given as (path relative to the root with `/` separators,
/// contents). `offline.json` is listed (the page reads it offline too) but neither counted nor
/// hashed, since it is written from the result.
pub fn precache(files: &[(String, Vec<u8>)]) -> Precache {
    let mut files: Vec<&(String, Vec<u8>)> = files.iter().filter(|(p, _)| precached(p) && p != INFO_FILE).collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut hash = Sha256::new();
    let mut bytes = 0u64;
    for (path, data) in &files {
        // Path and length first, so that moving bytes from one file to the next changes the hash.
        hash.update(path.as_bytes());
        hash.update([0]);
        hash.update((data.len() as u64).to_le_bytes());
        hash.update(data);
        bytes += data.len() as u64;
    }
    let version: String = hash.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let mut list: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
    list.push(INFO_FILE.to_string());
    list.sort();
    Precache { version, files: list, bytes }
}

/// `sw.js` (the template in `static/`, or an earlier build's output) with the precache in its
/// slot: `const BUILD = /*build*/ null /*/build*/;` becomes `/*build*/ {…} /*/build*/`.
pub fn fill_sw(sw: &str, pre: &Precache) -> Result<String, String> {
    let start = sw.find(SLOT_START).ok_or("sw.js has no /*build*/ slot for the precache list")?;
    let end = sw[start..].find(SLOT_END).map(|i| start + i).ok_or("sw.js's /*build*/ slot is not closed")?;
    let json = serde_json::to_string(pre).map_err(|e| e.to_string())?;
    Ok(format!("{}{SLOT_START} {json} {}", &sw[..start], &sw[end..]))
}
