#!/usr/bin/env python3
"""The scale curves of BENCHMARKS.md, measured with the independent drivers and plotted.

How throughput and p99 grow with 1, 16, 64 and 256 concurrent HTTP callers on one 2025-11-25
session (wrk) and with 1, 64 and 1,024 pipelined stdio calls (bench/src/bin/stdio-load.rs); how
the time of a full `tools/list` grows with 10, 1,000 and 10,000 tools (stdio-load --list-tools
against crates/mcpkit-cli/examples/many_tools.rs and `rmcp-echo stdio --tools N`); and memory per
idle HTTP session at 1,000, 10,000 and 100,000 open sessions (rmcp only up to 10,000: at ~55 KiB a
session, 100,000 would take gigabytes). mcpkit next to rmcp, the floor as the machine's limit.

Usage: bench/run --curves [--duration S] [--repeat N] [--skip-build] [--svg PATH] [--json PATH]
(or python3 bench/curves.py …). The plot needs matplotlib: the harness makes a venv for it in
target/bench-venv from bench/requirements.txt.
"""

import argparse
import json
import os
import subprocess
import sys
import time

from drivers import BIN, HOST, MCPKIT, ROOT, log, run_http_load, run_stdio_load, session_memory

HTTP_CALLERS = (1, 16, 64, 256)
STDIO_IN_FLIGHT = (1, 64, 1024)
TOOL_COUNTS = (10, 1000, 10000)
SESSION_COUNTS = (1000, 10000, 100000)
MANY_TOOLS = os.path.join(ROOT, "target", "dist", "examples", "many_tools")
VENV = os.path.join(ROOT, "target", "bench-venv")
COLORS = {"mcpkit": "#1f77b4", "rmcp": "#d62728", "floor": "#7f7f7f"}


def servers():
    rmcp = os.path.join(BIN, "rmcp-echo")
    floor = os.path.join(BIN, "floor")
    return {
        "mcpkit": {
            "stdio": [MCPKIT, "serve"],
            "http": lambda p: [MCPKIT, "serve", "--http", f"{HOST}:{p}"],
            "sessions": lambda p: [MCPKIT, "serve", "--http", f"{HOST}:{p}", "--max-sessions", "200000",
                                   "--max-sessions-per-client", "200000"],
            "tools": lambda n: [MANY_TOOLS, str(n)],
        },
        "rmcp": {
            "stdio": [rmcp, "stdio"],
            "http": lambda p: [rmcp, "http", f"{HOST}:{p}"],
            "sessions": lambda p: [rmcp, "http", f"{HOST}:{p}"],
            "tools": lambda n: [rmcp, "stdio", "--tools", str(n)],
        },
        "floor": {"stdio": [floor, "stdio"], "http": lambda p: [floor, "http", f"{HOST}:{p}"]},
    }


def median_of(runs):
    ok = sorted(runs, key=lambda r: r["rps"])
    return ok[(len(ok) - 1) // 2]


def measure(opts):
    out = {"http": {}, "stdio": {}, "tools_list": {}, "sessions": {}}
    only = opts.only.split(",")
    srv = servers()
    for n in HTTP_CALLERS if "http" in only else ():
        runs = {name: [] for name in srv}
        for _ in range(opts.repeat):
            for name, s in srv.items():
                log(f"[curves] HTTP {n} callers: {name}")
                rep, _ = run_http_load(s["http"], n, opts, driver="independent")
                runs[name].append(rep)
        for name, rs in runs.items():
            m = median_of(rs)
            out["http"].setdefault(name, []).append({"x": n, "rps": m["rps"], "p99_us": m["p99_us"]})
    for n in STDIO_IN_FLIGHT if "stdio" in only else ():
        runs = {name: [] for name in srv}
        for _ in range(opts.repeat):
            for name, s in srv.items():
                log(f"[curves] stdio {n} in flight: {name}")
                rep, _ = run_stdio_load(s["stdio"], n, opts, driver="independent")
                runs[name].append(rep)
        for name, rs in runs.items():
            m = median_of(rs)
            out["stdio"].setdefault(name, []).append({"x": n, "rps": m["rps"], "p99_us": m["p99_us"]})
    tool_servers = ("mcpkit", "rmcp") if os.path.exists(MANY_TOOLS) else ("rmcp",)
    if len(tool_servers) == 1:
        log(f"[curves] {MANY_TOOLS} is not built (cargo build --profile dist -p mcpkit-cli --features full --example many_tools): "
            "tools/list without mcpkit")
    for n in TOOL_COUNTS if "tools_list" in only else ():
        for name in tool_servers:
            log(f"[curves] tools/list with {n} tools: {name}")
            argv = [os.path.join(BIN, "stdio-load"), "--list-tools", "--duration", str(opts.duration), "--warmup", "3"]
            done = subprocess.run(argv + ["--"] + srv[name]["tools"](n), capture_output=True, timeout=600)
            if done.returncode != 0:
                raise RuntimeError(f"stdio-load --list-tools: {done.stderr.decode(errors='replace')[-300:]}")
            rep = json.loads(done.stdout.decode().strip().splitlines()[-1])
            if rep["errors"] or rep.get("tools") != n:
                raise RuntimeError(f"{name} listed {rep.get('tools')} of {n} tools ({rep['errors']} errors)")
            out["tools_list"].setdefault(name, []).append({"x": n, "p50_us": rep["p50_us"], "p99_us": rep["p99_us"]})
    for n in SESSION_COUNTS if "sessions" in only else ():
        for name in ("mcpkit", "rmcp"):
            if name == "rmcp" and n > 10000:
                continue
            log(f"[curves] {n} idle sessions: {name}")
            per, total, note = session_memory(srv[name]["sessions"], n)
            out["sessions"].setdefault(name, []).append({"x": n, "kib_per_session": per, "note": note})
    return out


def plot(data, path, title):
    import matplotlib  # noqa: PLC0415 (only in the bench venv)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    panels = [
        ("http", "rps", "HTTP session: req/s vs callers (wrk)", "concurrent callers", "req/s"),
        ("http", "p99_us", "HTTP session: p99 vs callers (wrk)", "concurrent callers", "p99 (µs)"),
        ("stdio", "rps", "stdio: calls/s vs in flight (stdio-load)", "calls in flight", "calls/s"),
        ("stdio", "p99_us", "stdio: p99 vs in flight (stdio-load)", "calls in flight", "p99 (µs)"),
        ("tools_list", "p50_us", "full tools/list: median time vs tools", "tools", "µs per listing"),
        ("sessions", "kib_per_session", "memory per idle HTTP session", "open sessions", "KiB per session"),
    ]
    fig, axes = plt.subplots(3, 2, figsize=(11, 12))
    for ax, (group, field, name, xlabel, ylabel) in zip(axes.flat, panels):
        for server, points in data[group].items():
            xs, ys = [p["x"] for p in points], [p[field] for p in points]
            ax.plot(xs, ys, marker="o", label=server, color=COLORS.get(server))
            for x, y in zip(xs, ys):
                ax.annotate(f"{y:,.0f}" if y >= 10 else f"{y:.2f}", (x, y), textcoords="offset points",
                            xytext=(4, 4), fontsize=7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    log(f"wrote {path}")


def ensure_venv():
    """The bench venv with matplotlib (pinned in bench/requirements.txt); returns its python."""
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    req = os.path.join(ROOT, "bench", "requirements.txt")
    subprocess.run([py, "-m", "pip", "install", "-q", "-r", req], check=True)
    return py


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=3, help="seconds per load run (default 3)")
    ap.add_argument("--warmup", type=int, default=500, help="unrecorded calls before each run (default 500)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per point, servers in turns; the median is plotted")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--json", default=os.path.join(ROOT, "target", "bench-curves.json"))
    ap.add_argument("--svg", default=os.path.join(ROOT, "bench", "scale-curves.svg"))
    ap.add_argument("--plot-only", action="store_true", help="plot the --json file of an earlier run")
    ap.add_argument("--only", default="http,stdio,tools_list,sessions", help="which curves to measure")
    opts = ap.parse_args()
    opts.duration = int(opts.duration) if opts.duration == int(opts.duration) else opts.duration
    if opts.plot_only:
        with open(opts.json) as f:
            saved = json.load(f)
        plot(saved["data"], opts.svg, saved["title"])
        return
    if not opts.skip_build:
        for argv, cwd in (
            (["cargo", "build", "--profile", "dist", "--locked", "-p", "mcpkit-cli", "--bin", "mcpkit", "--example", "many_tools"], ROOT),
            (["cargo", "build", "--release", "--locked"], os.path.join(ROOT, "bench")),
        ):
            subprocess.run(argv, cwd=cwd, check=True)
    load, started = os.getloadavg(), time.time()
    data = measure(opts)
    title = (
        f"mcpkit scale curves — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
        f"load {load[0]:.1f} → {os.getloadavg()[0]:.1f}, {(time.time() - started) / 60:.1f} min; "
        f"median of {opts.repeat} runs of {opts.duration} s per point"
    )
    with open(opts.json, "w") as f:
        json.dump({"title": title, "data": data}, f, indent=1)
    print(json.dumps(data, indent=1))
    # The plot runs in the bench venv (matplotlib); the measurement needs only the standard library.
    py = ensure_venv()
    subprocess.run([py, os.path.abspath(__file__), "--plot-only", "--json", opts.json, "--svg", opts.svg], check=True)


if __name__ == "__main__":
    main()
