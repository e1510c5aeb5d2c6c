#!/usr/bin/env node
// Minimal MCP server built with the official TypeScript SDK (McpServer).
//
// Usage:
//   node echo_server.mjs stdio        stdio transport
//   node echo_server.mjs http PORT    Streamable HTTP on http://127.0.0.1:PORT/mcp (stateful sessions)
//   node echo_server.mjs sse PORT     legacy HTTP+SSE: GET http://127.0.0.1:PORT/sse + POST /messages
//
// PORT 0 picks a free port. The HTTP modes print `listening on http://127.0.0.1:PORT/...` on
// stdout once they accept connections.
//
// Target of interop tests (mcpkit's Rust client calling a TS server) and of benchmarks. Tools:
//   echo(message: string) -> the same text
//   add(a: number, b: number) -> text and structuredContent {result: a + b}
//   fail() -> a result with isError: true

import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";

const HOST = "127.0.0.1";

function buildServer() {
  const server = new McpServer({ name: "ts-echo-server", version: "1.0.0" });

  server.registerTool(
    "echo",
    {
      description: "Echo the message back unchanged",
      inputSchema: { message: z.string() },
    },
    async ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );

  server.registerTool(
    "add",
    {
      description: "Add two numbers",
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { result: z.number() },
    },
    async ({ a, b }) => {
      const result = a + b;
      return { content: [{ type: "text", text: String(result) }], structuredContent: { result } };
    },
  );

  server.registerTool(
    "fail",
    { description: "Always fails (returns a tool error with isError: true)" },
    async () => ({ content: [{ type: "text", text: "intentional failure from fail()" }], isError: true }),
  );

  return server;
}

function usage(msg) {
  if (msg) console.error(`error: ${msg}`);
  console.error("usage: node echo_server.mjs stdio | http PORT | sse PORT");
  process.exit(2);
}

function parsePort(s) {
  const port = Number(s);
  if (!Number.isInteger(port) || port < 0 || port > 65535) usage(`bad port ${repr(s)}`);
  return port;
}

const repr = (v) => JSON.stringify(v);

function listen(app, port, path) {
  const httpServer = app.listen(port, HOST, (error) => {
    if (error) {
      console.error(`failed to listen on ${HOST}:${port}: ${error.message}`);
      process.exit(1);
    }
    const bound = httpServer.address().port;
    console.log(`listening on http://${HOST}:${bound}${path}`);
  });
  httpServer.on("error", (error) => {
    console.error(`failed to listen on ${HOST}:${port}: ${error.message}`);
    process.exit(1);
  });
  return httpServer;
}

function jsonRpcError(res, status, code, message) {
  res.status(status).json({ jsonrpc: "2.0", error: { code, message }, id: null });
}

async function runStdio() {
  const server = buildServer();
  await server.connect(new StdioServerTransport());
}

function runHttp(port) {
  // createMcpExpressApp validates Host (DNS rebinding protection) and parses JSON bodies.
  const app = createMcpExpressApp({ host: HOST });
  const transports = new Map(); // session id -> StreamableHTTPServerTransport

  app.post("/mcp", async (req, res) => {
    try {
      const sessionId = req.headers["mcp-session-id"];
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (sessionId && !transport) {
        jsonRpcError(res, 404, -32001, "Session not found");
        return;
      }
      if (!transport) {
        if (!isInitializeRequest(req.body)) {
          jsonRpcError(res, 400, -32000, "Bad Request: no session id, and not an initialize request");
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => transports.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) transports.delete(transport.sessionId);
        };
        await buildServer().connect(transport);
      }
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      console.error("error handling POST /mcp:", error);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal server error");
    }
  });

  const sessionRequest = async (req, res) => {
    const sessionId = req.headers["mcp-session-id"];
    const transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      jsonRpcError(res, sessionId ? 404 : 400, -32000, sessionId ? "Session not found" : "Missing Mcp-Session-Id");
      return;
    }
    try {
      await transport.handleRequest(req, res);
    } catch (error) {
      console.error(`error handling ${req.method} /mcp:`, error);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal server error");
    }
  };
  app.get("/mcp", sessionRequest);
  app.delete("/mcp", sessionRequest);

  const httpServer = listen(app, port, "/mcp");
  return async () => {
    for (const t of transports.values()) await t.close().catch(() => {});
    httpServer.close();
  };
}

function runSse(port) {
  const app = createMcpExpressApp({ host: HOST });
  const transports = new Map(); // session id -> SSEServerTransport

  app.get("/sse", async (req, res) => {
    try {
      const transport = new SSEServerTransport("/messages", res);
      transports.set(transport.sessionId, transport);
      transport.onclose = () => transports.delete(transport.sessionId);
      await buildServer().connect(transport);
    } catch (error) {
      console.error("error opening the SSE stream:", error);
      if (!res.headersSent) res.status(500).send("Error establishing SSE stream");
    }
  });

  app.post("/messages", async (req, res) => {
    const sessionId = req.query.sessionId;
    if (!sessionId) {
      res.status(400).send("Missing sessionId parameter");
      return;
    }
    const transport = transports.get(String(sessionId));
    if (!transport) {
      res.status(404).send("Session not found");
      return;
    }
    try {
      await transport.handlePostMessage(req, res, req.body);
    } catch (error) {
      console.error("error handling POST /messages:", error);
      if (!res.headersSent) res.status(500).send("Error handling request");
    }
  });

  const httpServer = listen(app, port, "/sse");
  return async () => {
    for (const t of transports.values()) await t.close().catch(() => {});
    httpServer.close();
  };
}

async function main() {
  const [mode, ...rest] = process.argv.slice(2);
  let shutdown = async () => {};
  if (mode === "stdio") {
    if (rest.length) usage("stdio takes no arguments");
    await runStdio();
  } else if (mode === "http" || mode === "sse") {
    if (rest.length !== 1) usage(`${mode} needs a PORT`);
    const port = parsePort(rest[0]);
    shutdown = mode === "http" ? runHttp(port) : runSse(port);
  } else {
    usage(mode ? `unknown transport ${repr(mode)}` : undefined);
  }
  const stop = async () => {
    await shutdown().catch(() => {});
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
