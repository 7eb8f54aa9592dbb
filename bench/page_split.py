"""What a first visit to each chapter fetches of the split page (scripts/build_page.sh): the main
module and its scripts, then the chapter's chunk and the shared chunks it needs (the merged one,
scripts/merge_chunks.py, counted once), as its split loader (`__wasm_split.js`) lists them.
Sizes in KiB, raw and `gzip -9` (each file alone, as a host compresses them).

    python3 bench/page_split.py [DIST]        (default dist/)
"""

import gzip
import os
import re
import sys

dist = sys.argv[1] if len(sys.argv) > 1 else "dist"
folders = sorted(d for d in os.listdir(dist) if d.startswith("page-"))
if not folders:
    sys.exit(f"{dist} has no page-*/ folder: build the site first (scripts/build.sh)")
folder = os.path.join(dist, folders[-1])


def size(names):
    raw = packed = 0
    for name in names:
        data = open(os.path.join(folder, name), "rb").read()
        raw += len(data)
        packed += len(gzip.compress(data, 9))
    return raw / 1024, packed / 1024


loader = open(os.path.join(folder, "__wasm_split.js")).read()
# `const __chunk_7 = makeLoad(() => { … fetch(new URL("./chunk_7.wasm" …` and
# `export const __wasm_split_load_scoring = wrapAsyncCb(makeLoad(() => { … "./split_scoring.wasm" …
# }, [__chunk_7, …]));`
FETCH = r'makeLoad\(\(\) => \{\s*const src = fetch\(new URL\("\./([\w.]+)"'
chunk_file = dict(re.findall(r"const (__chunk_\w+) = " + FETCH, loader))
# A chunk merged into another (scripts/merge_chunks.py): `const __chunk_7 = __chunk_common;`.
for alias, target in re.findall(r"const (__chunk_\d+) = (__chunk_\w+);", loader):
    chunk_file[alias] = chunk_file[target]
splits = re.findall(
    r"export const __wasm_split_load_(\w+) = wrapAsyncCb\(" + FETCH + r".*?\n, \[([^\]]*)\]\)\);",
    loader,
    re.S,
)
if not splits:
    sys.exit(f"{folder}/__wasm_split.js lists no chapter in the form expected")

main = ["attention-live_bg.wasm", "attention-live.js", "__wasm_split.js"]
raw, packed = size(main)
print(f"{'what':44} {'files':>5} {'raw':>9} {'gzip':>9}")
print(f"{'every page: main wasm, glue, split loader':44} {len(main):5} {raw:9.1f} {packed:9.1f}")
for chapter, own, deps in sorted(splits):
    files = sorted({own} | {chunk_file[d.strip()] for d in deps.split(",") if d.strip()})
    raw, packed = size(files)
    print(f"{'  + the demos of ' + chapter:44} {len(files):5} {raw:9.1f} {packed:9.1f}")
every = [f for f in os.listdir(folder) if f.endswith(".wasm") and f != "attention-live_bg.wasm"]
raw, packed = size(every)
print(f"{'every chunk (what the offline copy adds)':44} {len(every):5} {raw:9.1f} {packed:9.1f}")
