#!/usr/bin/env node
// Interop checks: the official MCP TypeScript SDK (Client) against an MCP server.
//
// Usage (each may start with `--prefix ref_`: tool and prompt names prefixed, URIs unchanged):
//   node client_checks.mjs stdio -- CMD [ARGS...]   spawn the server (StdioClientTransport)
//   node client_checks.mjs http URL                 Streamable HTTP (StreamableHTTPClientTransport)
//   node client_checks.mjs sse URL                  legacy HTTP+SSE (SSEClientTransport), URL of GET /sse
//
// The server is expected to expose the conformance "everything" fixtures (test_simple_text,
// test_sampling, test://static-text, test_prompt_with_arguments, ...) plus an `echo` tool.
// Same checks, fixture expectations and client answers as ../python/client_checks.py.
//
// Prints one line per check, `PASS name` or `FAIL name: reason`, then `N passed, M failed`
// alone on the last line. Exit code 0 when every check passed, 1 otherwise.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";

// ---- fixed values shared with the reference server's fixtures (see the fixture spec) ----
const SAMPLING_TEXT = "This is a test response from the client";
const SAMPLING_MODEL = "interop-model";
const ELICIT_CONTENT = { username: "interop", email: "interop@example.com" };

const SIMPLE_TEXT = "This is a simple text response for testing.";
const ERROR_TEXT = "This tool intentionally returns an error for testing";
const STATIC_TEXT = "This is the content of the static text resource.";
const TEMPLATE_TEXT = '{"id":"123","templateTest":true,"data":"Data for ID: 123"}';
const PROMPT_ARGS_TEXT = "Prompt with arguments: arg1='hello', arg2='world'";
const LOG_MESSAGES = ["Tool execution started", "Tool processing data", "Tool execution completed"];
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const RESOURCE_NOT_FOUND = -32002;

// Prepended to every tool and prompt name (`--prefix`): the same server behind a gateway that
// serves it as NAME_<tool>. Resource URIs are not prefixed.
let P = "";

const DEFAULT_TIMEOUT = 15.0; // seconds, per check

class CheckFailed extends Error {}

function expect(cond, reason) {
  if (!cond) throw new CheckFailed(reason);
}

const repr = (v) => {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
};

function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
}

/** State captured by the client-side handlers. */
class Recorder {
  constructor() {
    this.samplingRequests = [];
    this.elicitationRequests = [];
    this.logMessages = [];
    this.wire = []; // incoming progress notifications and responses, in arrival order
    this.sentCalls = []; // every tools/call request the SDK sent
  }
}

const texts = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text);

function singleText(result) {
  const content = result.content ?? [];
  expect(content.length === 1, `expected 1 content block, got ${content.length}: ${repr(content)}`);
  expect(content[0].type === "text", `expected a text block, got ${content[0].type}`);
  return content[0].text;
}

function decodePng(data, what) {
  expect(typeof data === "string", `${what} is not a string`);
  const compact = data.replace(/\s+/g, "");
  expect(
    compact.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(compact),
    `${what} is not valid base64`,
  );
  const raw = Buffer.from(compact, "base64");
  expect(
    raw.subarray(0, 8).equals(PNG_SIGNATURE),
    `${what} does not decode to a PNG (first bytes ${raw.subarray(0, 8).toString("hex")})`,
  );
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(pred, timeoutSecs = 2.0) {
  const deadline = Date.now() + timeoutSecs * 1000;
  while (!pred()) {
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
  return true;
}

class TimeoutError extends Error {}

function withTimeout(promise, secs) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`timed out after ${secs.toFixed(0)}s`)), secs * 1000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function describeError(err) {
  if (err instanceof McpError) {
    // McpError.message is already "MCP error <code>: <message>".
    const msg = String(err.message ?? "");
    return msg.startsWith("MCP error") ? msg : `MCP error ${err.code}: ${msg}`;
  }
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

class Runner {
  constructor() {
    this.passed = 0;
    this.failed = 0;
  }

  report(name, ok, reason = "") {
    if (ok) {
      this.passed += 1;
      console.log(`PASS ${name}`);
    } else {
      this.failed += 1;
      reason = String(reason).split(/\s+/).filter(Boolean).join(" ") || "failed";
      console.log(`FAIL ${name}: ${reason}`);
    }
  }

  async check(name, fn, timeout = DEFAULT_TIMEOUT) {
    try {
      // The SDK's own request timeout is set a little above the check's, so the check's wins.
      await withTimeout(Promise.resolve().then(fn), timeout);
    } catch (err) {
      if (err instanceof TimeoutError || err instanceof CheckFailed) {
        this.report(name, false, err.message);
      } else {
        this.report(name, false, describeError(err));
      }
      return false;
    }
    this.report(name, true);
    return true;
  }
}

async function runChecks(runner, client, rec) {
  const opts = { timeout: (DEFAULT_TIMEOUT + 5) * 1000 };

  // ---- tools ----
  await runner.check("tools_list", async () => {
    const result = await client.listTools({}, opts);
    const names = new Set(result.tools.map((t) => t.name));
    const missing = [P + "echo", P + "test_simple_text"].filter((n) => !names.has(n));
    expect(missing.length === 0, `missing tools ${repr(missing)}; got ${repr([...names].sort())}`);
  });

  await runner.check("tool_echo", async () => {
    const result = await client.callTool({ name: P + "echo", arguments: { message: "hi" } }, CallToolResultSchema, opts);
    expect(!result.isError, `isError set: ${repr(texts(result))}`);
    const text = singleText(result);
    expect(text === "hi", `expected 'hi', got ${repr(text)}`);
  });

  await runner.check("tool_simple_text", async () => {
    const result = await client.callTool({ name: P + "test_simple_text" }, CallToolResultSchema, opts);
    expect(!result.isError, `isError set: ${repr(texts(result))}`);
    const text = singleText(result);
    expect(text === SIMPLE_TEXT, `expected ${repr(SIMPLE_TEXT)}, got ${repr(text)}`);
  });

  await runner.check("tool_image_content", async () => {
    const result = await client.callTool({ name: P + "test_image_content" }, CallToolResultSchema, opts);
    expect(!result.isError, `isError set: ${repr(texts(result))}`);
    expect(result.content.length === 1, `expected 1 content block, got ${result.content.length}`);
    const block = result.content[0];
    expect(block.type === "image", `expected an image block, got ${block.type}`);
    expect(block.mimeType === "image/png", `mimeType ${repr(block.mimeType)} != 'image/png'`);
    decodePng(block.data, "image data");
  });

  await runner.check("tool_error_handling", async () => {
    const result = await client.callTool({ name: P + "test_error_handling" }, CallToolResultSchema, opts);
    expect(result.isError === true, `isError is ${repr(result.isError)}, expected true`);
    const got = texts(result);
    expect(deepEqual(got, [ERROR_TEXT]), `expected text ${repr(ERROR_TEXT)}, got ${repr(got)}`);
  });

  await runner.check("tool_sampling", async () => {
    const before = rec.samplingRequests.length;
    const result = await client.callTool(
      { name: P + "test_sampling", arguments: { prompt: "What is 2+2?" } },
      CallToolResultSchema,
      opts,
    );
    expect(!result.isError, `isError set: ${repr(texts(result))}`);
    expect(rec.samplingRequests.length > before, "sampling callback was never called");
    const req = rec.samplingRequests[rec.samplingRequests.length - 1];
    const seen = [];
    for (const m of req.messages ?? []) {
      if (m.role !== "user") continue;
      const blocks = Array.isArray(m.content) ? m.content : [m.content];
      for (const b of blocks) if (b && b.type === "text") seen.push(b.text);
    }
    expect(seen.includes("What is 2+2?"), `sampling request did not carry the prompt as user text: ${repr(seen)}`);
    expect(req.maxTokens === 100, `sampling maxTokens ${repr(req.maxTokens)}, expected 100`);
    const text = singleText(result);
    const want = `LLM response: ${SAMPLING_TEXT}`;
    expect(text === want, `expected ${repr(want)}, got ${repr(text)}`);
  });

  await runner.check("tool_elicitation", async () => {
    const before = rec.elicitationRequests.length;
    const result = await client.callTool(
      { name: P + "test_elicitation", arguments: { message: "Please provide your info" } },
      CallToolResultSchema,
      opts,
    );
    expect(!result.isError, `isError set: ${repr(texts(result))}`);
    expect(rec.elicitationRequests.length > before, "elicitation callback was never called");
    const req = rec.elicitationRequests[rec.elicitationRequests.length - 1];
    expect(req.message === "Please provide your info", `elicitation message ${repr(req.message)}`);
    const props = req.requestedSchema?.properties ?? {};
    expect("username" in props && "email" in props, `requestedSchema lacks username/email: ${repr(req.requestedSchema)}`);
    const text = singleText(result);
    const prefix = "User response: action=accept, content=";
    expect(text.startsWith(prefix), `expected text starting ${repr(prefix)}, got ${repr(text)}`);
    let content;
    try {
      content = JSON.parse(text.slice(prefix.length));
    } catch {
      throw new CheckFailed(`content after prefix is not JSON: ${repr(text)}`);
    }
    expect(deepEqual(content, ELICIT_CONTENT), `echoed content ${repr(content)} != ${repr(ELICIT_CONTENT)}`);
  });

  await runner.check("tool_progress", async () => {
    const updates = [];
    const wireStart = rec.wire.length;
    const sentStart = rec.sentCalls.length;
    const result = await client.callTool({ name: P + "test_tool_with_progress" }, CallToolResultSchema, {
      ...opts,
      onprogress: (p) => updates.push(p),
    });
    expect(!result.isError, `isError set: ${repr(texts(result))}`);
    await waitUntil(() => updates.length >= 3, 1.0);
    // What the SDK's onprogress saw. TS SDK 1.x dispatches notifications a microtask later than
    // responses, so a final progress notification that arrives in the same read as the result is
    // dropped ("Received a progress notification for an unknown token", typescript-sdk#2580).
    // The wire order is checked separately, so the server is judged by what it sent.
    const sent = rec.sentCalls.slice(sentStart).find((m) => m.params?.name === P + "test_tool_with_progress");
    const token = sent?.params?._meta?.progressToken;
    expect(token !== undefined, "the SDK sent no progressToken");
    const events = rec.wire.slice(wireStart);
    const wire = events.filter((e) => e.progress?.progressToken === token).map((e) => e.progress);
    const responseAt = events.findIndex((e) => e.response !== undefined && e.response === sent.id);
    const lastProgressAt = events.findLastIndex((e) => e.progress?.progressToken === token);
    expect(responseAt !== -1, "the tool result was not seen on the wire");
    expect(lastProgressAt < responseAt, "a progress notification arrived after the tool result");
    const values = wire.map((u) => u.progress);
    const totals = wire.map((u) => u.total);
    expect(deepEqual(values, [0, 50, 100]), `progress values ${repr(values)}, expected [0, 50, 100]`);
    expect(totals.every((t) => t === 100), `progress totals ${repr(totals)}, expected all 100`);
    const seen = updates.map((u) => u.progress);
    expect(
      deepEqual(seen, values.slice(0, seen.length)) && seen.length >= 2,
      `onprogress saw ${repr(seen)}, the wire carried ${repr(values)}`,
    );
    if (seen.length < values.length) {
      console.error(
        `note: tool_progress: the SDK dropped ${values.length - seen.length} progress notification(s) ` +
          "that arrived with the result (typescript-sdk#2580); the wire order was correct",
      );
    }
  });

  await runner.check("logging_set_level", async () => {
    await client.setLoggingLevel("debug", opts);
  });

  await runner.check("tool_logging", async () => {
    const start = rec.logMessages.length;
    const result = await client.callTool({ name: P + "test_tool_with_logging" }, CallToolResultSchema, opts);
    expect(!result.isError, `isError set: ${repr(texts(result))}`);
    const got = () =>
      rec.logMessages.slice(start).filter((m) => m.level === "info" && LOG_MESSAGES.includes(m.data)).map((m) => m.data);
    await waitUntil(() => got().length >= 3, 1.0);
    expect(
      deepEqual(got(), LOG_MESSAGES),
      `info log messages ${repr(got())}, expected ${repr(LOG_MESSAGES)} ` +
        `(all received: ${repr(rec.logMessages.slice(start).map((m) => [m.level, m.data]))})`,
    );
  });

  // ---- resources ----
  await runner.check("resources_list", async () => {
    const result = await client.listResources({}, opts);
    const uris = result.resources.map((r) => String(r.uri));
    expect(uris.includes("test://static-text"), `test://static-text not listed; got ${repr(uris)}`);
  });

  await runner.check("resource_read_static_text", async () => {
    const result = await client.readResource({ uri: "test://static-text" }, opts);
    expect(result.contents.length === 1, `expected 1 content, got ${result.contents.length}`);
    const c = result.contents[0];
    expect(typeof c.text === "string", `expected text contents, got ${repr(Object.keys(c))}`);
    expect(c.uri === "test://static-text", `uri ${repr(c.uri)}`);
    expect(c.mimeType === "text/plain", `mimeType ${repr(c.mimeType)} != 'text/plain'`);
    expect(c.text === STATIC_TEXT, `expected ${repr(STATIC_TEXT)}, got ${repr(c.text)}`);
  });

  await runner.check("resource_read_static_binary", async () => {
    const result = await client.readResource({ uri: "test://static-binary" }, opts);
    expect(result.contents.length === 1, `expected 1 content, got ${result.contents.length}`);
    const c = result.contents[0];
    expect(typeof c.blob === "string", `expected blob contents, got ${repr(Object.keys(c))}`);
    expect(c.mimeType === "image/png", `mimeType ${repr(c.mimeType)} != 'image/png'`);
    decodePng(c.blob, "blob");
  });

  await runner.check("resource_read_template", async () => {
    const result = await client.readResource({ uri: "test://template/123/data" }, opts);
    expect(result.contents.length === 1, `expected 1 content, got ${result.contents.length}`);
    const c = result.contents[0];
    expect(typeof c.text === "string", `expected text contents, got ${repr(Object.keys(c))}`);
    expect(c.uri === "test://template/123/data", `uri ${repr(c.uri)}`);
    expect(c.mimeType === "application/json", `mimeType ${repr(c.mimeType)} != 'application/json'`);
    if (c.text !== TEMPLATE_TEXT) {
      let same = false;
      try {
        same = deepEqual(JSON.parse(c.text), JSON.parse(TEMPLATE_TEXT));
      } catch {
        same = false;
      }
      const note = same ? " (same JSON value, different text/key order)" : "";
      throw new CheckFailed(`expected ${repr(TEMPLATE_TEXT)}, got ${repr(c.text)}${note}`);
    }
  });

  await runner.check("resource_read_unknown", async () => {
    let result;
    try {
      result = await client.readResource({ uri: "test://does-not-exist" }, opts);
    } catch (err) {
      if (err instanceof McpError) {
        expect(
          err.code === RESOURCE_NOT_FOUND,
          `error code ${err.code} (${err.message}), expected ${RESOURCE_NOT_FOUND}`,
        );
        return;
      }
      throw err;
    }
    throw new CheckFailed(`expected an error, got a result: ${repr(result)}`);
  });

  // ---- prompts ----
  await runner.check("prompts_list", async () => {
    const result = await client.listPrompts({}, opts);
    const names = new Set(result.prompts.map((p) => p.name));
    const missing = [P + "test_simple_prompt", P + "test_prompt_with_arguments"].filter((n) => !names.has(n));
    expect(missing.length === 0, `missing prompts ${repr(missing)}; got ${repr([...names].sort())}`);
  });

  await runner.check("prompt_with_arguments", async () => {
    const result = await client.getPrompt(
      { name: P + "test_prompt_with_arguments", arguments: { arg1: "hello", arg2: "world" } },
      opts,
    );
    expect(result.messages.length === 1, `expected 1 message, got ${result.messages.length}`);
    const m = result.messages[0];
    expect(m.role === "user", `role ${repr(m.role)}`);
    expect(m.content?.type === "text", `expected text content, got ${repr(m.content?.type)}`);
    expect(m.content.text === PROMPT_ARGS_TEXT, `expected ${repr(PROMPT_ARGS_TEXT)}, got ${repr(m.content.text)}`);
  });

  // ---- completion, ping ----
  await runner.check("completion_complete", async () => {
    const result = await client.complete(
      { ref: { type: "ref/prompt", name: P + "test_prompt_with_arguments" }, argument: { name: "arg1", value: "te" } },
      opts,
    );
    expect(result.completion != null, "no completion object");
    expect(Array.isArray(result.completion.values), `completion.values is ${repr(result.completion.values)}`);
  });

  await runner.check("ping", async () => {
    await client.ping(opts);
  });

  // ---- concurrency ----
  await runner.check(
    "concurrent_echo_50",
    async () => {
      const n = 50;
      const messages = Array.from({ length: n }, (_, i) => `concurrent-${i}-${"x".repeat(i % 7)}`);
      const results = await Promise.allSettled(
        messages.map((m) =>
          client.callTool({ name: P + "echo", arguments: { message: m } }, CallToolResultSchema, { timeout: 65_000 }),
        ),
      );
      const bad = [];
      results.forEach((r, i) => {
        const m = messages[i];
        if (r.status === "rejected") bad.push(`${m}: ${describeError(r.reason)}`);
        else if (r.value.isError || !deepEqual(texts(r.value), [m])) bad.push(`${m}: got ${repr(texts(r.value))}`);
      });
      expect(bad.length === 0, `${bad.length}/${n} wrong: ` + bad.slice(0, 3).join("; "));
    },
    60.0,
  );
}

function usage(msg) {
  if (msg) console.error(`error: ${msg}`);
  console.error(
    "usage: node client_checks.mjs stdio -- CMD [ARGS...]\n" +
      "       node client_checks.mjs http URL\n" +
      "       node client_checks.mjs sse URL",
  );
  process.exit(2);
}

function parseArgs(argv) {
  if (argv[0] === "--prefix") {
    if (argv.length < 2) usage("--prefix needs a value");
    P = argv[1];
    argv = argv.slice(2);
  }
  const [mode, ...rest] = argv;
  if (mode === "stdio") {
    const cmd = rest[0] === "--" ? rest.slice(1) : rest;
    if (cmd.length === 0) usage("stdio needs a server command: stdio -- CMD ARGS...");
    return { mode, command: cmd };
  }
  if (mode === "http" || mode === "sse") {
    if (rest.length !== 1) usage(`${mode} needs exactly one URL`);
    let url;
    try {
      url = new URL(rest[0]);
    } catch {
      usage(`not a URL: ${rest[0]}`);
    }
    return { mode, url };
  }
  usage(mode ? `unknown transport ${mode}` : undefined);
}

function makeTransport(args) {
  switch (args.mode) {
    case "stdio":
      return new StdioClientTransport({
        command: args.command[0],
        args: args.command.slice(1),
        env: { ...process.env },
        stderr: "inherit",
      });
    case "http":
      return new StreamableHTTPClientTransport(args.url);
    case "sse":
      return new SSEClientTransport(args.url);
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const runner = new Runner();
  const rec = new Recorder();

  const client = new Client(
    { name: "mcpkit-interop-ts", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    rec.samplingRequests.push(request.params);
    return {
      role: "assistant",
      content: { type: "text", text: SAMPLING_TEXT },
      model: SAMPLING_MODEL,
      stopReason: "endTurn",
    };
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    rec.elicitationRequests.push(request.params);
    return { action: "accept", content: { ...ELICIT_CONTENT } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    rec.logMessages.push(notification.params);
  });

  let closing = false;
  let closedUnexpectedly = false;
  const transportErrors = [];
  client.onclose = () => {
    if (!closing) closedUnexpectedly = true;
  };
  client.onerror = (err) => {
    if (closing) return; // aborts of in-flight streams while shutting down are expected
    transportErrors.push(describeError(err));
    console.error(`transport error: ${describeError(err)}`);
  };

  const transport = makeTransport(args);
  try {
    // Observe the wire under the SDK: outgoing tools/call (for progress tokens) and incoming
    // progress notifications, recorded synchronously in arrival order.
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if (message?.method === "tools/call") rec.sentCalls.push(message);
      return send(message, options);
    };
    const connect = async () => {
      await client.connect(transport, { timeout: 25_000 });
      const onmessage = transport.onmessage;
      transport.onmessage = (message, extra) => {
        if (message?.method === "notifications/progress" && message.params) rec.wire.push({ progress: message.params });
        else if (message && message.id !== undefined && message.method === undefined) rec.wire.push({ response: message.id });
        return onmessage?.call(transport, message, extra);
      };
    };
    const connected = await runner.check("initialize", connect, 20.0);
    if (connected) await runChecks(runner, client, rec);
  } catch (err) {
    runner.report("session", false, `transport error: ${describeError(err)}`);
  }
  if (closedUnexpectedly) {
    const why = transportErrors.length ? ` (last error: ${transportErrors[transportErrors.length - 1]})` : "";
    runner.report("session", false, `the connection closed before the checks finished${why}`);
  }

  closing = true;
  try {
    if (args.mode === "http" && transport.sessionId) {
      await withTimeout(transport.terminateSession(), 5.0).catch(() => {});
    }
    await withTimeout(client.close(), 5.0);
  } catch (err) {
    console.error(`close: ${describeError(err)}`);
  }
  console.log(`${runner.passed} passed, ${runner.failed} failed`);
  process.exit(runner.failed === 0 ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  console.log("0 passed, 1 failed");
  process.exit(1);
});
