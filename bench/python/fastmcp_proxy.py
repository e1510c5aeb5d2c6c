#!/usr/bin/env python3
"""FastMCP's proxy in front of one upstream, for bench/gateway: `fastmcp_proxy.py UPSTREAM_URL
PORT` serves Streamable HTTP on http://127.0.0.1:PORT/mcp with FastMCP's defaults (create_proxy:
the upstream's tools under their own names, a fresh upstream session per request)."""

import sys

from fastmcp.server import create_proxy

if __name__ == "__main__":
    upstream, port = sys.argv[1], int(sys.argv[2])
    proxy = create_proxy(upstream, name="fastmcp-proxy")
    proxy.run(transport="http", host="127.0.0.1", port=port, show_banner=False, log_level="WARNING")
