#!/usr/bin/env bash
# Every feature set of the `mcpkit` crate that its documentation names (crates/mcpkit/src/lib.rs,
# "Feature flags"; the `mcpkit new` template's two sets among them) passes clippy with warnings
# denied, each on its own: an item only some features use is compiled only with them.
# `cargo clippy --workspace` (.ci/run) sees the union of every member's features (all of them),
# so it cannot see what a smaller set leaves unused. Library code only (the tests, examples and
# doctests run with the workspace's features). Then the `mcpkit` tool's default build.
#
#   scripts/feature-sets.sh            every set
#   scripts/feature-sets.sh SET...     only these (e.g. "server,macros"; "default" for the defaults)
set -euo pipefail
cd "$(dirname "$0")/.."

sets=(
  default                            # server, client, macros: the README's first server and client
  server                             # a server, explicit API only
  server,macros                      # a server with the attribute macros
  server,client,macros,http-server   # `mcpkit new --http`; `mcpkit new` is the defaults
  server,http-server                 # an HTTP server
  client                             # a client of stdio and child-process servers
  client,http-client                 # a client of HTTP servers too
  default,http-server,http-client    # both roles over both transports
  default,otel                       # + OpenTelemetry metrics and trace context
  default,otlp                       # + OTLP export
  default,auth                       # + OAuth 2.1 (both HTTP sides)
  default,validation                 # + JSON Schema validation of tool arguments and results
)
[ "$#" -eq 0 ] || sets=("$@")

failed=()
for set in "${sets[@]}"; do
  if [ "$set" = default ]; then
    args=()
  elif [[ "$set" == default,* ]]; then
    args=(--features "${set#default,}")
  else
    args=(--no-default-features --features "$set")
  fi
  start=$SECONDS
  if cargo clippy -q -p mcpkit --lib --locked "${args[@]}" -- -D warnings; then
    echo "feature set [$set]: ok ($((SECONDS - start)) s)"
  else
    echo "feature set [$set]: FAILED" >&2
    failed+=("$set")
  fi
done
# The `mcpkit` tool's default build (without `full`): what `cargo run --release -p mcpkit-cli`
# builds; the rest of the workspace is linted with `full` (.ci/run).
if [ "$#" -eq 0 ]; then
  start=$SECONDS
  if cargo clippy -q -p mcpkit-cli --lib --bins --locked -- -D warnings; then
    echo "mcpkit-cli default features: ok ($((SECONDS - start)) s)"
  else
    echo "mcpkit-cli default features: FAILED" >&2
    failed+=("mcpkit-cli default")
  fi
fi
if [ "${#failed[@]}" -gt 0 ]; then
  echo "feature sets with warnings or errors: ${failed[*]}" >&2
  exit 1
fi
