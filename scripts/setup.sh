#!/usr/bin/env bash
# Installs what building and testing the book needs, skipping whatever is already there.
# Measured first-install times on a fresh 2-core machine: trunk ~8 min, wasm-bindgen-cli
# ~4 min, apt packages ~30 s, npm ~5 s. See ../shared/notes/toolchain.md for why each pin.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
for component in rustfmt clippy; do
  if ! rustup component list --installed | grep -q "^$component"; then
    say "adding $component"
    rustup component add "$component"
  fi
done

# The compute worker's threaded build (scripts/build_threads.sh) rebuilds the standard library
# with atomics, which needs a nightly compiler and the library's source (~1 min to install).
nightly=$(cat scripts/nightly-toolchain)
if ! rustup component list --toolchain "$nightly" --installed 2>/dev/null | grep -q '^rust-src'; then
  say "installing the $nightly toolchain with rust-src (the threaded worker's build)"
  rustup toolchain install "$nightly" --profile minimal --component rust-src
fi

# Chromium and its driver (browser tests, benchmarks), a font for canvas text, and lavapipe.
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
# Mesa's lavapipe: a Vulkan GPU in software, so the GPU backend's tests run on any machine.
ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 || missing+=(mesa-vulkan-drivers)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} (apt)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Trunk 0.21.14: 0.22 needs a newer rustc than this machine has.
if ! trunk --version 2>/dev/null | grep -q '0\.21\.14'; then
  say "installing trunk 0.21.14 (about 8 minutes the first time)"
  cargo install trunk --version 0.21.14 --locked
fi

# wasm-bindgen-cli must match the wasm-bindgen in Cargo.lock exactly. (--locked fails here:
# a locked dependency is missing from the registry index.)
wb=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' Cargo.lock)
if ! wasm-bindgen --version 2>/dev/null | grep -q "$wb"; then
  say "installing wasm-bindgen-cli $wb (about 4 minutes the first time)"
  cargo install wasm-bindgen-cli --version "$wb"
fi

# wasm-split-cli (scripts/build_page.sh splits the page's wasm with it): the version of the
# wasm_split_helpers in Cargo.lock, whose split points it reads.
ws=$(awk '/^name = "wasm_split_helpers"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' Cargo.lock)
if ! cargo install --list 2>/dev/null | grep -q "^wasm_split_cli_support v$ws:"; then
  say "installing wasm-split-cli $ws (about 2 minutes the first time)"
  cargo install --locked wasm_split_cli_support --version "$ws" --features build-binary
fi

# npm: binaryen's wasm-opt 132 (Debian's wasm-opt 108 breaks wasm-bindgen output) and
# playwright-core, which drives Debian's chromium (never `playwright install`).
if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/axe-core ]; then
  say "installing npm packages"
  npm ci --no-audit --no-fund --loglevel=error
fi
