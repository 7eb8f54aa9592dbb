#!/usr/bin/env bash
# Installs what is missing, builds the book and serves dist/ on 127.0.0.1 with a plain static
# server (no single-page fallback, like most free static hosts). PORT=8080 by default.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
port="${PORT:-8080}"
echo
echo "Attention, live is at http://127.0.0.1:${port}/  (Ctrl-C stops it)"
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory dist
