//! Offline reading (`chapters::offline`): what the service worker keeps, its version, and the
//! list written into `static/sw.js`; every page links the manifest and the script that
//! registers the worker.

use attention_live::chapters::offline::{fill_sw, precache, precached, Precache, INFO_FILE};

fn site() -> Vec<(String, Vec<u8>)> {
    [
        ("index.html", "<html>home</html>"),
        ("masking/index.html", "<html>masking</html>"),
        ("app-1_bg.wasm", "\0asm"),
        ("models/stories/model.safetensors", "weights"),
        ("sw.js", "const BUILD = /*build*/ null /*/build*/;"),
        (".DS_Store", "junk"),
        ("offline.json", "{}"),
    ]
    .into_iter()
    .map(|(p, d)| (p.to_string(), d.as_bytes().to_vec()))
    .collect()
}

#[test]
fn every_file_but_the_worker_and_hidden_ones_is_kept_and_counted() {
    let pre = precache(&site());
    assert_eq!(
        pre.files,
        ["app-1_bg.wasm", "index.html", "masking/index.html", "models/stories/model.safetensors", INFO_FILE]
    );
    let counted = ["<html>home</html>", "<html>masking</html>", "\0asm", "weights"];
    assert_eq!(pre.bytes, counted.iter().map(|s| s.len() as u64).sum::<u64>(), "offline.json is not counted");
    assert!(!precached("sw.js") && !precached("models/.hidden") && precached("models/x.json"));
    assert_eq!(pre.version.len(), 16);
}

#[test]
fn the_version_changes_with_any_file_and_only_then() {
    let v = precache(&site()).version;
    let mut same = site();
    same.reverse();
    same.iter_mut().find(|(p, _)| p == INFO_FILE).unwrap().1 = b"{\"other\": 1}".to_vec();
    same.iter_mut().find(|(p, _)| p == "sw.js").unwrap().1 = b"filled".to_vec();
    assert_eq!(precache(&same).version, v, "order, offline.json and sw.js itself do not count");
    let mut edited = site();
    edited[1].1 = b"<html>masking, edited</html>".to_vec();
    assert_ne!(precache(&edited).version, v, "a changed page is a new version");
    let mut moved = site();
    moved[0].1 = b"<html>home</html><html>".to_vec();
    moved[1].1 = b"masking</html>".to_vec();
    assert_ne!(precache(&moved).version, v, "bytes moved from one file to the next are a new version");
}

#[test]
fn the_list_goes_into_the_service_workers_slot_once() {
    let template = std::fs::read_to_string("static/sw.js").unwrap();
    let pre = precache(&site());
    let filled = fill_sw(&template, &pre).unwrap();
    assert!(!filled.contains("/*build*/ null"), "the slot is filled");
    assert_eq!(fill_sw(&filled, &pre).unwrap(), filled, "filling again changes nothing");
    let other = Precache { version: "0123456789abcdef".into(), ..pre.clone() };
    let refilled = fill_sw(&filled, &other).unwrap();
    assert!(refilled.contains("\"version\":\"0123456789abcdef\"") && !refilled.contains(&pre.version));
    // What the slot holds is the list as JSON (the worker reads `BUILD.files` and `BUILD.version`).
    let start = refilled.find("/*build*/").unwrap() + "/*build*/".len();
    let end = refilled.find("/*/build*/").unwrap();
    let back: Precache = serde_json::from_str(refilled[start..end].trim()).unwrap();
    assert_eq!(back, other);
    assert!(fill_sw("const BUILD = null;", &pre).is_err(), "a worker without the slot is an error, not a no-op");
}

#[test]
fn every_page_links_the_manifest_icons_and_the_worker_script() {
    let index = std::fs::read_to_string("index.html").unwrap();
    for needle in [
        "rel=\"manifest\" href=\"/site.webmanifest\"",
        "rel=\"apple-touch-icon\"",
        "<script src=\"/offline.js\" defer></script>",
        "rel=\"copy-file\" href=\"static/sw.js\"",
    ] {
        assert!(index.contains(needle), "index.html lacks {needle}");
    }
    assert!(!index.contains("href=\"data:,\""), "a real icon, not an empty one");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("static/site.webmanifest").unwrap()).unwrap();
    assert_eq!(manifest["display"], "standalone");
    let icons = manifest["icons"].as_array().unwrap();
    for (size, purpose) in [("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")] {
        let icon = icons.iter().find(|i| i["sizes"] == size && i["purpose"] == purpose).expect(size);
        let file = format!("static/{}", icon["src"].as_str().unwrap());
        let png = std::fs::read(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
        // A PNG's width and height are big-endian u32s at bytes 16 and 20.
        let side = u32::from_be_bytes(png[16..20].try_into().unwrap());
        assert_eq!(format!("{side}x{side}"), size, "{file}");
    }
}
