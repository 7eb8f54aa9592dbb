"""Pins SmolLM2-135M's three files for the page: prints `SMOLLM2_PINS` for src/session/manifest.rs.

Run where the Hugging Face hub is reachable (it is not on the machine this book is built on):

    python3 scripts/llama/pin_smollm2.py            # the current revision of main
    python3 scripts/llama/pin_smollm2.py <commit>   # a given revision

Needs only Python 3's standard library. It asks the hub's API for the revision's commit and its
files' metadata (`/api/models/HuggingFaceTB/SmolLM2-135M/revision/<rev>?blobs=true`):
model.safetensors is stored with Git LFS, whose metadata gives its size and SHA-256 (the hash of
the file's bytes, which is what the page computes). For config.json and tokenizer.json, unless the
metadata has an LFS hash for them too, it downloads them at that commit and hashes them here (the
hub's blob ids are git SHA-1s, not SHA-256s). It then downloads nothing else.

Paste the printed lines over `SMOLLM2_PINS` in src/session/manifest.rs, with the commit in its
comment. The page's download of SmolLM2-135M is then checked against these sizes and hashes (the
size before downloading, from Content-Length, the SHA-256 after), as GPT-2 small's is.
"""
import hashlib
import json
import sys
import urllib.request

REPO = "HuggingFaceTB/SmolLM2-135M"
FILES = ["config.json", "model.safetensors", "tokenizer.json"]


def get(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read()


def main():
    rev = sys.argv[1] if len(sys.argv) > 1 else "main"
    meta = json.loads(get(f"https://huggingface.co/api/models/{REPO}/revision/{rev}?blobs=true"))
    commit = meta["sha"]
    siblings = {s["rfilename"]: s for s in meta.get("siblings", [])}
    pins = []
    for name in FILES:
        s = siblings.get(name)
        if s is None:
            sys.exit(f"{REPO}@{commit} has no {name}")
        lfs = s.get("lfs")
        if lfs and "sha256" in lfs:
            size, sha = int(lfs["size"]), lfs["sha256"]
        else:
            data = get(f"https://huggingface.co/{REPO}/resolve/{commit}/{name}")
            size, sha = len(data), hashlib.sha256(data).hexdigest()
            if "size" in s and int(s["size"]) != size:
                sys.exit(f"{name}: the metadata says {s['size']} bytes, the download has {size}")
        pins.append((size, sha))
    print(f"// {REPO} at revision {commit}: config.json, model.safetensors, tokenizer.json")
    print("pub const SMOLLM2_PINS: Option<[(u64, &str); 3]> = Some([")
    for (size, sha), name in zip(pins, FILES):
        print(f'    ({size:_}, "{sha}"), // {name}')
    print("]);")


if __name__ == "__main__":
    main()
