#!/usr/bin/env bash
# Installs the pinned TypeScript SDK peers (tests-interop/ts/package.json + package-lock.json:
# @modelcontextprotocol/sdk, express, zod) into tests-interop/ts/node_modules with `npm ci`.
# Idempotent: skipped when node_modules already matches the lock file. Runs on the machine's
# Node (>= 18; the SDK declares engines node >= 18).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tests-interop/ts"
stamp="$dir/node_modules/.mcpkit-installed"
want="$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -c1-32)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$dir/node_modules/@modelcontextprotocol/sdk" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "error: npm not found (Node.js >= 18 is needed for the TS interop peers)" >&2; exit 1; }
(cd "$dir" && timeout 600 npm ci --no-audit --no-fund --loglevel=error)
echo "$want" >"$stamp"
