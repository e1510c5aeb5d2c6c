#!/usr/bin/env python3
"""mcpkit's performance comparison harness: one command, one table.

Builds (release) and starts each server, drives each with the same load, and prints one table with
requests/s, p50, p99 and memory, each with its ratio to mcpkit's figure, then checks the targets of
issue 7. Servers: mcpkit's reference server, an `rmcp` echo server, the official TypeScript and
Python SDKs' echo servers, and the floor (bench/src/bin/floor.rs). The load driver is
`mcpkit bench`; spawn time, idle-session memory and the RSS soak use the small drivers in bench/.

Usage: bench/run [--duration SECONDS] [--warmup N] [--servers a,b,...] [--scenarios a,b,...]
                 [--skip-build] [--repeat N] [--baseline MCPKIT_BINARY] [--json PATH]
See BENCHMARKS.md for what each scenario measures.
"""

import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
MCPKIT = os.path.join(ROOT, "target", "release", "mcpkit")
BIN = os.path.join(BENCH, "target", "release")
VENV_PY = os.path.join(ROOT, "target", "interop-venv", "bin", "python")
NODE = shutil.which("node") or "node"
ECHO_ARGS = '{"message":"hello, this is a typical tool argument of moderate length"}'
HOST = "127.0.0.1"


# ---------------------------------------------------------------------------------------------
# The servers under test
# ---------------------------------------------------------------------------------------------


class Server:
    """How to start one implementation on stdio and on HTTP (stateful and stateless)."""

    def __init__(self, name, stdio, http, http_stateless):
        self.name = name
        self.stdio = stdio  # argv
        self.http = http  # port -> argv (sessions, the implementation's default mode)
        self.http_stateless = http_stateless  # port -> argv (no sessions, JSON replies)


def mcpkit_server(name, binary):
    """mcpkit's reference server from `binary` (the current build, or a baseline build)."""
    return Server(
        name,
        [binary, "serve"],
        lambda p: [binary, "serve", "--http", f"{HOST}:{p}"],
        lambda p: [binary, "serve", "--http", f"{HOST}:{p}", "--stateless"],
    )


SERVERS = [
    mcpkit_server("mcpkit", MCPKIT),
    Server(
        "rmcp",
        [os.path.join(BIN, "rmcp-echo"), "stdio"],
        lambda p: [os.path.join(BIN, "rmcp-echo"), "http", f"{HOST}:{p}"],
        lambda p: [os.path.join(BIN, "rmcp-echo"), "http", f"{HOST}:{p}", "--stateless"],
    ),
    Server(
        "typescript",
        [NODE, os.path.join(BENCH, "ts", "echo_server.mjs"), "stdio"],
        lambda p: [NODE, os.path.join(BENCH, "ts", "echo_server.mjs"), "http", str(p)],
        lambda p: [NODE, os.path.join(BENCH, "ts", "echo_server.mjs"), "http", str(p), "--stateless"],
    ),
    Server(
        "python",
        [VENV_PY, os.path.join(BENCH, "python", "echo_server.py"), "stdio"],
        lambda p: [VENV_PY, os.path.join(BENCH, "python", "echo_server.py"), "http", str(p)],
        lambda p: [VENV_PY, os.path.join(BENCH, "python", "echo_server.py"), "http", str(p), "--stateless"],
    ),
    Server(
        "floor",
        [os.path.join(BIN, "floor"), "stdio"],
        lambda p: [os.path.join(BIN, "floor"), "http", f"{HOST}:{p}"],
        lambda p: [os.path.join(BIN, "floor"), "http", f"{HOST}:{p}"],
    ),
]

SCENARIOS = [
    # key, label, kind, concurrency
    ("stdio-seq", "stdio sequential (1 in flight)", "stdio", 1),
    ("stdio-pipe", "stdio pipelined (64 in flight)", "stdio", 64),
    ("http-1", "HTTP 2025-11-25 session, 1 caller", "http", 1),
    ("http-16", "HTTP 2025-11-25 session, 16 callers", "http", 16),
    ("http-stateless-16", "HTTP 2026-07-28 stateless, 16 callers", "stateless", 16),
    ("sessions", "memory per idle HTTP session (1,000 open)", "sessions", 1000),
    ("spawn", "stdio spawn to initialized", "spawn", 20),
    ("soak", "stdio RSS after 1,000,000 calls vs 100,000", "soak", 64),
]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Process helpers
# ---------------------------------------------------------------------------------------------


def proc_status(pid, key):
    """A /proc/PID/status field in KiB (VmRSS, VmHWM), or None if the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            # Field 4 (after the parenthesised command) is the parent pid.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return out


class PeakRss:
    """Polls the peak RSS (VmHWM) of a process — or of the child of a process — until stopped."""

    def __init__(self, pid, child_of=False):
        self.pid, self.child_of, self.peak_kib = pid, child_of, None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        target = None
        while not self._stop.is_set():
            if target is None:
                if self.child_of:
                    kids = children(self.pid)
                    target = kids[0] if kids else None
                else:
                    target = self.pid
            if target is not None:
                hwm = proc_status(target, "VmHWM")
                if hwm is not None:
                    self.peak_kib = max(self.peak_kib or 0, hwm)
            self._stop.wait(0.05)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak_kib


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class HttpServer:
    """A server process listening on a fresh port; waits until it accepts connections."""

    def __init__(self, argv_for_port):
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}/mcp"
        self.proc = subprocess.Popen(
            argv_for_port(self.port), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"exited with {self.proc.returncode}: {self.proc.stderr.read().decode()[-500:]}")
            try:
                socket.create_connection((HOST, self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("did not start listening within 30 s")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# ---------------------------------------------------------------------------------------------
# Drivers
# ---------------------------------------------------------------------------------------------


def mcpkit_bench(target_args, concurrency, opts):
    """Run `mcpkit bench` against a target; returns its JSON report and the server's peak RSS."""
    argv = [
        MCPKIT,
        "bench",
        "--tool",
        "echo",
        "--args",
        ECHO_ARGS,
        "--concurrency",
        str(concurrency),
        "--duration",
        f"{opts.duration}s",
        "--warmup",
        str(opts.warmup),
        "--json",
    ] + target_args
    return argv


def run_stdio_load(server, concurrency, opts):
    argv = mcpkit_bench(["--"] + server.stdio, concurrency, opts)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rss = PeakRss(proc.pid, child_of=True)
    out, err = proc.communicate(timeout=opts.duration * 4 + 120)
    peak = rss.stop()
    return parse_bench(out, err, proc.returncode), peak


def run_http_load(argv_for_port, concurrency, opts, extra=()):
    with HttpServer(argv_for_port) as srv:
        rss = PeakRss(srv.proc.pid)
        argv = mcpkit_bench(["--server", srv.url, *extra], concurrency, opts)
        done = subprocess.run(argv, capture_output=True, timeout=opts.duration * 4 + 120)
        peak = rss.stop()
        return parse_bench(done.stdout, done.stderr, done.returncode), peak


def parse_bench(out, err, code):
    if code != 0:
        raise RuntimeError(f"mcpkit bench failed ({code}): {err.decode(errors='replace').strip()[-400:]}")
    report = json.loads(out.decode().strip().splitlines()[-1])
    if report.get("errors"):
        raise RuntimeError(f"{report['errors']} of {report['requests']} calls failed")
    return report


def post(conn, body, session=None, version=None, extra=None):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
    if version:
        headers["MCP-Protocol-Version"] = version
    headers.update(extra or {})
    conn.request("POST", "/mcp", body=json.dumps(body), headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    return resp.status, resp.getheader("Mcp-Session-Id"), data


def open_sessions(port, count):
    """Open COUNT sessions (initialize + notifications/initialized each) and leave them open.

    Returns (opened, error): a server that stops answering part way is measured on the sessions
    it did open, and the table says so."""
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    opened = 0
    try:
        for i in range(count):
            status, sid, data = post(
                conn,
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": f"session-{i}", "version": "0"},
                    },
                },
            )
            if status != 200 or not sid:
                return opened, f"initialize #{i}: HTTP {status}, session id {sid!r}: {data[:200]!r}"
            status, _, data = post(
                conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session=sid, version="2025-11-25"
            )
            if status not in (200, 202):
                return opened, f"initialized #{i}: HTTP {status}: {data[:200]!r}"
            opened += 1
    except (OSError, http.client.HTTPException) as e:
        return opened, f"session #{opened + 1}: {e or type(e).__name__}"
    finally:
        conn.close()
    return opened, None


def session_memory(server, count):
    with HttpServer(server.http) as srv:
        # One warm session first, so one-time costs (lazy statics, first allocations) are not
        # charged to the thousand.
        _, err = open_sessions(srv.port, 1)
        if err:
            raise RuntimeError(err)
        time.sleep(0.5)
        before = proc_status(srv.proc.pid, "VmRSS")
        opened, err = open_sessions(srv.port, count)
        if not opened:
            raise RuntimeError(err)
        time.sleep(1.0)
        after = proc_status(srv.proc.pid, "VmRSS")
        note = f"(only {opened} opened: {err})" if err else ""
        return (after - before) / opened, after, note


def speaks_2026(argv_for_port):
    """Probe a stateless endpoint with a 2026-07-28 `server/discover`. Returns (yes, reason)."""
    with HttpServer(argv_for_port) as srv:
        conn = http.client.HTTPConnection(HOST, srv.port, timeout=10)
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "0"},
                }
            },
        }
        try:
            status, _, data = post(conn, body, version="2026-07-28", extra={"Mcp-Method": "server/discover"})
        except (OSError, http.client.HTTPException) as e:
            return False, f"server/discover failed: {e}"
        text = data.decode(errors="replace")
        # SSE replies carry the JSON on a `data:` line.
        payload = next((ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:") and ln[5:].strip()), text)
        try:
            reply = json.loads(payload)
        except ValueError:
            return False, f"server/discover: HTTP {status}, not JSON"
        versions = (reply.get("result") or {}).get("supportedVersions") or []
        if "2026-07-28" in versions:
            return True, ""
        err = (reply.get("error") or {}).get("message", "")
        return False, f"does not speak 2026-07-28 (server/discover: HTTP {status} {err})".replace(" )", ")")


def spawn_time(server, runs):
    done = subprocess.run(
        [os.path.join(BIN, "spawn-time"), str(runs), "--"] + server.stdio, capture_output=True, timeout=300
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode(errors="replace").strip())
    return json.loads(done.stdout)


def soak(server, in_flight):
    done = subprocess.run(
        [os.path.join(BIN, "stdio-soak"), str(in_flight), "100000,1000000", "--"] + server.stdio,
        capture_output=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode(errors="replace").strip())
    return json.loads(done.stdout)


# ---------------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------------


def build():
    steps = [
        (["cargo", "build", "--release", "--locked", "-p", "mcpkit-cli"], ROOT),
        (["cargo", "build", "--release", "--locked"], BENCH),
        (["bash", os.path.join(ROOT, "scripts", "setup-interop.sh")], ROOT),
    ]
    if not os.path.isdir(os.path.join(BENCH, "ts", "node_modules")):
        steps.append((["npm", "ci", "--no-audit", "--no-fund"], os.path.join(BENCH, "ts")))
    for argv, cwd in steps:
        log(f"$ (cd {os.path.relpath(cwd, ROOT) or '.'} && {' '.join(argv)})")
        subprocess.run(argv, cwd=cwd, check=True)


# ---------------------------------------------------------------------------------------------
# Table
# ---------------------------------------------------------------------------------------------


def fmt_num(v, unit=""):
    if v is None:
        return "—"
    if abs(v) >= 100:
        s = f"{v:,.0f}"
    elif abs(v) >= 10:
        s = f"{v:.1f}"
    else:
        s = f"{v:.2f}"
    return s + unit


def fmt_ratio(v, base):
    if v is None or base in (None, 0):
        return ""
    return f" ({v / base:.2f}×)"


def render(results, servers, scenarios):
    head = "| scenario | server | req/s | p50 | p99 | memory |"
    lines = [head, "| --- | --- | ---: | ---: | ---: | ---: |"]
    for key, label, kind, _ in scenarios:
        rows = results.get(key, {})
        base = rows.get("mcpkit") if isinstance(rows.get("mcpkit"), dict) else {}
        for s in servers:
            r = rows.get(s.name)
            if r is None:
                continue
            if isinstance(r, str):
                lines.append(f"| {label} | {s.name} | {r} | | | |")
                continue
            cells = []
            for field, unit in (("rps", ""), ("p50", r.get("p_unit", " µs")), ("p99", r.get("p_unit", " µs"))):
                cells.append(fmt_num(r.get(field), unit if r.get(field) is not None else "") + fmt_ratio(r.get(field), base.get(field)))
            mem = r.get("mem_kib")
            mem_cell = "—"
            if mem is not None:
                mem_cell = (fmt_num(mem, " KiB") if r.get("mem_label") else fmt_num(mem / 1024, " MiB")) + fmt_ratio(
                    mem, base.get("mem_kib")
                )
                if r.get("mem_label"):
                    mem_cell = f"{mem_cell} {r['mem_label']}"
            lines.append(f"| {label} | {s.name} | " + " | ".join(cells) + f" | {mem_cell} |")
    return "\n".join(lines)


def check_targets(results):
    """The targets of issue 7, evaluated on this run. Returns markdown lines."""

    def get(key, name, field):
        r = results.get(key, {}).get(name)
        return r.get(field) if isinstance(r, dict) else None

    out = []

    def ratio(key, other, minimum, field="rps"):
        m, o = get(key, "mcpkit", field), get(key, other, field)
        if m is None or o is None:
            out.append(f"- {key}: mcpkit vs {other} ≥ {minimum}×: not measured")
            return
        val = m / o
        # Two decimals, or three when two would round a miss up to the target.
        shown = f"{val:.2f}" if val >= minimum or f"{val:.2f}" != f"{minimum:.2f}" else f"{val:.3f}"
        out.append(f"- {key}: mcpkit/{other} = {shown}× (target ≥ {minimum}×): {'MET' if val >= minimum else 'MISSED'}")

    ratio("stdio-seq", "rmcp", 2)
    ratio("stdio-seq", "floor", 0.7)
    ratio("stdio-pipe", "rmcp", 10)
    ratio("stdio-pipe", "typescript", 3)
    ratio("stdio-pipe", "floor", 0.5)
    ratio("http-16", "rmcp", 2)
    ratio("http-16", "floor", 0.7)
    ratio("http-stateless-16", "rmcp", 1.5)
    per = get("sessions", "mcpkit", "mem_kib")
    out.append(
        f"- sessions: mcpkit {fmt_num(per, ' KiB')} per idle session (target ≤ 4 KiB): "
        + ("not measured" if per is None else ("MET" if per <= 4 else "MISSED"))
    )
    sp = get("spawn", "mcpkit", "p50")
    out.append(
        f"- spawn: mcpkit median {fmt_num(sp, ' ms')} (target ≤ 5 ms): "
        + ("not measured" if sp is None else ("MET" if sp <= 5 else "MISSED"))
    )
    soak_r = results.get("soak", {}).get("mcpkit")
    if isinstance(soak_r, dict) and soak_r.get("growth") is not None:
        g = soak_r["growth"]
        out.append(f"- soak: mcpkit RSS growth 100k→1M calls {g * 100:+.1f}% (target ≤ 10%): {'MET' if g <= 0.10 else 'MISSED'}")
    else:
        out.append("- soak: not measured")
    return out


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def measure(kind, s, n, opts):
    """One scenario on one server: its table row (a dict), a string saying why there is none, or
    None when the scenario does not apply to this server."""
    try:
        if kind == "stdio":
            rep, peak = run_stdio_load(s, n, opts)
            row = {"rps": rep["rps"], "p50": rep["p50_us"], "p99": rep["p99_us"], "mem_kib": peak, "raw": rep}
        elif kind == "http":
            rep, peak = run_http_load(s.http, n, opts)
            row = {"rps": rep["rps"], "p50": rep["p50_us"], "p99": rep["p99_us"], "mem_kib": peak, "raw": rep}
        elif kind == "stateless":
            ok, why = speaks_2026(s.http_stateless)
            if not ok:
                row = f"n/a: {why}"
            else:
                # The 2026-07-28 wire: no handshake, protocol `_meta` and the mirrored
                # Mcp-Method / Mcp-Name headers on every request.
                rep, peak = run_http_load(s.http_stateless, n, opts, ["--protocol", "2026-07-28"])
                row = {"rps": rep["rps"], "p50": rep["p50_us"], "p99": rep["p99_us"], "mem_kib": peak, "raw": rep}
        elif kind == "sessions":
            per, total, note = session_memory(s, n)
            row = {"mem_kib": per, "mem_label": f"/session {note}".strip(), "rss_after_kib": total}
        elif kind == "spawn":
            # Interpreters take seconds to start on a busy machine: fewer runs for them.
            sp = spawn_time(s, n if s.name in ("mcpkit", "baseline", "rmcp", "floor") else 5)
            row = {"p50": sp["median_ms"], "p99": sp["max_ms"], "p_unit": " ms", "raw": sp}
        elif kind == "soak":
            so = soak(s, n)
            cps = {c["calls"]: c["rss_kib"] for c in so["checkpoints"]}
            a, b = cps.get(100000), cps.get(1000000)
            row = {
                "rps": 1000000 / so["seconds"],
                "mem_kib": b,
                "mem_label": f"after 1M (after 100k: {a:,} KiB, {(b - a) / a * 100:+.1f}%)",
                "growth": (b - a) / a,
                "raw": so,
            }
        else:
            return None
    except Exception as e:  # one failing server must not sink the whole table
        return f"failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}"[:300]
    return row


def median_run(rows):
    """The run with the median req/s (failures and n/a rows only when no run succeeded)."""
    ok = sorted((r for r in rows if isinstance(r, dict)), key=lambda r: r["rps"])
    if not ok:
        return rows[0]
    row = dict(ok[(len(ok) - 1) // 2])
    row["runs_rps"] = [r["rps"] if isinstance(r, dict) else r for r in rows]
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=5, help="seconds of recorded load per run (default 5)")
    ap.add_argument("--warmup", type=int, default=500, help="unrecorded calls before each run (default 500)")
    ap.add_argument("--servers", default=",".join(s.name for s in SERVERS))
    ap.add_argument("--scenarios", default=",".join(k for k, *_ in SCENARIOS))
    ap.add_argument("--soak-servers", default="mcpkit,floor", help="servers for the 1M-call soak (slow ones take minutes)")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="load runs per server in the stdio and HTTP scenarios, taken in turns; the table shows the "
        "median run and lists every run's req/s below it (default 1)",
    )
    ap.add_argument("--json", default=os.path.join(ROOT, "target", "bench-compare.json"), help="raw results file")
    ap.add_argument(
        "--baseline",
        metavar="MCPKIT_BINARY",
        help="also run this earlier build of the mcpkit binary, as the server 'baseline', in turns with "
        "the current one (a before/after comparison inside one run)",
    )
    opts = ap.parse_args()
    opts.duration = int(opts.duration) if opts.duration == int(opts.duration) else opts.duration

    wanted = opts.servers.split(",")
    servers = [s for s in SERVERS if s.name in wanted]
    if opts.baseline:
        servers.insert(1, mcpkit_server("baseline", os.path.abspath(opts.baseline)))
    scenarios = [sc for sc in SCENARIOS if sc[0] in opts.scenarios.split(",")]
    if not opts.skip_build:
        build()

    load = os.getloadavg()
    results = {}
    for key, label, kind, n in scenarios:
        results[key] = {}
        applies = [s for s in servers if kind != "soak" or s.name in opts.soak_servers.split(",")]
        repeat = opts.repeat if kind in ("stdio", "http", "stateless") else 1
        runs = {s.name: [] for s in applies}
        # Repeated load runs take turns across the servers, so a slow minute of the machine
        # does not land on one server's runs only.
        for r in range(repeat):
            for s in applies:
                log(f"[{label}] {s.name}" + (f" (run {r + 1} of {repeat})" if repeat > 1 else "") + " ...")
                row = measure(kind, s, n, opts)
                if row is None:
                    continue
                runs[s.name].append(row)
                log(f"    {row if isinstance(row, str) else {k: v for k, v in row.items() if k != 'raw'}}")
        for s in applies:
            if runs[s.name]:
                results[key][s.name] = median_run(runs[s.name]) if repeat > 1 else runs[s.name][0]

    os.makedirs(os.path.dirname(opts.json), exist_ok=True)
    with open(opts.json, "w") as f:
        json.dump(results, f, indent=1)
    print()
    print(
        f"mcpkit comparison — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
        f"load average at start {load[0]:.1f}, at end {os.getloadavg()[0]:.1f}; "
        f"{opts.duration} s per load run after {opts.warmup} warm-up calls; ratios are figure / mcpkit's figure"
    )
    print()
    print(render(results, servers, scenarios))
    print()
    print("Memory: peak RSS of the server process during the run; for idle sessions, RSS growth per session;")
    print("spawn: p50 = median, p99 = slowest of the runs; soak: req/s = average over the 1M calls.")
    if opts.repeat > 1:
        print(f"Load scenarios: {opts.repeat} runs per server taken in turns; each row is the median run. Every run's req/s:")
        for key, label, kind, _ in scenarios:
            for name, row in results[key].items():
                if isinstance(row, dict) and "runs_rps" in row:
                    runs = ", ".join(f"{v:,.0f}" if isinstance(v, float) else str(v) for v in row["runs_rps"])
                    print(f"- {label}, {name}: {runs}")
    print()
    print("Targets (issue 7):")
    print("\n".join(check_targets(results)))


if __name__ == "__main__":
    main()
