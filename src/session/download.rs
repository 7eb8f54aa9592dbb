//! The checks a model download goes through, DOM-free (the worker's `fetch` calls them; tests
//! in tests/engines/protocol.rs): how much memory to reserve, when a file is too large, when the
//! server's `Content-Length` and the body disagree, and when the server sent a web page. All
//! sizes are u64, so the same checks hold in the 32-bit browser build.

/// The largest file the page loads: a browser's WebAssembly memory is at most 4 GiB, and a model's
/// weights, widened to f32, must fit in it (GPT-2 medium, 1.52 GB, fits; large does not). The
/// model file itself is never held whole (`model::stream`): only `config.json` is read into one
/// buffer, with [`reserve_for`] and [`grow_to`].
pub const MAX_FILE_BYTES: u64 = 1_600_000_000;

/// At most this much is reserved up front from a declared `Content-Length`; the rest is reserved
/// only once this much has arrived ([`grow_to`]), so a server that lies about the length cannot
/// make the page reserve memory for nothing.
pub const MAX_RESERVE_BYTES: u64 = 64 << 20;

/// A download that receives no bytes for this long is stopped.
pub const STALL_SECONDS: u32 = 30;

/// The bytes to reserve for a body whose `Content-Length` is `declared`.
pub fn reserve_for(declared: Option<u64>) -> usize {
    // The cap fits in a 32-bit usize.
    declared.unwrap_or(0).min(MAX_RESERVE_BYTES) as usize
}

/// The capacity to grow a download's buffer to when `incoming` more bytes do not fit after `len`.
/// With a declared `Content-Length` (already checked against [`MAX_FILE_BYTES`]), once the body
/// has filled the first reservation the rest is reserved in one step, exactly: growing by
/// doubling would, for GPT-2 small's 548 MB, end with a 1 GiB buffer and hold the 512 MiB one
/// beside it while copying (1.5 GiB at once, where the file needs 0.55). A server that lies must
/// first send [`MAX_RESERVE_BYTES`] for real. Without a length: double, as a `Vec` would.
pub fn grow_to(declared: Option<u64>, len: usize, incoming: usize) -> usize {
    let needed = len.saturating_add(incoming);
    match declared {
        Some(d) if d <= MAX_FILE_BYTES && needed as u64 <= d => d as usize,
        _ => needed.max(len.saturating_mul(2)),
    }
}

/// Refuses a file the server declares larger than [`MAX_FILE_BYTES`], before downloading it.
pub fn check_declared(url: &str, declared: Option<u64>) -> Result<(), String> {
    match declared {
        Some(n) if n > MAX_FILE_BYTES => Err(too_large(url, n)),
        _ => Ok(()),
    }
}

/// Checks the bytes received so far (`received`, after one more chunk): never more than the
/// maximum, nor more than the server declared.
pub fn check_received(url: &str, received: u64, declared: Option<u64>) -> Result<(), String> {
    if received > MAX_FILE_BYTES {
        return Err(too_large(url, received));
    }
    match declared {
        Some(d) if received > d => Err(format!(
            "{url} sent more than the {d} bytes its server announced (Content-Length): the download is refused \
             as damaged"
        )),
        _ => Ok(()),
    }
}

/// Checks a finished body of `received` bytes against what the server declared: fewer bytes
/// mean the connection closed early.
pub fn check_complete(url: &str, received: u64, declared: Option<u64>) -> Result<(), String> {
    match declared {
        Some(d) if received != d => Err(format!(
            "{url} ended after {received} of the {d} bytes its server announced: the connection closed early; \
             try again"
        )),
        _ => Ok(()),
    }
}

/// Whether a response is a web page (an error or login page served with status 200) rather than
/// a model file: its content type says HTML, or its first bytes are an HTML tag.
pub fn is_web_page(content_type: Option<&str>, head: &[u8]) -> bool {
    if content_type.is_some_and(|t| t.trim().to_ascii_lowercase().starts_with("text/html")) {
        return true;
    }
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    let head = &head[start..head.len().min(start + 16)];
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    [&b"<!doctype"[..], b"<html", b"<head", b"<body", b"<?xml", b"<!--"].iter().any(|tag| lower.starts_with(tag))
}

/// What the page says when the server sent a web page for `url`.
pub fn web_page_error(url: &str) -> String {
    format!("{url}: the server sent a web page, not a model file (an error or sign-in page?): is the address right?")
}

fn too_large(url: &str, bytes: u64) -> String {
    format!(
        "{url} is {:.2} GB, more than this page can load ({:.1} GB at most: the browser gives a page 4 GB of \
         memory, and the model's weights must fit in it)",
        bytes as f64 / 1e9,
        MAX_FILE_BYTES as f64 / 1e9
    )
}
