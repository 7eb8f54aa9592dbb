"""Merges the small and the widely shared chunks of the split page into one (scripts/build_page.sh).

`wasm-split-cli` makes a chunk for every set of chapters that shares some code: 125 chunks for
12 chapters, so that a chapter needs 23 to 77 files, and each costs a fetch and an instantiation
(about 3 ms a file on this project's 2-core machine). A chunk needed by at least half the
chapters, or smaller than SMALL bytes gzipped, goes into `chunk_common.wasm` instead, which every
chapter then loads: a few more bytes for a chapter that did not need all of it, a few files
instead of dozens.

The chunks import the same three things (`__wasm_split`: the memory, the function table and one
global) and export nothing: they meet only through the table. binaryen's `wasm-merge` joins
modules by their imports and exports, but it would keep each module's imported memory apart; so
the first chunk exports what it imports, the others import those from it, and `wasm-merge` then
leaves one set of imports. The split loader (`__wasm_split.js`) loads the merged file once for
every chunk it replaces.

    python3 scripts/merge_chunks.py DIR        (DIR: the split page, before its integrity is added)
"""

import gzip
import math
import os
import re
import subprocess
import sys

SMALL = 1536
FEATURES = ["--enable-bulk-memory", "--enable-nontrapping-float-to-int", "--enable-sign-ext",
            "--enable-mutable-globals"]


def leb(data, i):
    """An unsigned LEB128 at `i`: (value, index after it)."""
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def uleb(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def name(text):
    raw = text.encode()
    return uleb(len(raw)) + raw


def sections(data):
    """The module's sections: (id, payload), in order."""
    if data[:8] != b"\0asm\1\0\0\0":
        raise ValueError("not a wasm module")
    out, i = [], 8
    while i < len(data):
        sid = data[i]
        size, i = leb(data, i + 1)
        out.append((sid, data[i:i + size]))
        i += size
    return out


def assemble(secs):
    return b"\0asm\1\0\0\0" + b"".join(bytes([sid]) + uleb(len(p)) + p for sid, p in secs)


EXPECTED_IMPORTS = {("__wasm_split", "memory", 2), ("__wasm_split", "__indirect_function_table", 1),
                    ("__wasm_split", "__wasm_split_shared0", 3)}


def imports(payload):
    """The import section's entries as (module, field, kind, the entry's bytes after the names)."""
    count, i = leb(payload, 0)
    out = []
    for _ in range(count):
        mlen, i = leb(payload, i)
        module = payload[i:i + mlen].decode()
        i += mlen
        flen, i = leb(payload, i)
        field = payload[i:i + flen].decode()
        i += flen
        kind = payload[i]
        start = i + 1
        if kind == 0:  # function: a type index
            _, i = leb(payload, start)
        elif kind == 1:  # table: a reference type and limits
            flags = payload[start + 1]
            _, i = leb(payload, start + 2)
            if flags & 1:
                _, i = leb(payload, i)
        elif kind == 2:  # memory: limits
            flags = payload[start]
            _, i = leb(payload, start + 1)
            if flags & 1:
                _, i = leb(payload, i)
        elif kind == 3:  # global: a value type and mutability
            i = start + 2
        else:
            raise ValueError(f"an import of kind {kind}")
        out.append((module, field, kind, payload[start:i]))
    return out


def checked(data, path):
    """The chunk's sections, and whether it imports all three (wasm-opt drops an unused import)."""
    secs = sections(data)
    imps = [p for sid, p in secs if sid == 2]
    found = {(m, f, k) for m, f, k, _ in imports(imps[0])} if imps else set()
    if not found <= EXPECTED_IMPORTS or any(sid == 7 for sid, _ in secs):
        raise ValueError(f"{path}: a chunk in a form not expected (imports {sorted(found)})")
    return secs, found == EXPECTED_IMPORTS


def exporting_its_imports(secs):
    """The first chunk, exporting what it imports, under the same names."""
    exports = uleb(3) + b"".join(name(f) + bytes([k]) + uleb(0) for _, f, k in sorted(EXPECTED_IMPORTS))
    at = next((n for n, (sid, _) in enumerate(secs) if sid in (8, 9, 12, 10, 11)), len(secs))
    return secs[:at] + [(7, exports)] + secs[at:]


def importing_from(secs, module):
    """Another chunk, importing what it imports of the three from `module` instead."""
    out = []
    for sid, payload in secs:
        if sid == 2:
            entries = imports(payload)
            payload = uleb(len(entries)) + b"".join(name(module) + name(f) + bytes([k]) + rest
                                                    for _, f, k, rest in entries)
        out.append((sid, payload))
    return out


def main():
    folder = sys.argv[1]
    loader_path = os.path.join(folder, "__wasm_split.js")
    loader = open(loader_path).read()
    chunk_def = re.compile(
        r"/\* ([a-z0-9_, ]+) \*/\nconst (__chunk_\d+) = makeLoad\(\(\) => \{\n"
        r"    const src = fetch\(new URL\(\"\./(chunk_\d+\.wasm)\", import\.meta\.url\)\);\n"
        r"    return async \(imports\) => \(WebAssembly\.instantiateStreaming\(src, imports\)\);\n\}\n, \[\]\);\n")
    chunks = chunk_def.findall(loader)
    splits = re.findall(r"export const __wasm_split_load_(\w+) = ", loader)
    if not chunks or not splits or len(chunks) != loader.count("const __chunk_"):
        sys.exit(f"{loader_path} is not in the form expected (a new wasm-split-cli?): its chunks cannot be merged")
    half = math.ceil(len(splits) / 2)
    merged = []
    for users, var, file in chunks:
        data = open(os.path.join(folder, file), "rb").read()
        if len(users.split(", ")) >= half or len(gzip.compress(data, 9)) < SMALL:
            merged.append((var, file, checked(data, file)))
    # The first imports all three, to export them to the others.
    merged.sort(key=lambda c: not c[2][1])
    if len(merged) < 2 or not merged[0][2][1]:
        return
    work = os.path.join(folder, "merge")
    os.makedirs(work, exist_ok=True)
    args = []
    for n, (var, file, (secs, _)) in enumerate(merged):
        secs = exporting_its_imports(secs) if n == 0 else importing_from(secs, "c0")
        path = os.path.join(work, file)
        open(path, "wb").write(assemble(secs))
        args += [path, f"c{n}"]
    common = os.path.join(folder, "chunk_common.wasm")
    subprocess.run(["wasm-merge", *args, "-o", common, *FEATURES], check=True)
    subprocess.run(["wasm-opt", "-Oz", *FEATURES, "--strip-producers", "--strip-target-features", common, "-o", common],
                   check=True)
    for _, file, _ in merged:
        os.remove(os.path.join(folder, file))
        os.remove(os.path.join(work, file))
    os.rmdir(work)
    # The loader: one definition for the merged file, and each chunk it replaces an alias of it.
    gone = {var for var, _, _ in merged}
    first = True

    def replace(m):
        nonlocal first
        if m[2] not in gone:
            return m[0]
        head = ""
        if first:
            first = False
            head = ("/* the chunks shared by most chapters, and the small ones (scripts/merge_chunks.py) */\n"
                    "const __chunk_common = makeLoad(() => {\n"
                    "    const src = fetch(new URL(\"./chunk_common.wasm\", import.meta.url));\n"
                    "    return async (imports) => (WebAssembly.instantiateStreaming(src, imports));\n}\n, []);\n")
        return f"{head}/* {m[1]} */\nconst {m[2]} = __chunk_common;\n"

    open(loader_path, "w").write(chunk_def.sub(replace, loader))
    print(f"[build] the page: {len(merged)} of {len(chunks)} chunks merged into chunk_common.wasm "
          f"({os.path.getsize(common) // 1024} KiB)")


main()
