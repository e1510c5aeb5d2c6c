#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/seeds/<target>/ from the spec's example messages.

Sources (MCPKIT_SPEC_DIR, default /work/shared/spec): the example instances in
schema/<revision>/examples/<Type>/*.json and the ```json blocks of docs/**/*.md. A modest
corpus: at most MAX_PER_TARGET files per target, named by the SHA-1 of their content (as
cargo-fuzz names its corpus files), so re-running the script is idempotent.

Usage: fuzz/seed-corpus.py [SPEC_DIR]
"""

import hashlib
import json
import os
import pathlib
import re
import sys

MAX_PER_TARGET = 80
HERE = pathlib.Path(__file__).resolve().parent
SPEC = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MCPKIT_SPEC_DIR", "/work/shared/spec"))

# The order of DECODERS in fuzz_targets/method_params.rs: the first byte picks the method.
METHODS = [
    "initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/templates/list",
    "resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get",
    "completion/complete", "logging/setLevel", "tasks/get", "tasks/result", "tasks/list",
    "tasks/cancel", "sampling/createMessage", "elicitation/create", "roots/list", "server/discover",
    "subscriptions/listen", "notifications/subscriptions/acknowledged", "notifications/initialized",
    "notifications/cancelled", "notifications/progress", "notifications/message",
    "notifications/resources/updated", "notifications/resources/list_changed",
    "notifications/tools/list_changed", "notifications/prompts/list_changed",
    "notifications/roots/list_changed", "notifications/elicitation/complete",
    "notifications/tasks/status",
]


def spec_json():
    """Every JSON value the spec shows: example files, then doc code blocks."""
    for path in sorted(SPEC.glob("schema/*/examples/*/*.json")):
        try:
            yield json.loads(path.read_text())
        except ValueError:
            pass
    for path in sorted(SPEC.glob("docs/**/*.md")):
        for block in re.findall(r"```json[^\n]*\n(.*?)```", path.read_text(), re.S):
            try:
                yield json.loads(block)
            except ValueError:
                pass


def main():
    values = list(spec_json())
    messages = [v for v in values if isinstance(v, dict) and v.get("jsonrpc") == "2.0"]
    compact = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    seeds = {name: [] for name in
             ["jsonrpc_envelope", "method_params", "header_codec", "client_sse", "uri_template", "http_router"]}

    for m in messages:
        text = compact(m)
        seeds["jsonrpc_envelope"].append(text.encode())
        method = m.get("method")
        if method in METHODS and isinstance(m.get("params"), dict):
            seeds["method_params"].append(bytes([METHODS.index(method)]) + compact(m["params"]).encode())
        seeds["client_sse"].append(b"\x07" + f"id: 0_{len(seeds['client_sse'])}\nretry: 500\ndata: {text}\n\n".encode())
        if "method" in m:
            version = (m.get("params") or {}).get("_meta", {}).get("io.modelcontextprotocol/protocolVersion")
            head = ["POST /mcp", "content-type: application/json", "accept: application/json, text/event-stream"]
            if version:
                head += [f"mcp-protocol-version: {version}", f"mcp-method: {method}"]
                name = (m.get("params") or {}).get("name") or (m.get("params") or {}).get("uri")
                if isinstance(name, str):
                    head.append(f"mcp-name: {name}")
            seeds["http_router"].append(("\n".join(head) + "\n\n" + text).encode())
    # Malformed frames the parser must answer, and the other HTTP methods and paths.
    seeds["jsonrpc_envelope"] += [b'{"jsonrpc":"2.0","id":1,', b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
                                  b'{"jsonrpc":"2.0","id":null,"method":"ping"}', b'{"jsonrpc":"1.0","id":"x","method":"a"}',
                                  b'{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"m"}}']
    seeds["http_router"] += [b"GET /mcp\naccept: text/event-stream\n\n", b"DELETE /mcp\nmcp-session-id: abc\n\n",
                             b"GET /sse\naccept: text/event-stream\n\n", b"GET /healthz\n\n",
                             b"POST /messages?sessionId=x\ncontent-type: application/json\n\n{}",
                             b"POST /mcp\ncontent-type: application/json\ntransfer-encoding: chunked\n\n5\r\nhello\r\n0\r\n\r\n"]
    seeds["client_sse"] += [b"\x00: comment\n\nevent: endpoint\ndata: /messages?sessionId=1\n\n",
                            b"\x03id: 9\ndata: {\"jsonrpc\":\n data: \"2.0\"}\n\nid:\nretry: x\n\n",
                            b"\x01\xef\xbb\xbfdata: a\r\ndata: b\r\n\r\n"]

    # Tool input schemas with x-mcp-header annotations, each with arguments to mirror.
    for v in values:
        for tool in (v.get("tools") if isinstance(v, dict) else None) or []:
            schema = tool.get("inputSchema") if isinstance(tool, dict) else None
            if isinstance(schema, dict):
                args = {k: (p.get("examples") or ["text"])[0] if isinstance(p, dict) else None
                        for k, p in (schema.get("properties") or {}).items()}
                seeds["header_codec"].append(compact({"inputSchema": schema, "arguments": args}).encode())
    seeds["header_codec"] += [
        "us-west1".encode(), "Hello, 世界".encode(), b" padded ", b"=?base64?SGVsbG8=?=", b"=?base64?!!?=",
        compact({"inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "on": {"type": "boolean", "x-mcp-header": "On"}}},
            "arguments": {"region": "eu", "n": 42, "on": True}}).encode()]

    templates = {t for v in values for t in re.findall(r'"uriTemplate":\s*"([^"]*)"', json.dumps(v))}
    templates |= {"file:///{path}", "shop://{shelf}/items/{id}", "db://{+table}{?limit,offset}",
                  "x://{/segments}{.ext}{;param}{#frag}", "weather://{city}/{day}&{&unit}"}
    for t in sorted(templates):
        example = re.sub(r"\{[^}]*\}", "abc", t)
        seeds["uri_template"].append(f"{t}\n{example}".encode())

    for target, items in seeds.items():
        out = HERE / "seeds" / target
        out.mkdir(parents=True, exist_ok=True)
        unique = list(dict.fromkeys(items))[:MAX_PER_TARGET]
        for data in unique:
            (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
        print(f"{target}: {len(unique)} seeds")


if __name__ == "__main__":
    main()
