"""Soak and abuse run for mcpkit's servers; prints one markdown table (BENCHMARKS.md).

1. 1,000,000 `tools/call echo` over stdio (`mcpkit serve`, 64 in flight on one connection,
   bench/src/bin/stdio-soak): RSS at 1,000 / 100,000 / 1,000,000 calls.
2. 1,000,000 calls over Streamable HTTP (`mcpkit serve --http`, `mcpkit bench`, 16 concurrent
   POSTs on one session): RSS after the first 100,000 and after the rest, and the peak
   (sampled every 0.5 s).
3. Sessions (`mcpkit serve --http` with a short `--session-idle-timeout`, and session caps
   raised so that one client may open them all): 1,000 sessions opened, one call each, and
   DELETEd (the baseline, allocator warm-up excluded), then 100,000 more; then 100,000 opened
   and abandoned, RSS once the idle expiry has reaped them (checked: the first and the last of
   them answer 404) and after one more session. Acceptance: RSS after the 100,000 deleted
   within 10% of the baseline.
4. 500 stalled connections (half send nothing, half stop inside their request headers and
   drip a byte now and then), reopened as the server closes them, while `mcpkit bench`
   measures a normal client; the same client alone just before and just after, in the same
   run, so the ratio is against the same machine load.

Usage: bench/soak [--no-build] [--calls N] [--sessions N] [--idle-timeout SECONDS]
                  [--stalled N] [--measure SECONDS] [--skip stdio,http,sessions,stalled]
"""

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drivers import BIN, HOST, MCPKIT, ROOT, log, proc_status  # noqa: E402

ECHO = '{"message":"hello"}'
VERSION = "2025-11-25"


def rss(pid):
    return proc_status(pid, "VmRSS")


def mib(kib):
    return f"{kib / 1024:.1f} MiB" if kib is not None else "–"


class Sampler:
    """Samples a process's VmRSS every 0.5 s; keeps the peak."""

    def __init__(self, pid):
        self.pid, self.peak, self.stopped = pid, 0, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopped.is_set():
            self.peak = max(self.peak, rss(self.pid) or 0)
            self.stopped.wait(0.5)

    def stop(self):
        self.stopped.set()
        self.thread.join()
        return max(self.peak, rss(self.pid) or 0)


class Served:
    """`mcpkit serve --http 127.0.0.1:0 EXTRA…`: reads the bound URL from its banner on stderr."""

    def __init__(self, extra=()):
        argv = [MCPKIT, "serve", "--http", f"{HOST}:0", *extra]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        line = self.proc.stderr.readline().decode()
        if "http://127.0.0.1:" not in line:
            self.stop()
            raise RuntimeError(f"mcpkit serve: unexpected banner {line!r}")
        self.url = line.strip().split()[-1]
        self.port = int(self.url.split(":")[2].split("/")[0])
        self.pid = self.proc.pid
        # Keep draining its stderr so the server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def bench(url, concurrency, n=None, duration=None, warmup=200):
    argv = [MCPKIT, "bench", "--server", url, "--tool", "echo", "--args", ECHO, "-c", str(concurrency),
            "--warmup", str(warmup), "--json"]
    argv += ["-d", f"{duration}s"] if duration else ["-n", str(n)]
    done = subprocess.run(argv, capture_output=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"mcpkit bench: {done.stderr.decode(errors='replace')[-400:]}")
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# 1 and 2: a million calls
# ---------------------------------------------------------------------------------------------


def stdio_calls(calls):
    checkpoints = ",".join(str(c) for c in (1000, calls // 10, calls))
    done = subprocess.run([os.path.join(BIN, "stdio-soak"), "64", checkpoints, "--", MCPKIT, "serve"],
                          capture_output=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode(errors="replace"))
    out = json.loads(done.stdout)
    cps = {c["calls"]: c["rss_kib"] for c in out["checkpoints"]}
    return [cps[k] for k in sorted(cps)], out["seconds"]


def http_calls(calls):
    srv = Served()
    try:
        sampler = Sampler(srv.pid)
        first = bench(srv.url, 16, n=calls // 10)
        after_first = rss(srv.pid)
        rest = bench(srv.url, 16, n=calls - calls // 10)
        time.sleep(1)
        end = rss(srv.pid)
        return after_first, end, sampler.stop(), first, rest
    finally:
        srv.stop()


# ---------------------------------------------------------------------------------------------
# 3: sessions deleted and abandoned
# ---------------------------------------------------------------------------------------------


def post(conn, body, session=None):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = VERSION
    conn.request("POST", "/mcp", body=body, headers=headers)
    r = conn.getresponse()
    data = r.read()
    return r.status, r.getheader("Mcp-Session-Id"), data


INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "soak", "version": "0"}}})
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
CALL = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"message": "hello"}}})


def open_session(conn, i):
    """initialize, initialized and one `tools/call echo`: the session's id."""
    status, sid, data = post(conn, INIT)
    if status != 200 or not sid:
        raise RuntimeError(f"initialize #{i}: HTTP {status}: {data[:200]!r}")
    status, _, data = post(conn, INITIALIZED, sid)
    if status != 202:
        raise RuntimeError(f"notifications/initialized #{i}: HTTP {status}: {data[:200]!r}")
    status, _, data = post(conn, CALL, sid)
    if status != 200 or b'"hello"' not in data:
        raise RuntimeError(f"tools/call #{i}: HTTP {status}: {data[:200]!r}")
    return sid


def delete(conn, sid):
    conn.request("DELETE", "/mcp", headers={"Mcp-Session-Id": sid, "MCP-Protocol-Version": VERSION})
    r = conn.getresponse()
    r.read()
    return r.status


def sessions(port, count, keep):
    """Open COUNT sessions, one call each; DELETE each unless `keep`. The ids kept."""
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    kept = []
    for i in range(count):
        sid = open_session(conn, i)
        if keep:
            kept.append(sid)
        elif (status := delete(conn, sid)) not in (200, 204):
            raise RuntimeError(f"DELETE #{i}: HTTP {status}")
    conn.close()
    return kept


def session_churn(count, idle_s):
    # One client opens them all: the per-client and total caps are raised above the count.
    cap = str(count * 2)
    srv = Served(["--session-idle-timeout", f"{idle_s}s", "--max-sessions", cap, "--max-sessions-per-client", cap])
    try:
        sessions(srv.port, 1000, keep=False)
        time.sleep(1)
        baseline = rss(srv.pid)
        t = time.time()
        sampler = Sampler(srv.pid)
        sessions(srv.port, count, keep=False)
        peak_deleted = sampler.stop()
        t_deleted = time.time() - t
        time.sleep(1)
        deleted = rss(srv.pid)
        t = time.time()
        sampler = Sampler(srv.pid)
        kept = sessions(srv.port, count, keep=True)
        t_abandoned = time.time() - t
        # The idle expiry plus the reaper's period (a quarter of it), with margin.
        time.sleep(idle_s * 2 + 1)
        peak_abandoned = sampler.stop()
        abandoned = rss(srv.pid)
        conn = http.client.HTTPConnection(HOST, srv.port, timeout=30)
        for sid in (kept[0], kept[-1]):
            status, _, data = post(conn, CALL, sid)
            if status != 404:
                raise RuntimeError(f"abandoned session {sid} still served: HTTP {status} {data[:200]!r}")
        conn.close()
        # The server forgets its ended sessions' entries when the next session starts: one more.
        sessions(srv.port, 1, keep=False)
        time.sleep(1)
        next_session = rss(srv.pid)
        return dict(baseline=baseline, deleted=deleted, peak_deleted=peak_deleted, t_deleted=t_deleted,
                    peak_abandoned=peak_abandoned, abandoned=abandoned, next_session=next_session,
                    t_abandoned=t_abandoned)
    finally:
        srv.stop()


# ---------------------------------------------------------------------------------------------
# 4: stalled connections
# ---------------------------------------------------------------------------------------------


class Stallers:
    """Keeps COUNT stalled connections open to PORT: even ones send nothing; odd ones send the
    start of a request's headers and then one more byte every 2 s (slowloris). One the server
    closes is counted and opened again."""

    def __init__(self, port, count):
        self.port, self.count = port, count
        self.socks = [None] * count
        self.closed = [0, 0]  # silent, slowloris
        self.stopped = threading.Event()
        for i in range(count):
            self.socks[i] = self.connect(i)
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def connect(self, i):
        s = socket.create_connection((HOST, self.port), timeout=5)
        if i % 2:
            s.sendall(f"POST /mcp HTTP/1.1\r\nHost: {HOST}:{self.port}\r\nContent-Type: appli".encode())
        s.setblocking(False)
        return s

    def closed_by_server(self, s):
        try:
            data = s.recv(4096)
            return True if data == b"" else self.closed_by_server(s)  # a 408 first, then EOF
        except BlockingIOError:
            return False
        except OSError:
            return True

    def run(self):
        tick = 0
        while not self.stopped.wait(0.5):
            tick += 1
            for i, s in enumerate(self.socks):
                if self.closed_by_server(s):
                    self.closed[i % 2] += 1
                    s.close()
                    try:
                        self.socks[i] = self.connect(i)
                    except OSError:
                        self.socks[i] = socket.socket()  # retried on the next tick
                elif i % 2 and tick % 4 == 0:
                    try:
                        s.send(b"c")
                    except OSError:
                        pass

    def stop(self):
        self.stopped.set()
        self.thread.join()
        for s in self.socks:
            s.close()


def stalled(count, seconds):
    srv = Served()
    try:
        alone_before = bench(srv.url, 4, duration=seconds)
        rss_before = rss(srv.pid)
        stallers = Stallers(srv.port, count)
        try:
            time.sleep(1)
            during = bench(srv.url, 4, duration=seconds)
            rss_during = rss(srv.pid)
        finally:
            stallers.stop()
        alone_after = bench(srv.url, 4, duration=seconds)
        return dict(before=alone_before, during=during, after=alone_after, rss_before=rss_before,
                    rss_during=rss_during, closed=stallers.closed)
    finally:
        srv.stop()


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--sessions", type=int, default=100_000)
    ap.add_argument("--idle-timeout", type=int, default=2, help="the session idle expiry, seconds (default 2)")
    ap.add_argument("--stalled", type=int, default=500)
    ap.add_argument("--measure", type=int, default=15, help="seconds of each stalled-run latency measurement")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: stdio,http,sessions,stalled")
    opts = ap.parse_args()
    skip = set(opts.skip.split(","))
    if not opts.no_build:
        subprocess.run(["cargo", "build", "--profile", "dist", "--locked", "-p", "mcpkit-cli", "--features", "full"], cwd=ROOT, check=True)
        subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "stdio-soak"],
                       cwd=os.path.join(ROOT, "bench"), check=True)
    rows, failed = [], []
    started = time.time()
    if "stdio" not in skip:
        log("stdio: calls …")
        (first, tenth, last), secs = stdio_calls(opts.calls)
        rows.append((f"stdio: {opts.calls:,} calls (64 in flight)",
                     f"{mib(first)} after 1,000 · {mib(tenth)} after {opts.calls // 10:,} · {mib(last)} after {opts.calls:,}",
                     f"{(last - tenth) / tenth * 100:+.1f}% from {opts.calls // 10:,} to {opts.calls:,}; "
                     f"{opts.calls / secs:,.0f} calls/s"))
    if "http" not in skip:
        log("http: calls …")
        after_first, end, peak, first, rest = http_calls(opts.calls)
        errors = first.get("errors", 0) + rest.get("errors", 0)
        rows.append((f"Streamable HTTP: {opts.calls:,} calls (16 concurrent, one session)",
                     f"{mib(after_first)} after {opts.calls // 10:,} · {mib(end)} after {opts.calls:,} · peak {mib(peak)}",
                     f"{(end - after_first) / after_first * 100:+.1f}%; {rest.get('rps', 0):,.0f} calls/s; {errors} errors"))
    if "sessions" not in skip:
        log("sessions …")
        s = session_churn(opts.sessions, opts.idle_timeout)
        growth = (s["deleted"] - s["baseline"]) / s["baseline"]
        met = abs(growth) <= 0.10
        if not met:
            failed.append("sessions deleted")
        rows.append((f"{opts.sessions:,} sessions opened, one call each, DELETEd",
                     f"{mib(s['baseline'])} after the first 1,000 · peak {mib(s['peak_deleted'])} · "
                     f"{mib(s['deleted'])} after {opts.sessions:,} more",
                     f"{growth * 100:+.1f}% (target within 10%: {'met' if met else 'MISSED'}); "
                     f"{opts.sessions / s['t_deleted']:,.0f} sessions/s"))
        rows.append((f"{opts.sessions:,} sessions opened, one call each, abandoned ({opts.idle_timeout} s idle expiry)",
                     f"peak {mib(s['peak_abandoned'])} · {mib(s['abandoned'])} once expired · "
                     f"{mib(s['next_session'])} after one more session",
                     f"{(s['abandoned'] - s['baseline']) / s['baseline'] * 100:+.1f}% vs the baseline; "
                     f"{opts.sessions / s['t_abandoned']:,.0f} sessions/s; expired ones answer 404"))
    if "stalled" not in skip:
        log("stalled connections …")
        r = stalled(opts.stalled, opts.measure)
        alone = {k: (r["before"][k] + r["after"][k]) / 2 for k in ("p50_us", "p99_us", "rps")}
        lat = lambda b: f"p50 {b['p50_us'] / 1000:.2f} ms, p99 {b['p99_us'] / 1000:.2f} ms, {b['rps']:,.0f} calls/s"
        ratio = lambda k: r["during"][k] / alone[k]
        errors = sum(r[k].get("errors", 0) for k in ("before", "during", "after"))
        rows.append((f"{opts.stalled} stalled connections ({opts.stalled // 2} silent, {opts.stalled - opts.stalled // 2} "
                     f"inside their headers, reopened when closed) vs a normal client (4 concurrent, {opts.measure} s)",
                     f"{mib(r['rss_before'])} → {mib(r['rss_during'])}",
                     f"with them / alone: p50 ×{ratio('p50_us'):.2f}, p99 ×{ratio('p99_us'):.2f}, "
                     f"calls/s ×{ratio('rps'):.2f} (alone before: {lat(r['before'])}; with them: {lat(r['during'])}; "
                     f"alone after: {lat(r['after'])}); {errors} errors; closed by the server meanwhile: "
                     f"{r['closed'][0]} silent, {r['closed'][1]} slowloris"))
    print()
    print("| scenario | server RSS | result |")
    print("| --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    load = os.getloadavg()
    print(f"Machine: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
          f"at the end; run took {time.time() - started:,.0f} s.")
    if failed:
        print(f"Missed: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
