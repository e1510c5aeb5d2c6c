"""Process helpers and load drivers of the comparison harness (bench/harness.py, bench/curves.py).

Two drivers per load scenario: `mcpkit bench` (mcpkit's own, --driver wire) and an independent
one that shares no code with mcpkit: `wrk` (Debian's, with bench/wrk/tools-call.lua) over HTTP
and bench/src/bin/stdio-load.rs over stdio. A placement pins server and driver with `taskset`:
`same` (both on CPU 0) or `split` (server on CPU 0, driver on CPU 1); None leaves both free.
"""

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
MCPKIT = os.path.join(ROOT, "target", "dist", "mcpkit")
BIN = os.path.join(BENCH, "target", "release")
WRK = shutil.which("wrk") or "wrk"
WRK_LUA = os.path.join(BENCH, "wrk", "tools-call.lua")
ECHO_ARGS = '{"message":"hello, this is a typical tool argument of moderate length"}'
HOST = "127.0.0.1"

# CPU of the server and of the driver for each placement.
PLACEMENTS = {"same": ("0", "0"), "split": ("0", "1")}


def pinned(argv, placement, who):
    """argv under `taskset -c CPU` for the server (who=0) or the driver (who=1) of a placement."""
    if not placement:
        return list(argv)
    return ["taskset", "-c", PLACEMENTS[placement][who]] + list(argv)


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

    def __init__(self, argv_for_port, placement=None, env=None, start_timeout=30):
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}/mcp"
        self.proc = subprocess.Popen(
            pinned(argv_for_port(self.port), placement, 0),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        deadline = time.time() + start_timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"exited with {self.proc.returncode}: {self.proc.stderr.read().decode()[-500:]}")
            try:
                socket.create_connection((HOST, self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"did not start listening within {start_timeout} s")

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
    """argv of `mcpkit bench` against a target (its JSON report on the last stdout line)."""
    return [
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


def run_stdio_load(stdio_argv, concurrency, opts, driver="mcpkit", placement=None):
    """One stdio load run. Returns (report with rps/p50_us/p99_us, the server's peak RSS in KiB)."""
    server = pinned(stdio_argv, placement, 0)
    if driver == "mcpkit":
        argv = mcpkit_bench(["--"] + server, concurrency, opts)
    else:
        argv = [os.path.join(BIN, "stdio-load"), "--in-flight", str(concurrency), "--duration", str(opts.duration)]
        argv += ["--warmup", str(opts.warmup), "--args", ECHO_ARGS, "--"] + server
    proc = subprocess.Popen(pinned(argv, placement, 1), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rss = PeakRss(proc.pid, child_of=True)
    out, err = proc.communicate(timeout=opts.duration * 4 + 120)
    peak = rss.stop()
    return parse_report(out, err, proc.returncode, "mcpkit" if driver == "mcpkit" else "stdio-load"), peak


def open_session(port, version="2025-11-25"):
    """initialize + notifications/initialized on a fresh connection; returns the session id."""
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        status, sid, data = post(conn, initialize_body("harness", version))
        if status != 200:
            raise RuntimeError(f"initialize: HTTP {status}: {data[:200]!r}")
        status, _, data = post(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session=sid, version=version)
        if status not in (200, 202):
            raise RuntimeError(f"notifications/initialized: HTTP {status}: {data[:200]!r}")
        return sid
    finally:
        conn.close()


def warm_up(port, sid, calls, stateless, tool="echo"):
    """A few sequential calls of `tool` on one connection before wrk's run (wrk has no warm-up
    phase)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    args = json.loads(ECHO_ARGS)
    try:
        for i in range(calls):
            params = {"name": tool, "arguments": args}
            if stateless:
                params["_meta"] = {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "warm-up", "version": "0"},
                }
                extra = {"Mcp-Method": "tools/call", "Mcp-Name": tool}
                status, _, data = post(conn, call_body(i, params), version="2026-07-28", extra=extra)
            else:
                status, _, data = post(conn, call_body(i, params), session=sid, version="2025-11-25")
            if status != 200:
                raise RuntimeError(f"warm-up call: HTTP {status}: {data[:200]!r}")
    finally:
        conn.close()


def call_body(i, params):
    return {"jsonrpc": "2.0", "id": 1_000_000 + i, "method": "tools/call", "params": params}


def wrk_run(url, concurrency, opts, mode, sid=None, placement=None, tool="echo", timeout=None, auth=None):
    """wrk with bench/wrk/tools-call.lua calling `tool` (with `auth` as the Authorization
    header, when given): returns the report (rps, p50_us, p99_us, ...)."""
    threads = 1 if concurrency == 1 else 2
    argv = [WRK, f"-t{threads}", f"-c{concurrency}", f"-d{max(1, round(opts.duration))}s", "--latency"]
    if timeout:
        argv += ["--timeout", f"{timeout}s"]  # wrk's default is 2 s: a slow server's calls count as errors
    argv += ["-s", WRK_LUA, url]
    env = dict(os.environ, MODE=mode, ARGS=ECHO_ARGS, TOOL=tool)
    if sid:
        env["SID"] = sid
    if auth:
        env["AUTH"] = auth
    done = subprocess.run(pinned(argv, placement, 1), capture_output=True, timeout=opts.duration * 4 + 60, env=env)
    return parse_report(done.stdout, done.stderr, done.returncode, "wrk")


def run_http_load(argv_for_port, concurrency, opts, driver="mcpkit", placement=None, stateless=False):
    """One HTTP load run on a fresh server process: (report, the server's peak RSS in KiB)."""
    with HttpServer(argv_for_port, placement) as srv:
        rss = PeakRss(srv.proc.pid)
        if driver == "mcpkit":
            extra = ["--protocol", "2026-07-28"] if stateless else []
            argv = pinned(mcpkit_bench(["--server", srv.url, *extra], concurrency, opts), placement, 1)
            done = subprocess.run(argv, capture_output=True, timeout=opts.duration * 4 + 120)
            report = parse_report(done.stdout, done.stderr, done.returncode, "mcpkit")
        else:
            sid = None if stateless else open_session(srv.port)
            warm_up(srv.port, sid, min(opts.warmup, 200), stateless)
            report = wrk_run(srv.url, concurrency, opts, "stateless" if stateless else "session", sid, placement)
        peak = rss.stop()
        return report, peak


def parse_report(out, err, code, driver):
    """The JSON report of a driver, normalized to rps / p50_us / p99_us; raises on any error."""
    name = {"mcpkit": "mcpkit bench", "wrk": "wrk", "stdio-load": "stdio-load"}.get(driver, driver)
    if code != 0:
        raise RuntimeError(f"{name} failed ({code}): {err.decode(errors='replace').strip()[-400:]}")
    lines = out.decode(errors="replace").strip().splitlines()
    if not lines:
        raise RuntimeError(f"{name} printed nothing: {err.decode(errors='replace').strip()[-400:]}")
    report = json.loads(lines[-1])
    if driver == "wrk":
        if report["bad"] or report["socket_errors"]:
            raise RuntimeError(
                f"wrk: {report['bad']} bad replies, {report['socket_errors']} socket errors "
                f"of {report['requests']} (first: {report['first_bad']})"
            )
        report["rps"] = report["requests"] / report["seconds"]
    elif report.get("errors"):
        raise RuntimeError(f"{name}: {report['errors']} of {report['requests']} calls failed")
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


def initialize_body(name, version="2025-11-25"):
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": name, "version": "0"}},
    }


def open_sessions(port, count):
    """Open COUNT sessions (initialize + notifications/initialized each) and leave them open.

    Returns (opened, error): a server that stops answering part way is measured on the sessions
    it did open, and the table says so."""
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    opened = 0
    try:
        for i in range(count):
            status, sid, data = post(conn, initialize_body(f"session-{i}"))
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


def session_memory(argv_for_port, count):
    with HttpServer(argv_for_port) as srv:
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


