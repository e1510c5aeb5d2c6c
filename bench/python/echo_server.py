#!/usr/bin/env python3
"""`echo` MCP server on the official Python SDK (PyPI `mcp`, MCPServer), for mcpkit's harness.

Usage (run with the interop venv, target/interop-venv/bin/python, made by scripts/setup-interop.sh):
  echo_server.py stdio                     stdio transport
  echo_server.py http PORT                 Streamable HTTP at http://127.0.0.1:PORT/mcp, sessions
                                           (the SDK's default: SSE replies)
  echo_server.py http PORT --stateless     no sessions, JSON replies (stateless_http, json_response)

Tool: echo(message: str) -> one text content block with the message. The tool is async so calls
do not go through a worker thread.
"""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("python-echo-server")


@server.tool(description="Echoes the message back")
async def echo(message: str) -> str:
    return message


def main(argv: list[str]) -> None:
    if argv == ["stdio"]:
        server.run("stdio")
    elif len(argv) in (2, 3) and argv[0] == "http" and argv[2:] in ([], ["--stateless"]):
        stateless = argv[2:] == ["--stateless"]
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=int(argv[1]),
            stateless_http=stateless,
            json_response=stateless,
        )
    else:
        sys.exit("usage: echo_server.py stdio | http PORT [--stateless]")


if __name__ == "__main__":
    main(sys.argv[1:])
