#!/usr/bin/env bash
# The whole test suite: installs the pinned interop peers (official Python and TypeScript
# SDKs), runs every test of the workspace (unit, integration, real-process stdio and HTTP,
# interop, doctests), then the official conformance suite's server leg at both eras and its
# client leg, both at both eras.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/setup-interop.sh
scripts/setup-interop-ts.sh
export MCPKIT_INTEROP_PYTHON="$root/target/interop-venv/bin/python"
# The examples as runnable binaries (`cargo test --all-targets` only compiles them as test
# harnesses); crates/mcpkit/tests/examples_run.rs runs them.
cargo build --workspace --examples --locked
cargo test --workspace --all-targets --locked
cargo test --workspace --doc --locked
scripts/conformance.sh server 2025-11-25 2026-07-28
scripts/conformance.sh client 2025-11-25 2026-07-28
