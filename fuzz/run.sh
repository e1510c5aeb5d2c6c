#!/usr/bin/env bash
# Run fuzz targets one after another, each for SECONDS on its corpus (fuzz/corpus/TARGET, kept
# out of git) and its committed seeds (fuzz/seeds/TARGET), and print a markdown table of exec
# and crash counts. Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz
# --locked`). A crashing input is kept in fuzz/artifacts/TARGET/ and the script exits 1.
#
# Usage: fuzz/run.sh SECONDS [TARGET...]   (default: every target)
# e.g.   fuzz/run.sh 30                      the smoke run scripts/test.sh does
#        nice -n 19 fuzz/run.sh 600          the 10-minute runs of fuzz/README.md
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:?usage: fuzz/run.sh SECONDS [TARGET...]}"
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
# Safe Rust: no sanitizer (ASan would halve the exec rate and find nothing the panics don't).
mkdir -p fuzz/target
cargo +nightly fuzz build -s none >fuzz/target/build.log 2>&1 || { tail -n 40 fuzz/target/build.log >&2; exit 1; }
count() { if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi; }
rows=()
failed=0
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    log="fuzz/target/$t.log"
    known=$(count "fuzz/artifacts/$t")
    status=0
    cargo +nightly fuzz run -s none "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
        -max_total_time="$seconds" -timeout=10 -print_final_stats=1 >"$log" 2>&1 || status=$?
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo "?")
    corpus=$(count "fuzz/corpus/$t")
    crashes=$(($(count "fuzz/artifacts/$t") - known))
    if [ "$status" -ne 0 ]; then
        failed=1
        echo "FAIL $t (exit $status): see $log and fuzz/artifacts/$t/" >&2
        tail -n 30 "$log" >&2
    fi
    rows+=("| \`$t\` | ${seconds} s | $execs | $corpus | $crashes |")
done
echo "| target | time | execs | corpus | crashes |"
echo "| --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
exit "$failed"
