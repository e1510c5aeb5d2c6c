#!/usr/bin/env bash
# The whole test suite: installs the interop peers, then runs every test of the workspace
# (unit, integration, real-process stdio, interop with the official Python SDK, doctests).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/setup-interop.sh
export MCPKIT_INTEROP_PYTHON="$root/target/interop-venv/bin/python"
cargo test --workspace --all-targets --locked
cargo test --workspace --doc --locked
