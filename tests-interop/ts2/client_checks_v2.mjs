#!/usr/bin/env node
// Interop checks at protocol revision 2026-07-28: the official MCP TypeScript SDK v2 Client
// (`@modelcontextprotocol/client`) against an MCP server, stateless era.
//
// Usage:
//   node client_checks_v2.mjs MODE stdio -- CMD [ARGS...]   spawn the server (StdioClientTransport)
//   node client_checks_v2.mjs MODE http URL                 Streamable HTTP (StreamableHTTPClientTransport)
//
// MODE is `2026-07-28` (pinned: `versionNegotiation: { mode: { pin } }`, no fallback) or `auto`
// (probe `server/discover`, fall back to `initialize` only on a legacy server). Either way the
// connection must end up on 2026-07-28: the server under test speaks it.
//
// The server is expected to expose the conformance fixtures (test_simple_text,
// test_error_handling, test_sampling, test_elicitation, test://static-text,
// test_prompt_with_arguments) plus an `echo` tool. Sampling and elicitation reach the client
// through `input_required` results that the SDK answers with the handlers registered below and
// retries with `inputResponses` + `requestState` (multi round-trip requests); the checks watch the
// wire to make sure that is how they arrived (never as server->client requests).
//
// Output convention as ../ts/client_checks.mjs: one `PASS name` / `FAIL name: reason` line per
// check, then `N passed, M failed` alone on the last line; exit code 0 when every check passed.

import { Client, ProtocolError } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const STATELESS_REVISION = "2026-07-28";
const SERVER_NAME = "mcpkit-reference";

// ---- fixed values shared with the reference server's fixtures (see ../ts/client_checks.mjs) ----
const SAMPLING_TEXT = "This is a test response from the client";
const SAMPLING_MODEL = "interop-model";
const ELICIT_CONTENT = { username: "interop", email: "interop@example.com" };

const SIMPLE_TEXT = "This is a simple text response for testing.";
const ERROR_TEXT = "This tool intentionally returns an error for testing";
const STATIC_TEXT = "This is the content of the static text resource.";
const PROMPT_ARGS_TEXT = "Prompt with arguments: arg1='hello', arg2='world'";
// From 2026-07-28 an unknown resource is Invalid params (-32602) with the uri in `data`.
const INVALID_PARAMS = -32602;

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

const texts = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text);

function singleText(result) {
  const content = result.content ?? [];
  expect(content.length === 1, `expected 1 content block, got ${content.length}: ${repr(content)}`);
  expect(content[0].type === "text", `expected a text block, got ${content[0].type}`);
  return content[0].text;
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
  if (err instanceof ProtocolError) return `MCP error ${err.code}: ${err.message}`;
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

/** State captured by the client-side handlers and the wire taps. */
class Recorder {
  constructor() {
    this.samplingRequests = [];
    this.elicitationRequests = [];
    this.sent = []; // every JSON-RPC request the SDK sent, in order
    this.inboundRequests = []; // server->client JSON-RPC requests (none expected on 2026-07-28)
  }

  /** The tools/call requests for `name` sent since index `from` of `sent`. */
  callsOf(name, from) {
    return this.sent.slice(from).filter((m) => m.method === "tools/call" && m.params?.name === name);
  }
}

/**
 * The multi round-trip shape of one tool call: a first request without input responses, then a
 * retry (fresh id) carrying `inputResponses` and the server's `requestState`.
 */
function expectInputRequiredRounds(calls, what) {
  expect(calls.length >= 2, `${what}: expected an input_required round (>= 2 tools/call requests), saw ${calls.length}`);
  expect(calls[0].params.inputResponses === undefined, `${what}: the first request already carried inputResponses`);
  const retry = calls[calls.length - 1];
  expect(
    retry.params.inputResponses && typeof retry.params.inputResponses === "object",
    `${what}: the retry carried no inputResponses: ${repr(retry.params)}`,
  );
  expect(typeof retry.params.requestState === "string", `${what}: the retry carried no requestState`);
  expect(new Set(calls.map((c) => c.id)).size === calls.length, `${what}: a retry reused a request id`);
  for (const c of calls) {
    const v = c.params?._meta?.["io.modelcontextprotocol/protocolVersion"];
    expect(v === STATELESS_REVISION, `${what}: request ${c.id} carried protocolVersion _meta ${repr(v)}`);
  }
}

async function runChecks(runner, client, rec) {
  const opts = { timeout: (DEFAULT_TIMEOUT + 5) * 1000 };

  await runner.check("era", async () => {
    const version = client.getNegotiatedProtocolVersion();
    expect(version === STATELESS_REVISION, `negotiated ${repr(version)}, expected ${repr(STATELESS_REVISION)}`);
    // "modern" is the TypeScript SDK v2's own word for the 2026-07-28 era (mcpkit says stateless).
    expect(client.getProtocolEra() === "modern", `era ${repr(client.getProtocolEra())}, expected "modern"`);
    const info = client.getServerVersion();
    expect(info?.name === SERVER_NAME, `serverInfo ${repr(info)}`);
    const discover = client.getDiscoverResult();
    expect(
      discover?.supportedVersions?.includes(STATELESS_REVISION),
      `server/discover supportedVersions ${repr(discover?.supportedVersions)}`,
    );
    expect(
      !rec.sent.some((m) => m.method === "initialize"),
      "the client sent initialize on a 2026-07-28 connection",
    );
  });

  // ---- tools ----
  await runner.check("tools_list", async () => {
    const result = await client.listTools({}, opts);
    const names = new Set(result.tools.map((t) => t.name));
    const want = ["echo", "test_simple_text", "test_error_handling", "test_sampling", "test_elicitation"];
    const missing = want.filter((n) => !names.has(n));
    expect(missing.length === 0, `missing tools ${repr(missing)}; got ${repr([...names].sort())}`);
  });

  await runner.check("tool_echo", async () => {
    const result = await client.callTool({ name: "echo", arguments: { message: "hi" } }, opts);
    expect(!result.isError, `isError set: ${repr(texts(result))}`);
    const text = singleText(result);
    expect(text === "hi", `expected 'hi', got ${repr(text)}`);
  });

  await runner.check("tool_simple_text", async () => {
    const result = await client.callTool({ name: "test_simple_text" }, opts);
    expect(!result.isError, `isError set: ${repr(texts(result))}`);
    const text = singleText(result);
    expect(text === SIMPLE_TEXT, `expected ${repr(SIMPLE_TEXT)}, got ${repr(text)}`);
  });

  await runner.check("tool_error_handling", async () => {
    const result = await client.callTool({ name: "test_error_handling" }, opts);
    expect(result.isError === true, `isError is ${repr(result.isError)}, expected true`);
    const got = texts(result);
    expect(deepEqual(got, [ERROR_TEXT]), `expected text ${repr(ERROR_TEXT)}, got ${repr(got)}`);
  });

  await runner.check("tool_sampling_input_required", async () => {
    const before = rec.samplingRequests.length;
    const sentStart = rec.sent.length;
    const result = await client.callTool({ name: "test_sampling", arguments: { prompt: "What is 2+2?" } }, opts);
    expect(!result.isError, `isError set: ${repr(texts(result))}`);
    expect(rec.samplingRequests.length > before, "the sampling handler was never called");
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
    expectInputRequiredRounds(rec.callsOf("test_sampling", sentStart), "test_sampling");
  });

  await runner.check("tool_elicitation_input_required", async () => {
    const before = rec.elicitationRequests.length;
    const sentStart = rec.sent.length;
    const result = await client.callTool(
      { name: "test_elicitation", arguments: { message: "Please provide your info" } },
      opts,
    );
    expect(!result.isError, `isError set: ${repr(texts(result))}`);
    expect(rec.elicitationRequests.length > before, "the elicitation handler was never called");
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
    expectInputRequiredRounds(rec.callsOf("test_elicitation", sentStart), "test_elicitation");
  });

  // ---- resources ----
  await runner.check("resource_read_static_text", async () => {
    const result = await client.readResource({ uri: "test://static-text" }, opts);
    expect(result.contents.length === 1, `expected 1 content, got ${result.contents.length}`);
    const c = result.contents[0];
    expect(typeof c.text === "string", `expected text contents, got ${repr(Object.keys(c))}`);
    expect(c.uri === "test://static-text", `uri ${repr(c.uri)}`);
    expect(c.mimeType === "text/plain", `mimeType ${repr(c.mimeType)} != 'text/plain'`);
    expect(c.text === STATIC_TEXT, `expected ${repr(STATIC_TEXT)}, got ${repr(c.text)}`);
  });

  await runner.check("resource_read_unknown", async () => {
    let result;
    try {
      result = await client.readResource({ uri: "test://does-not-exist" }, opts);
    } catch (err) {
      expect(err instanceof ProtocolError, `expected a protocol error, got ${describeError(err)}`);
      expect(err.code === INVALID_PARAMS, `error code ${err.code} (${err.message}), expected ${INVALID_PARAMS}`);
      return;
    }
    throw new CheckFailed(`expected an error, got a result: ${repr(result)}`);
  });

  // ---- prompts ----
  await runner.check("prompt_with_arguments", async () => {
    const result = await client.getPrompt(
      { name: "test_prompt_with_arguments", arguments: { arg1: "hello", arg2: "world" } },
      opts,
    );
    expect(result.messages.length === 1, `expected 1 message, got ${result.messages.length}`);
    const m = result.messages[0];
    expect(m.role === "user", `role ${repr(m.role)}`);
    expect(m.content?.type === "text", `expected text content, got ${repr(m.content?.type)}`);
    expect(m.content.text === PROMPT_ARGS_TEXT, `expected ${repr(PROMPT_ARGS_TEXT)}, got ${repr(m.content.text)}`);
  });

  // ---- concurrency ----
  await runner.check(
    "concurrent_echo_20",
    async () => {
      const messages = Array.from({ length: 20 }, (_, i) => `concurrent-${i}`);
      const results = await Promise.allSettled(
        messages.map((m) => client.callTool({ name: "echo", arguments: { message: m } }, { timeout: 35_000 })),
      );
      const bad = [];
      results.forEach((r, i) => {
        const m = messages[i];
        if (r.status === "rejected") bad.push(`${m}: ${describeError(r.reason)}`);
        else if (r.value.isError || !deepEqual(texts(r.value), [m])) bad.push(`${m}: got ${repr(texts(r.value))}`);
      });
      expect(bad.length === 0, `${bad.length}/${messages.length} wrong: ` + bad.slice(0, 3).join("; "));
    },
    30.0,
  );

  await runner.check("no_server_to_client_requests", async () => {
    const methods = rec.inboundRequests.map((m) => m.method);
    expect(methods.length === 0, `the server sent requests on a 2026-07-28 connection: ${repr(methods)}`);
  });
}

function usage(msg) {
  if (msg) console.error(`error: ${msg}`);
  console.error(
    "usage: node client_checks_v2.mjs MODE stdio -- CMD [ARGS...]\n" +
      "       node client_checks_v2.mjs MODE http URL\n" +
      `MODE: ${STATELESS_REVISION} (pinned) | auto`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const [negotiation, transport, ...rest] = argv;
  if (negotiation !== STATELESS_REVISION && negotiation !== "auto") usage(`unknown MODE ${repr(negotiation)}`);
  const mode = negotiation === "auto" ? "auto" : { pin: STATELESS_REVISION };
  if (transport === "stdio") {
    const cmd = rest[0] === "--" ? rest.slice(1) : rest;
    if (cmd.length === 0) usage("stdio needs a server command: stdio -- CMD ARGS...");
    return { mode, transport, command: cmd };
  }
  if (transport === "http") {
    if (rest.length !== 1) usage("http needs exactly one URL");
    let url;
    try {
      url = new URL(rest[0]);
    } catch {
      usage(`not a URL: ${rest[0]}`);
    }
    return { mode, transport, url };
  }
  usage(transport ? `unknown transport ${repr(transport)}` : undefined);
}

function makeTransport(args) {
  if (args.transport === "stdio") {
    return new StdioClientTransport({
      command: args.command[0],
      args: args.command.slice(1),
      env: { ...process.env },
      stderr: "inherit",
    });
  }
  return new StreamableHTTPClientTransport(args.url);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const runner = new Runner();
  const rec = new Recorder();

  const client = new Client(
    { name: "mcpkit-interop-ts2", version: "1.0.0" },
    {
      capabilities: { sampling: {}, elicitation: {} },
      versionNegotiation: { mode: args.mode, probe: { timeoutMs: 20_000 } },
    },
  );
  client.setRequestHandler("sampling/createMessage", async (request) => {
    rec.samplingRequests.push(request.params);
    return {
      role: "assistant",
      content: { type: "text", text: SAMPLING_TEXT },
      model: SAMPLING_MODEL,
      stopReason: "endTurn",
    };
  });
  client.setRequestHandler("elicitation/create", async (request) => {
    rec.elicitationRequests.push(request.params);
    return { action: "accept", content: { ...ELICIT_CONTENT } };
  });

  let closing = false;
  let closedUnexpectedly = false;
  const transportErrors = [];
  client.onclose = () => {
    if (!closing) closedUnexpectedly = true;
  };
  client.onerror = (err) => {
    if (closing) return;
    transportErrors.push(describeError(err));
    console.error(`transport error: ${describeError(err)}`);
  };

  const transport = makeTransport(args);
  try {
    // Watch the wire under the SDK: every outgoing request, and any server->client request.
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if (message?.method !== undefined && message.id !== undefined) rec.sent.push(structuredClone(message));
      return send(message, options);
    };
    const connect = async () => {
      await client.connect(transport, { timeout: 25_000 });
      const onmessage = transport.onmessage;
      transport.onmessage = (message, extra) => {
        if (message?.method !== undefined && message.id !== undefined) rec.inboundRequests.push(message);
        return onmessage?.call(transport, message, extra);
      };
    };
    const connected = await runner.check("connect", connect, 25.0);
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
