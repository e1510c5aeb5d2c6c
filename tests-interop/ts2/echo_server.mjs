#!/usr/bin/env node
// Minimal MCP server built with the official TypeScript SDK v2 (`@modelcontextprotocol/server`),
// which speaks protocol revision 2026-07-28 (stateless, per-request `_meta`, `server/discover`)
// and, from the same factory, the 2025-era handshake.
//
// Usage:
//   node echo_server.mjs stdio        stdio (serveStdio: the opening message picks the era)
//   node echo_server.mjs http PORT    Streamable HTTP on http://127.0.0.1:PORT/mcp
//                                     (createMcpHandler: 2026-07-28 per request, 2025-era
//                                     requests served statelessly)
//
// PORT 0 picks a free port. The HTTP mode prints `listening on http://127.0.0.1:PORT/mcp` on
// stdout once it accepts connections.
//
// Target of interop tests (mcpkit's Rust client calling a TS v2 server). Tools, as in
// ../ts/echo_server.mjs (the 1.x SDK):
//   echo(message: string) -> the same text
//   add(a: number, b: number) -> text and structuredContent {result: a + b} (with an output schema)
//   fail() -> a result with isError: true

import { createServer } from "node:http";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { toNodeHandler, localhostHostValidation } from "@modelcontextprotocol/node";
import * as z from "zod";

const HOST = "127.0.0.1";

/** One server instance; both serving entries call this factory (per connection / per request). */
function buildServer() {
  const server = new McpServer({ name: "ts2-echo-server", version: "1.0.0" }, { capabilities: { tools: {} } });

  server.registerTool(
    "echo",
    {
      description: "Echo the message back unchanged",
      inputSchema: z.object({ message: z.string() }),
    },
    async ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );

  server.registerTool(
    "add",
    {
      description: "Add two numbers",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      outputSchema: z.object({ result: z.number() }),
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
  console.error("usage: node echo_server.mjs stdio | http PORT");
  process.exit(2);
}

const repr = (v) => JSON.stringify(v);

function parsePort(s) {
  const port = Number(s);
  if (!Number.isInteger(port) || port < 0 || port > 65535) usage(`bad port ${repr(s)}`);
  return port;
}

function runStdio() {
  const handle = serveStdio(buildServer, { onerror: (error) => console.error("stdio:", error) });
  return () => handle.close();
}

function runHttp(port) {
  const handler = createMcpHandler(buildServer, { onerror: (error) => console.error("http:", error.message) });
  const nodeHandler = toNodeHandler(handler, { onerror: (error) => console.error("http adapter:", error) });
  const validateHost = localhostHostValidation(); // DNS rebinding protection
  const httpServer = createServer((req, res) => {
    if (!validateHost(req, res)) return;
    const path = new URL(req.url ?? "/", `http://${HOST}`).pathname;
    if (path !== "/mcp") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    nodeHandler(req, res).catch((error) => {
      console.error(`error handling ${req.method} /mcp:`, error);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  httpServer.on("error", (error) => {
    console.error(`failed to listen on ${HOST}:${port}: ${error.message}`);
    process.exit(1);
  });
  httpServer.listen(port, HOST, () => {
    console.log(`listening on http://${HOST}:${httpServer.address().port}/mcp`);
  });
  return async () => {
    await handler.close();
    httpServer.close();
  };
}

function main() {
  const [mode, ...rest] = process.argv.slice(2);
  let shutdown;
  if (mode === "stdio") {
    if (rest.length) usage("stdio takes no arguments");
    shutdown = runStdio();
  } else if (mode === "http") {
    if (rest.length !== 1) usage("http needs a PORT");
    shutdown = runHttp(parsePort(rest[0]));
  } else {
    usage(mode ? `unknown transport ${repr(mode)}` : undefined);
  }
  const stop = async () => {
    await Promise.resolve(shutdown()).catch(() => {});
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main();
