#!/usr/bin/env python3
"""Minimal MCP server built with the official Python SDK (mcp 2.x MCPServer), stdio transport.

Target of the reverse interop test (mcpkit's Rust client calling a Python server) and of
benchmarks. Tools:
  echo(message: str) -> str   returns the message unchanged
  add(a: int, b: int) -> int  returns a + b
  fail()                      always raises, so the result has isError: true
Tools are async so calls do not go through a worker thread (cheaper for benchmarks).
Usage: echo_server.py [stdio | http PORT | sse PORT] (HTTP on 127.0.0.1 at /mcp, SSE at /sse).
"""

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("python-echo-server")


@server.tool(description="Echo the message back unchanged")
async def echo(message: str) -> str:
    return message


@server.tool(description="Add two integers")
async def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Always fails (returns a tool error with isError: true)")
async def fail() -> str:
    # ToolError is the SDK's "expected" tool failure: isError result, no traceback on stderr.
    raise ToolError("intentional failure from fail()")


if __name__ == "__main__":
    import sys

    # echo_server.py [stdio | http PORT | sse PORT]   (HTTP: 127.0.0.1, /mcp; SSE: /sse)
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif mode == "sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        sys.exit(f"unknown mode {mode!r}: use stdio, http PORT or sse PORT")
