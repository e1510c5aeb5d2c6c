#!/usr/bin/env python3
"""mcpkit's performance comparison harness: one command, one table.

Builds (release) and starts each server, drives each with two load drivers — mcpkit's own
(`mcpkit bench`) and an independent one (`wrk` with bench/wrk/tools-call.lua over HTTP,
bench/src/bin/stdio-load.rs over stdio) — and prints one table with requests/s (median of the
runs, with their spread), p50, p99 and memory, each with its ratio to mcpkit's figure for the
same driver, then checks the targets of issue 18 on the independent driver. The sequential and
single-caller scenarios run in two CPU placements (`taskset`): driver and server on the same CPU,
and on different CPUs. Servers: mcpkit's reference server, an `rmcp` echo server, the official
TypeScript and Python SDKs' echo servers, and the floor (bench/src/bin/floor.rs). Spawn time,
idle-session memory and the RSS soak use the small drivers in bench/. The scale curves are
bench/curves.py.

Usage: bench/run [--duration SECONDS] [--warmup N] [--servers a,b,...] [--scenarios a,b,...]
                 [--drivers mcpkit,independent] [--skip-build] [--repeat N]
                 [--baseline MCPKIT_BINARY] [--json PATH]
See BENCHMARKS.md for what each scenario measures.
"""

import argparse
import json
import os
import shutil
import subprocess
import threading
import time

from drivers import BIN, BENCH, HOST, MCPKIT, ROOT, log, run_http_load, run_stdio_load, session_memory, soak
from drivers import spawn_time, speaks_2026

VENV_PY = os.path.join(ROOT, "target", "interop-venv", "bin", "python")
NODE = shutil.which("node") or "node"


# ---------------------------------------------------------------------------------------------
# The servers under test
# ---------------------------------------------------------------------------------------------


class Server:
    """How to start one implementation on stdio and on HTTP (stateful and stateless)."""

    def __init__(self, name, stdio, http, http_stateless, http_many_sessions=None):
        self.name = name
        self.stdio = stdio  # argv
        self.http = http  # port -> argv (sessions, the implementation's default mode)
        self.http_stateless = http_stateless  # port -> argv (no sessions, JSON replies)
        # port -> argv for the idle-session memory rows (session caps raised where there are any)
        self.http_many_sessions = http_many_sessions or http


def mcpkit_server(name, binary, env=(), extra=()):
    """mcpkit's reference server from `binary` (the current build, or a baseline build), started
    with `env` (NAME=VALUE strings, through env(1), which execs: the measured pid is the server's)
    and `extra` arguments after `serve`'s own."""
    pre = ["env", *env, binary] if env else [binary]
    extra = list(extra)
    return Server(
        name,
        pre + ["serve", *extra],
        lambda p: pre + ["serve", "--http", f"{HOST}:{p}", *extra],
        lambda p: pre + ["serve", "--http", f"{HOST}:{p}", "--stateless", *extra],
        # The default caps (10,000 sessions, 1,000 per client) would refuse the 100,000 row.
        lambda p: pre
        + ["serve", "--http", f"{HOST}:{p}", "--max-sessions", "200000", "--max-sessions-per-client", "200000", *extra],
    )


# `--telemetry` (BENCHMARKS.md, "What telemetry costs"): the same code built without any
# instrumentation (tracing's `max_level_off`, as bench/telemetry-cost builds it) and the shipped
# binary with span export on but every span sampled out.
TELEMETRY_OFF = os.path.join(ROOT, "target", "telemetry-off", "dist", "mcpkit")


def telemetry_servers(sink_port):
    return [
        mcpkit_server("compiled-out", TELEMETRY_OFF),
        mcpkit_server(
            "sampled-out",
            MCPKIT,
            # Spans only: `--otlp-endpoint` would export metrics too.
            env=["OTEL_TRACES_SAMPLER=always_off", "OTEL_METRICS_EXPORTER=none"],
            extra=["--otlp-endpoint", f"http://{HOST}:{sink_port}"],
        ),
    ]


def start_otlp_sink():
    """An OTLP/HTTP receiver that answers every export 200 with an empty (valid) protobuf
    response, in a thread of the harness; returns its port."""
    import http.server

    class Sink(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer((HOST, 0), Sink)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


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
    # key, label, kind, concurrency, CPU placements (None: not pinned)
    ("stdio-seq", "stdio sequential (1 in flight)", "stdio", 1, ("same", "split")),
    ("stdio-pipe", "stdio pipelined (64 in flight)", "stdio", 64, (None,)),
    ("http-1", "HTTP 2025-11-25 session, 1 caller", "http", 1, ("same", "split")),
    ("http-16", "HTTP 2025-11-25 session, 16 callers", "http", 16, (None,)),
    ("http-stateless-16", "HTTP 2026-07-28 stateless, 16 callers", "stateless", 16, (None,)),
    ("sessions", "memory per idle HTTP session (1,000 open)", "sessions", 1000, (None,)),
    ("sessions-100k", "memory per idle HTTP session (100,000 open)", "sessions", 100000, (None,)),
    ("spawn", "stdio spawn to initialized", "spawn", 20, (None,)),
    ("binary", "release binary size", "binary", 0, (None,)),
    ("soak", "stdio RSS after 1,000,000 calls vs 100,000", "soak", 64, (None,)),
]
LOAD_KINDS = ("stdio", "http", "stateless")
DRIVER_NAMES = {("stdio", "mcpkit"): "mcpkit bench", ("stdio", "independent"): "stdio-load"}
PLACEMENT_NAMES = {None: "", "same": " [same CPU]", "split": " [different CPUs]"}
# The binary each server ships as (the `binary` row).
BINARIES = {
    "mcpkit": MCPKIT,
    "compiled-out": TELEMETRY_OFF,
    "sampled-out": MCPKIT,
    "rmcp": os.path.join(BIN, "rmcp-echo"),
    "floor": os.path.join(BIN, "floor"),
}
# Builds of mcpkit itself (and the floor): fast to start, and light enough for 100,000 sessions.
MCPKIT_BUILDS = ("mcpkit", "baseline", "compiled-out", "sampled-out")


def driver_name(kind, driver):
    if driver == "mcpkit":
        return "mcpkit bench"
    return "stdio-load" if kind == "stdio" else "wrk"


# ---------------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------------


def build(telemetry):
    steps = []
    if telemetry:
        # Into its own target directory, so the shipped build in target/release stays as it is.
        off = ["cargo", "build", "--profile", "dist", "--locked", "-p", "mcpkit-cli", "--features", "full,tracing/max_level_off"]
        steps.append((["env", f"CARGO_TARGET_DIR={os.path.join(ROOT, 'target', 'telemetry-off')}", *off], ROOT))
    steps += [
        (["cargo", "build", "--profile", "dist", "--locked", "-p", "mcpkit-cli", "--features", "full"], ROOT),
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


def fmt_spread(row):
    runs = [r for r in row.get("runs_rps", []) if isinstance(r, float)]
    if len(runs) < 2:
        return ""
    return f" [{min(runs) / 1000:,.1f}k–{max(runs) / 1000:,.1f}k]"


def render(results, servers, scenarios):
    """The table: one row per scenario (and placement), server and driver."""
    head = "| scenario | server | driver | req/s (median [min–max]) | p50 | p99 | memory |"
    lines = [head, "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for key, label, kind, _, placements in scenarios:
        for placement in placements:
            rows = results.get(variant(key, placement), {})
            drivers = ("mcpkit", "independent") if kind in LOAD_KINDS else (None,)
            for driver in drivers:
                base = rows.get("mcpkit", {}).get(driver)
                base = base if isinstance(base, dict) else {}
                for s in servers:
                    r = rows.get(s.name, {}).get(driver)
                    if r is None:
                        continue
                    name = f"{label}{PLACEMENT_NAMES[placement]}"
                    dname = driver_name(kind, driver) if driver else "—"
                    if isinstance(r, str):
                        lines.append(f"| {name} | {s.name} | {dname} | {r} | | | |")
                        continue
                    unit = r.get("p_unit", " µs")
                    rps = fmt_num(r.get("rps")) + fmt_ratio(r.get("rps"), base.get("rps")) + fmt_spread(r)
                    cells = [rps]
                    for field in ("p50", "p99"):
                        v = r.get(field)
                        cells.append(fmt_num(v, unit if v is not None else "") + fmt_ratio(v, base.get(field)))
                    cells.append(mem_cell(r, base))
                    lines.append(f"| {name} | {s.name} | {dname} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def mem_cell(r, base):
    mem = r.get("mem_kib")
    if r.get("bytes") is not None:
        return f"{r['bytes'] / 1e6:.1f} MB" + fmt_ratio(r["bytes"], base.get("bytes"))
    if mem is None:
        return "—"
    cell = (fmt_num(mem, " KiB") if r.get("mem_label") else fmt_num(mem / 1024, " MiB")) + fmt_ratio(
        mem, base.get("mem_kib")
    )
    return f"{cell} {r['mem_label']}" if r.get("mem_label") else cell


def variant(key, placement):
    return f"{key}@{placement}" if placement else key


def check_targets(results):
    """The targets of issue 18, on the independent driver. Returns markdown lines."""

    def get(key, name, field, driver="independent"):
        r = results.get(key, {}).get(name, {}).get(driver)
        return r.get(field) if isinstance(r, dict) else None

    out = []

    def verdict(label, val, ok, target):
        out.append(f"- {label} = {val} (target {target}): {'MET' if ok else 'MISSED'}")

    def ratio(key, other, minimum, field="rps", other_key=None):
        m, o = get(key, "mcpkit", field), get(other_key or key, other, field)
        label = f"{key}: mcpkit/{other}" if not other_key else f"{key}: mcpkit/mcpkit {other_key}"
        if m is None or o is None:
            out.append(f"- {label}: not measured")
            return
        val = m / o
        shown = f"{val:.2f}" if val >= minimum or f"{val:.2f}" != f"{minimum:.2f}" else f"{val:.3f}"
        verdict(label, f"{shown}×", val >= minimum, f"≥ {minimum}×")

    ratio("http-16", "rmcp", 2.5)
    ratio("http-16", "floor", 0.8)
    ratio("http-stateless-16", "rmcp", 2)
    ratio("http-stateless-16", "floor", 0.75)
    ratio("http-stateless-16", "mcpkit", 0.9, other_key="http-16")
    ratio("http-1@same", "rmcp", 2.5)
    ratio("http-1@split", "rmcp", 2.5)
    ratio("stdio-pipe", "floor", 0.7)
    ratio("stdio-pipe", "rmcp", 15)
    for p in ("same", "split"):
        ratio(f"stdio-seq@{p}", "rmcp", 2.5)
        ratio(f"stdio-seq@{p}", "floor", 0.8)
    sp, rsp, fsp = (get("spawn", n, "p50", None) for n in ("mcpkit", "rmcp", "floor"))
    if None in (sp, rsp, fsp):
        out.append("- spawn: not measured")
    else:
        ok = sp <= rsp and sp <= 2 * fsp
        verdict("spawn: mcpkit median", f"{sp:.2f} ms (rmcp {rsp:.2f} ms, floor {fsp:.2f} ms)", ok, "≤ rmcp's, ≤ 2× floor")
    for key in ("sessions", "sessions-100k"):
        per = get(key, "mcpkit", "mem_kib", None)
        if per is None:
            out.append(f"- {key}: not measured")
        else:
            verdict(f"{key}: mcpkit per idle session", fmt_num(per, " KiB"), per <= 2, "≤ 2 KiB")
    size = get("binary", "mcpkit", "bytes", None)
    if size is None:
        out.append("- binary: not measured")
    else:
        verdict("binary: target/dist/mcpkit", f"{size / 1e6:.1f} MB", size <= 25e6, "≤ 25 MB")
    return out


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def load_row(rep, peak):
    return {"rps": rep["rps"], "p50": rep["p50_us"], "p99": rep["p99_us"], "mem_kib": peak, "raw": rep}


def measure(kind, s, n, opts, driver=None, placement=None):
    """One scenario on one server: its table row (a dict), a string saying why there is none, or
    None when the scenario does not apply to this server."""
    try:
        if kind == "stdio":
            return load_row(*run_stdio_load(s.stdio, n, opts, driver, placement))
        if kind == "http":
            return load_row(*run_http_load(s.http, n, opts, driver, placement))
        if kind == "stateless":
            ok, why = speaks_2026(s.http_stateless)
            if not ok:
                return f"n/a: {why}"
            # The 2026-07-28 wire: no handshake, protocol `_meta` and the mirrored
            # Mcp-Method / Mcp-Name headers on every request.
            return load_row(*run_http_load(s.http_stateless, n, opts, driver, placement, stateless=True))
        if kind == "sessions":
            if n > 10000 and s.name not in (*MCPKIT_BUILDS, "floor"):
                return None  # 100,000 sessions of ~50 KiB each: gigabytes, and many minutes to open
            per, total, note = session_memory(s.http_many_sessions, n)
            return {"mem_kib": per, "mem_label": f"/session {note}".strip(), "rss_after_kib": total}
        if kind == "spawn":
            # Interpreters take seconds to start on a busy machine: fewer runs for them.
            sp = spawn_time(s, n if s.name in (*MCPKIT_BUILDS, "rmcp", "floor") else 5)
            return {"p50": sp["median_ms"], "p99": sp["max_ms"], "p_unit": " ms", "raw": sp}
        if kind == "binary":
            path = s.stdio[0] if s.name == "baseline" else BINARIES.get(s.name)
            return {"bytes": os.path.getsize(path)} if path else None
        if kind == "soak":
            so = soak(s, n)
            cps = {c["calls"]: c["rss_kib"] for c in so["checkpoints"]}
            a, b = cps.get(100000), cps.get(1000000)
            return {
                "rps": 1000000 / so["seconds"],
                "mem_kib": b,
                "mem_label": f"after 1M (after 100k: {a:,} KiB, {(b - a) / a * 100:+.1f}%)",
                "growth": (b - a) / a,
                "raw": so,
            }
    except Exception as e:  # one failing server must not sink the whole table
        return f"failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}"[:300]
    return None


def telemetry_summary(results, scenarios):
    """For each load row: compiled-out and sampled-out against the shipped binary ("off": no
    subscriber exporting), with each one's run-to-run spread, so "off costs nothing" can be judged
    against the noise of the same run."""

    def spread(r):
        runs = [x for x in r.get("runs_rps", []) if isinstance(x, float)]
        return (max(runs) - min(runs)) / r["rps"] if len(runs) > 1 and r["rps"] else 0.0

    out = []
    for key, label, kind, _, placements in scenarios:
        if kind not in LOAD_KINDS:
            continue
        for placement in placements:
            rows = results.get(variant(key, placement), {})
            for d in ("mcpkit", "independent"):
                get = lambda n: rows.get(n, {}).get(d)  # noqa: E731
                off, out_, sampled = get("mcpkit"), get("compiled-out"), get("sampled-out")
                if not all(isinstance(r, dict) for r in (off, out_, sampled)):
                    continue
                out.append(
                    f"- {label}{PLACEMENT_NAMES[placement]} / {driver_name(kind, d)}: off {off['rps']:,.0f} req/s "
                    f"(spread {spread(off) * 100:.0f} %); compiled out {out_['rps'] / off['rps']:.2f}× "
                    f"(spread {spread(out_) * 100:.0f} %); sampled out {sampled['rps'] / off['rps']:.2f}× "
                    f"(spread {spread(sampled) * 100:.0f} %)"
                )
    return out or ["- no load rows with all three builds"]


def median_run(rows):
    """The run with the median req/s (failures and n/a rows only when no run succeeded)."""
    ok = sorted((r for r in rows if isinstance(r, dict)), key=lambda r: r["rps"])
    if not ok:
        return rows[0]
    row = dict(ok[(len(ok) - 1) // 2])
    row["runs_rps"] = [r["rps"] if isinstance(r, dict) else r for r in rows]
    return row


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=5, help="seconds of recorded load per run (default 5)")
    ap.add_argument("--warmup", type=int, default=500, help="unrecorded calls before each run (default 500)")
    ap.add_argument("--servers", default=",".join(s.name for s in SERVERS))
    ap.add_argument("--scenarios", default=",".join(k for k, *_ in SCENARIOS))
    ap.add_argument("--drivers", default="mcpkit,independent", help="load drivers: mcpkit (mcpkit bench), independent")
    ap.add_argument("--soak-servers", default="mcpkit,floor", help="servers for the 1M-call soak (slow ones take minutes)")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="load runs per server and driver in the stdio and HTTP scenarios, taken in turns; the table "
        "shows the median run and the spread of all (default 5)",
    )
    ap.add_argument(
        "--telemetry",
        action="store_true",
        help="also run mcpkit built without instrumentation (compiled-out) and with spans exported but "
        "sampled out (sampled-out), in turns with the shipped binary, and print what telemetry costs",
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
    return opts


def main():
    opts = parse_args()
    wanted = opts.servers.split(",")
    servers = [s for s in SERVERS if s.name in wanted]
    if opts.baseline:
        servers.insert(1, mcpkit_server("baseline", os.path.abspath(opts.baseline)))
    if opts.telemetry:
        servers[1:1] = telemetry_servers(start_otlp_sink())
    scenarios = [sc for sc in SCENARIOS if sc[0] in opts.scenarios.split(",")]
    drivers = opts.drivers.split(",")
    if not opts.skip_build:
        build(opts.telemetry)

    load, started = os.getloadavg(), time.time()
    results = {}
    for key, label, kind, n, placements in scenarios:
        applies = [s for s in servers if kind != "soak" or s.name in opts.soak_servers.split(",")]
        is_load = kind in LOAD_KINDS
        for placement in placements:
            var = variant(key, placement)
            results[var] = {}
            runs = {}
            # Repeated load runs take turns across the servers and drivers, so a slow minute of
            # the machine does not land on one server's runs only.
            for r in range(opts.repeat if is_load else 1):
                for s in applies:
                    for d in drivers if is_load else (None,):
                        tag = f"[{label}{PLACEMENT_NAMES[placement]}] {s.name}" + (f" / {driver_name(kind, d)}" if d else "")
                        log(tag + (f" (run {r + 1} of {opts.repeat})" if is_load else "") + " ...")
                        row = measure(kind, s, n, opts, d, placement)
                        if row is None:
                            continue
                        runs.setdefault((s.name, d), []).append(row)
                        log(f"    {row if isinstance(row, str) else {k: v for k, v in row.items() if k != 'raw'}}")
            for (name, d), rows in runs.items():
                results[var].setdefault(name, {})[d] = median_run(rows) if is_load else rows[0]

    os.makedirs(os.path.dirname(opts.json), exist_ok=True)
    with open(opts.json, "w") as f:
        json.dump({str(k): {n: {str(d): r for d, r in v.items()} for n, v in rows.items()} for k, rows in results.items()}, f, indent=1)
    print()
    print(
        f"mcpkit comparison — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
        f"load average at start {load[0]:.1f}, at end {os.getloadavg()[0]:.1f}, {(time.time() - started) / 60:.1f} min; "
        f"{opts.duration} s per load run after {opts.warmup} warm-up calls (wrk: up to 200, sequential), "
        f"{opts.repeat} runs per server and driver in turns; ratios are figure / mcpkit's figure with the same driver"
    )
    print()
    print(render(results, servers, scenarios))
    print()
    print("req/s: the median run, [min–max] of all runs. Memory: peak RSS of the server process during the run;")
    print("for idle sessions, RSS growth per session; spawn: p50 = median, p99 = slowest of the runs;")
    print("soak: req/s = average over the 1M calls. The floor rows are each driver's own ceiling on this machine.")
    print()
    print("Targets (issue 18, on the independent driver):")
    print("\n".join(check_targets(results)))
    if opts.telemetry:
        print()
        print("What telemetry costs (req/s of each build / the shipped binary's, same driver; spread of the runs):")
        print("\n".join(telemetry_summary(results, scenarios)))


if __name__ == "__main__":
    main()
