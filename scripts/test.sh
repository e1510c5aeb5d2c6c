#!/usr/bin/env bash
# The whole test suite: installs the pinned interop peers (official Python and TypeScript
# SDKs) and, when missing, the Debian packages the cluster tests start (redis-server, haproxy,
# prometheus) and the browser tests drive (chromium, chromium-driver), runs every test of the workspace (unit, integration, real-process stdio and HTTP,
# interop, doctests), type-checks the Windows build when that target is installed, smoke-runs
# the fuzz targets when nightly and cargo-fuzz are there, then the
# official conformance suite's server leg at both eras and its client leg, both at both eras.
# Prints the seconds each phase took as it ends, and the list at the end (also on failure).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"

phase_times=()
# timed NAME COMMAND...: run COMMAND, then print how long it took.
timed() {
    local name="$1" start=$SECONDS
    shift
    "$@"
    phase_times+=("$(printf '%6d s  %s' $((SECONDS - start)) "$name")")
    echo "==> $name: $((SECONDS - start)) s" >&2
}
print_phase_times() {
    echo "==> scripts/test.sh, seconds per phase (${SECONDS} s in all):" >&2
    [ "${#phase_times[@]}" -eq 0 ] || printf '%s\n' "${phase_times[@]}" >&2
}
trap print_phase_times EXIT

timed "interop peers and cluster tools" \
    bash -c 'scripts/setup-interop.sh && scripts/setup-interop-ts.sh && scripts/setup-cluster-tools.sh'
export MCPKIT_INTEROP_PYTHON="$root/target/interop-venv/bin/python"
# The examples as runnable binaries; crates/mcpkit/tests/examples_run.rs runs them. They have
# no tests of their own, so the test run leaves them out (`--all-targets` would link each a
# second time, as a test harness). The binaries too, with the same features as the tests (the
# test run reuses them): the conformance legs below run these debug builds of `mcpkit` and
# `mcpkit-conformance-client` (a build of its own would resolve other features and compile
# mcpkit again). The CLI with every feature (`full`: Redis, codegen, the OS keyring, OTLP,
# validation), whose tests cover them; its default build is checked by scripts/feature-sets.sh.
timed "build examples and binaries" cargo build --workspace --examples --bins --locked --features mcpkit-cli/full
timed "tests" cargo test --workspace --lib --bins --tests --benches --locked --features mcpkit-cli/full
# Every publishable crate packages (metadata, licence files, readme, no path-only dependency):
# `cargo package` without building (the tests above built everything).
timed "package" cargo package --workspace --exclude mcpkit-test-support --exclude mcpkit-codegen-check \
    --exclude mcpkit-conformance --exclude mcpkit-serverless-example --no-verify --locked
timed "doctests" cargo test --workspace --doc --locked --features mcpkit-cli/full
# Windows, where most desktop hosts launch stdio servers: the libraries and binaries must build
# there (nix is a unix-only dependency). Checked when that target's standard library is
# installed and there is a C compiler for it (ring, under rustls, builds C); a notice otherwise.
windows=x86_64-pc-windows-gnu
if command -v rustup >/dev/null && rustup target list --installed | grep -x "$windows" >/dev/null; then
    if [ -n "${CC_x86_64_pc_windows_gnu:-}" ] || command -v x86_64-w64-mingw32-gcc >/dev/null; then
        timed "check --target $windows" cargo check --workspace --target "$windows" --locked --features mcpkit-cli/full
    else
        echo "notice: skipped cargo check --target $windows: no C compiler for it" \
            "(install mingw-w64 or set CC_x86_64_pc_windows_gnu)" >&2
    fi
else
    echo "notice: skipped cargo check --target $windows: its standard library is not installed" \
        "(rustup target add $windows)" >&2
fi
# Fuzz smoke run (fuzz/README.md): each target for 25 s on its corpus, when a nightly toolchain
# and cargo-fuzz are installed (CI machines may have neither: a notice then). A crash fails.
if cargo +nightly --version >/dev/null 2>&1 && cargo +nightly fuzz --version >/dev/null 2>&1; then
    timed "fuzz smoke run" fuzz/run.sh 25
else
    echo "notice: skipped the fuzz smoke run: it needs a nightly toolchain and cargo-fuzz" \
        "(rustup toolchain install nightly; cargo install cargo-fuzz --locked)" >&2
fi
# The conformance legs run the debug binaries built above: the same code as a release build,
# with debug assertions and overflow checks on (the suite's timeouts are generous; the release
# and dist profiles are built by bench/run and for releases, not here).
export MCPKIT_BIN="$target/debug/mcpkit" MCPKIT_CONFORMANCE_CLIENT="$target/debug/mcpkit-conformance-client"
timed "conformance server leg" scripts/conformance.sh server 2025-11-25 2026-07-28
timed "conformance client leg" scripts/conformance.sh client 2025-11-25 2026-07-28
