#!/usr/bin/env bash
# Installs the pinned TypeScript SDK peers with `npm ci` from their package.json +
# package-lock.json:
#   tests-interop/ts   the 1.x SDK (@modelcontextprotocol/sdk, express, zod); Node >= 18
#   tests-interop/ts2  the v2 SDK, 2026-07-28 capable (@modelcontextprotocol/server, /client,
#                      /node, zod); Node >= 20
#   tests-interop/apps the MCP Apps package (@modelcontextprotocol/ext-apps 2.0.4) and its
#                      peers, whose schemas and host helpers check mcpkit's Apps shapes
# Idempotent: a directory is skipped when its node_modules already matches its lock file. Runs
# on the machine's Node.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

# install DIR MARKER: `npm ci` in DIR unless node_modules/MARKER exists and the stamp matches.
install() {
  local dir="$root/$1" marker="$2"
  local stamp="$dir/node_modules/.mcpkit-installed"
  local want
  want="$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -c1-32)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$dir/node_modules/$marker" ]; then
    return 0
  fi
  (cd "$dir" && timeout 600 npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
}

command -v npm >/dev/null || { echo "error: npm not found (Node.js >= 20 is needed for the TS interop peers)" >&2; exit 1; }
install tests-interop/ts @modelcontextprotocol/sdk
install tests-interop/ts2 @modelcontextprotocol/server
install tests-interop/apps @modelcontextprotocol/ext-apps
