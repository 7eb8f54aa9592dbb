//! The files the site ships under `/models/` (the bundled models), with the size and SHA-256
//! each had when the book was built (`build.rs` hashes `static/models`). A served file that
//! differs (a stale cache, a proxy's error page, a tampered copy) is refused by name.

use sha2::{Digest, Sha256};

include!(concat!(env!("OUT_DIR"), "/bundled_gen.rs"));

/// The size and SHA-256 (hex) the build recorded for a site path such as
/// `/models/stories/model.safetensors`; `None` for a file the site does not ship.
pub fn expected(path: &str) -> Option<(u64, &'static str)> {
    FILES.iter().find(|f| f.0 == path).map(|f| (f.1, f.2))
}

/// Checks a fetched bundled file against the build's record; any other path passes unchecked.
pub fn check(path: &str, bytes: &[u8]) -> Result<(), String> {
    let Some((size, sha256)) = expected(path) else { return Ok(()) };
    if bytes.len() as u64 != size {
        return Err(format!(
            "{path} is {} bytes, but the book was built with a file of {size} bytes: \
             the server sent another file (reload the page; if it persists, the site is out of date)",
            bytes.len()
        ));
    }
    let got: String = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
    if got != sha256 {
        return Err(format!(
            "{path} has SHA-256 {}…, but the book was built with {}…: the server sent a different or corrupted file",
            &got[..12],
            &sha256[..12]
        ));
    }
    Ok(())
}
