//! The built site's defences, applied at build time to the `index.html` Trunk writes (by
//! `examples/site_pages.rs`, before each route's page is made from it):
//!
//! - a Content-Security-Policy as a `<meta>` tag, since a static host may set no headers: scripts
//!   only from the site itself or inline ones whose SHA-256 is listed (Trunk's start-up module and
//!   the theme snippet), wasm compiled with `'wasm-unsafe-eval'` only, workers (the service
//!   worker too) and the web app manifest from the site,
//!   connections to the site and to the model hosts a reader may choose (any https URL, and
//!   127.0.0.1 / localhost for a reader's own server), no plugins, no `<base>` or form targets;
//! - the wasm's integrity checked where it is fetched: Trunk puts the hash on a `<link
//!   rel="preload" as="fetch">`, where Chromium ignores it (with a console warning on every page);
//!   the hash moves into the start-up script's own `fetch(url, { integrity })`, which the browser
//!   enforces, and the preload keeps the same request mode so it is still used;
//! - the worker's loader fetches its glue script and wasm with their integrity too, and calls
//!   wasm-bindgen's initialiser with an object, not a bare path (the deprecated form, which warned
//!   in the console on the pages that start the worker).

use sha2::{Digest, Sha256};

/// What a host may add as real headers (the README says so): `frame-ancestors` only works there.
pub const POLICY: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval' {HASHES}; \
style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self'; \
connect-src 'self' https: http://127.0.0.1:* http://localhost:*; worker-src 'self'; \
manifest-src 'self'; object-src 'none'; base-uri 'self'; form-action 'none'";

/// Standard base64 (RFC 4648, with padding), as CSP hashes are written.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() { ABC[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

/// `'sha256-…'` of a script's text, as CSP matches inline scripts (the exact bytes between the tags).
pub fn script_hash(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

/// The text of every inline `<script>` (one without `src`).
pub fn inline_scripts(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<script") {
        let after = &rest[start..];
        let Some(open_end) = after.find('>') else { break };
        let tag = &after[..open_end];
        let body = &after[open_end + 1..];
        let Some(close) = body.find("</script>") else { break };
        if !tag.contains(" src=") {
            out.push(&body[..close]);
        }
        rest = &body[close..];
    }
    out
}

/// Moves the wasm preload's integrity into the start-up script's fetch (see the module doc).
fn wasm_integrity(html: &str) -> Result<String, String> {
    let Some(at) = html.find("<link rel=\"preload\"") else { return Ok(html.to_string()) };
    let end = at + html[at..].find('>').ok_or("an unclosed preload link")?;
    let link = &html[at..end];
    let attr = |name: &str| {
        let key = format!(" {name}=\"");
        link.find(&key).map(|i| {
            let v = &link[i + key.len()..];
            v[..v.find('"').unwrap_or(v.len())].to_string()
        })
    };
    let (Some(href), Some(integrity)) = (attr("href"), attr("integrity")) else { return Ok(html.to_string()) };
    let call = format!("init({{ module_or_path: '{href}' }})");
    if !html.contains(&call) {
        return Err(format!("the start-up script does not load {href} as expected: {call}"));
    }
    let checked = format!(
        "init({{ module_or_path: fetch('{href}', {{ integrity: '{integrity}', credentials: 'same-origin' }}) }})"
    );
    let bare_link = link.replace(&format!(" integrity=\"{integrity}\""), "");
    Ok(html.replacen(link, &bare_link, 1).replacen(&call, &checked, 1))
}

/// `index.html` with the policy and the wasm's integrity (idempotent: a page already done is
/// returned unchanged).
pub fn harden(html: &str) -> Result<String, String> {
    if html.contains("http-equiv=\"Content-Security-Policy\"") {
        return Ok(html.to_string());
    }
    let html = wasm_integrity(html)?;
    let hashes: Vec<String> = inline_scripts(&html).into_iter().map(script_hash).collect();
    let meta = format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        POLICY.replace("{HASHES}", &hashes.join(" "))
    );
    let anchor = "<meta charset=\"utf-8\">";
    let at = html.find(anchor).ok_or("index.html has no <meta charset=\"utf-8\"> to put the policy after")?;
    let at = at + anchor.len();
    Ok(format!("{}\n  {meta}{}", &html[..at], &html[at..]))
}

/// The worker's loader (Trunk's shim, `importScripts("./gpt2-worker.js");wasm_bindgen("./gpt2-worker_bg.wasm");`)
/// rewritten as [`checked_loader`] for the worker's glue script (`glue`) and wasm (`wasm`).
/// `None` when the shim is not the expected one (the caller then keeps it and says so).
pub fn worker_loader(js: &str, glue: &[u8], wasm: &[u8]) -> Option<String> {
    const SHIM: &str = r#"importScripts("./gpt2-worker.js");wasm_bindgen("./gpt2-worker_bg.wasm");"#;
    (js.trim() == SHIM).then(|| checked_loader("gpt2-worker", glue, wasm))
}

/// The loader of the compute worker `name` (`name.js`, its wasm-bindgen glue, and
/// `name_bg.wasm`): the glue script and the wasm are checked like the page's, both fetched with
/// the SHA-256 of the files built beside it (`glue`, `wasm`); the glue runs from the checked
/// bytes (a blob URL: `importScripts` itself takes no integrity), kept as `glueUrl` for the
/// threaded build's pool threads (`worker::pool`), and wasm-bindgen's initialiser gets an object
/// (its deprecated bare-path form warned in the console). A file that differs stops the worker
/// with an error the page reports.
pub fn checked_loader(name: &str, glue: &[u8], wasm: &[u8]) -> String {
    let sri = |bytes: &[u8]| format!("sha256-{}", base64(&Sha256::digest(bytes)));
    format!(
        r#"// The compute worker's loader: its glue script and wasm, each checked against the hash of the
// file the book was built with (a different file stops the worker with an error the page shows).
const checked = (url, integrity) =>
  fetch(url, {{ integrity, credentials: "same-origin" }}).then((r) => {{
    if (!r.ok) throw new Error(url + " answered HTTP " + r.status);
    return r;
  }});
checked("./{name}.js", "{glue}")
  .then((r) => r.blob())
  .then((blob) => {{
    self.glueUrl = URL.createObjectURL(blob);
    importScripts(self.glueUrl);
    return wasm_bindgen({{ module_or_path: checked("./{name}_bg.wasm", "{wasm}") }});
  }})
  .catch((e) => setTimeout(() => {{
    throw new Error("the compute worker's files are not those the book was built with, " +
      "or could not be read: " + e.message);
  }}));
"#,
        glue = sri(glue),
        wasm = sri(wasm)
    )
}

/// The page's split loader (`__wasm_split.js`, written by `wasm-split-cli`; `scripts/build_page.sh`)
/// with each chunk's fetch carrying the chunk's SHA-256 (`read` gives a chunk's bytes by its file
/// name), so that the browser checks the demos' code as it checks the main wasm. Unchanged when
/// already done; an error when it fetches a chunk in a form not recognised, rather than a loader
/// that fetches some chunks unchecked.
pub fn split_loader(js: &str, mut read: impl FnMut(&str) -> Result<Vec<u8>, String>) -> Result<String, String> {
    const OPEN: &str = "fetch(new URL(\"./";
    const CLOSE: &str = "\", import.meta.url))";
    let mut out = String::with_capacity(js.len() + 64 * 256);
    let mut rest = js;
    while let Some(at) = rest.find(OPEN) {
        let after = &rest[at + OPEN.len()..];
        let name_end = after.find('"').ok_or("an unclosed chunk name")?;
        let name = &after[..name_end];
        if !after[name_end..].starts_with(CLOSE) {
            if after[name_end..].starts_with("\", import.meta.url), { integrity: ") {
                // Done by an earlier run of the build.
                out.push_str(&rest[..at + OPEN.len() + name_end]);
                rest = &after[name_end..];
                continue;
            }
            return Err(format!("the chunk {name} is fetched in a form not recognised"));
        }
        if !name.ends_with(".wasm") || name.contains(['/', '\\']) {
            return Err(format!("{name:?} is not a chunk beside the loader"));
        }
        let sri = format!("sha256-{}", base64(&Sha256::digest(read(name)?)));
        out.push_str(&rest[..at]);
        out.push_str(&format!("{OPEN}{name}\", import.meta.url), {{ integrity: \"{sri}\" }})"));
        rest = &after[name_end + CLOSE.len()..];
    }
    out.push_str(rest);
    if !out.contains("integrity") {
        return Err("the split loader fetches no chunk".into());
    }
    Ok(out)
}

/// The name of the folder `scripts/build_page.sh` builds the page into (`page-<hash>`), of the
/// files in it the start-up script names, and of the split loader there.
pub const PAGE_JS: &str = "attention-live.js";
pub const PAGE_WASM: &str = "attention-live_bg.wasm";
pub const SPLIT_LOADER: &str = "__wasm_split.js";

/// `index.html` with the page's start-up script and preloads at the end of its head, in the form
/// Trunk writes them (so that [`harden`] moves the wasm's integrity into the fetch): the main
/// script, the split loader and the main wasm of the build in `/{folder}/`, each with its
/// SHA-256. Unchanged when the page already starts that build.
pub fn page_start(html: &str, folder: &str, js: &[u8], link: &[u8], wasm: &[u8]) -> Result<String, String> {
    let sri = |bytes: &[u8]| format!("sha256-{}", base64(&Sha256::digest(bytes)));
    let (js_url, link_url, wasm_url) =
        (format!("/{folder}/{PAGE_JS}"), format!("/{folder}/{SPLIT_LOADER}"), format!("/{folder}/{PAGE_WASM}"));
    let import = format!("import init from '{js_url}';");
    if html.contains(&import) {
        return Ok(html.to_string());
    }
    let tags = format!(
        "<script type=\"module\">\n{import}\nawait init({{ module_or_path: '{wasm_url}' }});\n</script>\n\
         <link rel=\"modulepreload\" href=\"{js_url}\" crossorigin=\"anonymous\" integrity=\"{}\">\
         <link rel=\"modulepreload\" href=\"{link_url}\" crossorigin=\"anonymous\" integrity=\"{}\">\
         <link rel=\"preload\" href=\"{wasm_url}\" crossorigin=\"anonymous\" integrity=\"{}\" as=\"fetch\" \
         type=\"application/wasm\">",
        sri(js),
        sri(link),
        sri(wasm)
    );
    let at = html.rfind("</head>").ok_or("index.html has no </head>")?;
    Ok(format!("{}{tags}{}", &html[..at], &html[at..]))
}
