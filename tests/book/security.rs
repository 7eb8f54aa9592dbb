//! The built site's defences (`chapters::security`): the CSP hashes of inline scripts, the policy
//! inserted once, the wasm's integrity moved to where the browser checks it, the worker loader.

use attention_live::chapters::security::{
    base64, checked_loader, harden, inline_scripts, page_start, script_hash, split_loader, worker_loader,
};
use sha2::Digest;

#[test]
fn script_hashes_are_the_browsers() {
    // `printf 'alert(1)' | openssl dgst -sha256 -binary | base64`
    assert_eq!(script_hash("alert(1)"), "'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='");
    // RFC 4648's test vectors.
    let cases = [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")];
    for (plain, coded) in cases {
        assert_eq!(base64(plain.as_bytes()), coded);
    }
}

const TRUNK: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <script>
    try { var t = 1; } catch (e) {}
  </script>
<script type="module">
import init, * as bindings from '/app-1.js';
const wasm = await init({ module_or_path: '/app-1_bg.wasm' });
</script>
<link rel="modulepreload" href="/app-1.js" crossorigin="anonymous" integrity="sha384-JS">
<link rel="preload" href="/app-1_bg.wasm" crossorigin="anonymous" integrity="sha384-WASM" as="fetch">
</head>
<body><script src="/x.js"></script></body>
</html>"#;

#[test]
fn the_policy_lists_every_inline_script_and_the_wasm_is_checked_where_it_is_fetched() {
    let out = harden(TRUNK).unwrap();
    let inline = inline_scripts(&out);
    assert_eq!(inline.len(), 2, "the external script is not an inline one");
    let meta = out.lines().find(|l| l.contains("Content-Security-Policy")).expect("a policy");
    for script in &inline {
        assert!(meta.contains(&script_hash(script)), "{meta} lacks the hash of {script}");
    }
    assert!(
        meta.contains("'wasm-unsafe-eval'")
            && !meta.contains("'unsafe-eval'")
            && !meta.contains("script-src 'self' 'unsafe-inline'")
    );
    assert!(out.contains("fetch('/app-1_bg.wasm', { integrity: 'sha384-WASM'"), "{out}");
    assert!(!out.contains("integrity=\"sha384-WASM\""), "the preload no longer carries the ignored attribute");
    assert!(out.contains("integrity=\"sha384-JS\""), "the module preload keeps its own");
    // After the charset, once, however many times the build runs.
    assert!(out.find("Content-Security-Policy").unwrap() > out.find("charset").unwrap());
    assert_eq!(harden(&out).unwrap(), out);
    // A start-up script in another form is an error, not a page whose wasm goes unchecked.
    assert!(harden(&TRUNK.replace("init({ module_or_path: '/app-1_bg.wasm' })", "init('/app-1_bg.wasm')")).is_err());
}

#[test]
fn the_worker_loader_checks_its_glue_and_wasm_and_calls_the_initialiser_with_an_object() {
    let shim = r#"importScripts("./gpt2-worker.js");wasm_bindgen("./gpt2-worker_bg.wasm");"#;
    let js = worker_loader(shim, b"glue", b"wasm").expect("Trunk's shim is rewritten");
    // `printf glue | openssl dgst -sha256 -binary | base64`, and the same for `wasm`.
    assert!(
        js.contains(r#"checked("./gpt2-worker.js", "sha256-mVUt6ZmKK4Jn34C1mENCQ33aMkaJ4tfGtqDIp/OS/7U=")"#),
        "{js}"
    );
    assert!(js.contains(r#"module_or_path: checked("./gpt2-worker_bg.wasm", "sha256-"#), "{js}");
    assert!(!js.contains(r#"wasm_bindgen("./"#), "no deprecated bare-path initialisation");
    // A loader already rewritten, or another shim, is not touched.
    assert_eq!(worker_loader(&js, b"glue", b"wasm"), None);
}

/// The threaded build's loader (written by the build: it has no shim) checks its own files and
/// keeps the glue's blob URL, which the pool's threads load (src/worker/pool.rs).
#[test]
fn the_threaded_workers_loader_checks_its_files_and_keeps_its_glue_for_the_pool() {
    let js = checked_loader("gpt2-worker-mt", b"glue", b"wasm");
    assert!(js.contains(r#"checked("./gpt2-worker-mt.js", "sha256-mVUt6ZmKK4Jn34C1mENCQ33aMkaJ4tfGtqDIp/OS/7U=")"#));
    assert!(js.contains(r#"module_or_path: checked("./gpt2-worker-mt_bg.wasm", "sha256-"#), "{js}");
    assert!(js.contains("self.glueUrl = URL.createObjectURL(blob);\n    importScripts(self.glueUrl);"), "{js}");
    assert!(!js.contains("revokeObjectURL"), "the pool's threads still need the glue");
}

#[test]
fn the_split_loader_fetches_every_chunk_with_its_hash() {
    let js = r#"const __chunk_1 = makeLoad(() => {
    const src = fetch(new URL("./chunk_1.wasm", import.meta.url));
}, []);
const split = makeLoad(() => {
    const src = fetch(new URL("./split_scoring.wasm", import.meta.url));
}, [__chunk_1]);"#;
    let read = |name: &str| Ok(name.as_bytes().to_vec());
    let out = split_loader(js, read).unwrap();
    let sri = format!("sha256-{}", base64(&sha2::Sha256::digest(b"chunk_1.wasm")));
    assert!(out.contains(&format!(r#"fetch(new URL("./chunk_1.wasm", import.meta.url), {{ integrity: "{sri}" }})"#)));
    assert_eq!(out.matches("integrity").count(), 2, "{out}");
    assert!(out.contains("}, [__chunk_1]);"), "the rest is unchanged: {out}");
    // Run again on its own output: unchanged.
    assert_eq!(split_loader(&out, read).unwrap(), out);
    // A chunk that cannot be read, one fetched otherwise, or none at all: an error, not a loader left unchecked.
    assert!(split_loader(js, |_| Err("gone".to_string())).is_err());
    assert!(split_loader(&js.replace("import.meta.url))", "base))"), read).is_err());
    assert!(split_loader("const x = 1;", read).is_err());
}

#[test]
fn the_page_starts_its_split_build_with_every_file_checked() {
    let html = "<!DOCTYPE html>\n<html><head>\n  <meta charset=\"utf-8\">\n  <!-- a comment: </head> -->\n\
                </head><body></body></html>";
    let out = page_start(html, "page-1", b"js", b"link", b"wasm").unwrap();
    let sri = |b: &[u8]| format!("sha256-{}", base64(&sha2::Sha256::digest(b)));
    // At the end of the head, not inside a comment that mentions it.
    assert!(out.find("<script type=\"module\">").unwrap() > out.find("-->").unwrap(), "{out}");
    assert!(out.contains(&format!(
        "href=\"/page-1/__wasm_split.js\" crossorigin=\"anonymous\" integrity=\"{}\"",
        sri(b"link")
    )));
    assert_eq!(page_start(&out, "page-1", b"js", b"link", b"wasm").unwrap(), out, "done once");
    // Then hardened as Trunk's: the wasm is checked where it is fetched.
    let hard = harden(&out).unwrap();
    assert!(
        hard.contains(&format!("fetch('/page-1/attention-live_bg.wasm', {{ integrity: '{}'", sri(b"wasm"))),
        "{hard}"
    );
    assert!(hard.contains(&format!(
        "href=\"/page-1/attention-live.js\" crossorigin=\"anonymous\" integrity=\"{}\"",
        sri(b"js")
    )));
}
