#!/usr/bin/env bash
# Installs axe-core from the npm registry into .tools/web-tools (git-ignored), pinned by
# scripts/web-tools/package-lock.json (`npm ci`). tests/web/test_pages_browser.py loads its
# axe.min.js into every page in Chromium to check contrast and accessibility; the file runs in
# the browser, so any Node and npm install it. Idempotent: does nothing when that lock is
# already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

LOCK_DIR="scripts/web-tools"
DIR=".tools/web-tools"
STAMP="$DIR/installed"
WANT="$(sha256sum "$LOCK_DIR/package-lock.json" | cut -d' ' -f1)"
AXE="$DIR/node_modules/axe-core/axe.min.js"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -f "$AXE" ]]; then
  echo "Web tools: the locked packages are already in $DIR"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "npm is missing: apt-get install npm" >&2
  exit 1
fi
rm -rf "$DIR"
mkdir -p "$DIR"
cp "$LOCK_DIR/package.json" "$LOCK_DIR/package-lock.json" "$DIR/"
npm ci --prefix "$DIR" --no-audit --no-fund --loglevel=error
test -f "$AXE"
echo "$WANT" > "$STAMP"
echo "Web tools: installed the locked packages in $DIR"
