#!/usr/bin/env node
// `echo` MCP server on the official TypeScript SDK (McpServer), for mcpkit's comparison harness.
//
// Usage:
//   node echo_server.mjs stdio                  stdio transport
//   node echo_server.mjs http PORT              Streamable HTTP at http://127.0.0.1:PORT/mcp, one
//                                               transport per session (the SDK's stateful pattern)
//   node echo_server.mjs http PORT --stateless  no sessions, JSON replies: a fresh server and
//                                               transport per POST (the SDK's stateless pattern)
// HTTP modes print `listening on http://127.0.0.1:PORT/mcp` on stdout once they accept connections.
//
// Tool: echo(message: string) -> one text content block with the message.

import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";

const HOST = "127.0.0.1";

function buildServer() {
  const server = new McpServer({ name: "ts-echo-server", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echoes the message back", inputSchema: { message: z.string() } },
    async ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );
  return server;
}

function jsonRpcError(res, status, code, message) {
  res.status(status).json({ jsonrpc: "2.0", error: { code, message }, id: null });
}

function listen(app, port) {
  const httpServer = app.listen(port, HOST, (error) => {
    if (error) {
      console.error(`failed to listen on ${HOST}:${port}: ${error.message}`);
      process.exit(1);
    }
    console.log(`listening on http://${HOST}:${httpServer.address().port}/mcp`);
  });
  // Same treatment as the other servers: no Nagle delay on replies.
  httpServer.on("connection", (socket) => socket.setNoDelay(true));
}

function runStateful(port) {
  const app = createMcpExpressApp({ host: HOST });
  const transports = new Map();
  app.post("/mcp", async (req, res) => {
    try {
      const sessionId = req.headers["mcp-session-id"];
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (sessionId && !transport) return jsonRpcError(res, 404, -32001, "Session not found");
      if (!transport) {
        if (!isInitializeRequest(req.body)) return jsonRpcError(res, 400, -32000, "no session id, not initialize");
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => transports.set(id, transport),
        });
        transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
        await buildServer().connect(transport);
      }
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      console.error("error handling POST /mcp:", error);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal server error");
    }
  });
  const sessionRequest = async (req, res) => {
    const transport = transports.get(req.headers["mcp-session-id"]);
    if (!transport) return jsonRpcError(res, 404, -32001, "Session not found");
    await transport.handleRequest(req, res);
  };
  app.get("/mcp", sessionRequest);
  app.delete("/mcp", sessionRequest);
  listen(app, port);
}

function runStateless(port) {
  const app = createMcpExpressApp({ host: HOST });
  app.post("/mcp", async (req, res) => {
    try {
      const server = buildServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => {
        transport.close();
        server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      console.error("error handling POST /mcp:", error);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal server error");
    }
  });
  const notAllowed = (_req, res) => jsonRpcError(res, 405, -32000, "Method not allowed");
  app.get("/mcp", notAllowed);
  app.delete("/mcp", notAllowed);
  listen(app, port);
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === "stdio" && rest.length === 0) {
  await buildServer().connect(new StdioServerTransport());
} else if (mode === "http" && (rest.length === 1 || (rest.length === 2 && rest[1] === "--stateless"))) {
  const port = Number(rest[0]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`bad port ${JSON.stringify(rest[0])}`);
    process.exit(2);
  }
  (rest[1] ? runStateless : runStateful)(port);
  const stop = () => process.exit(0);
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
} else {
  console.error("usage: node echo_server.mjs stdio | http PORT [--stateless]");
  process.exit(2);
}
