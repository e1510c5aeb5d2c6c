#!/usr/bin/env python3
"""Interop checks: the official MCP Python SDK (ClientSession) against an MCP server.

Usage (each may start with `--prefix ref_`: tool and prompt names prefixed, URIs unchanged):
    client_checks.py stdio -- CMD [ARGS...]   spawn the server with the SDK's stdio_client
    client_checks.py http URL                 connect with the SDK's streamable_http_client
    client_checks.py sse URL                  legacy HTTP+SSE with the SDK's sse_client (URL of GET /sse)

The server is expected to expose the conformance "everything" fixtures (test_simple_text,
test_sampling, test://static-text, test_prompt_with_arguments, ...) plus an `echo` tool.

Prints one line per check, `PASS name` or `FAIL name: reason`, then `N passed, M failed`
alone on the last line. Exit code 0 when every check passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import json
import sys
import time
import warnings
from contextlib import AsyncExitStack
from typing import Any, Awaitable, Callable

import anyio

from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
import mcp.types as types

# The SDK marks 2025-era APIs (logging/setLevel, ...) deprecated; they are what we test here.
warnings.simplefilter("ignore")

# ---- fixed values shared with the reference server's fixtures (see the fixture spec) ----
SAMPLING_TEXT = "This is a test response from the client"
SAMPLING_MODEL = "interop-model"
ELICIT_CONTENT = {"username": "interop", "email": "interop@example.com"}

SIMPLE_TEXT = "This is a simple text response for testing."
ERROR_TEXT = "This tool intentionally returns an error for testing"
STATIC_TEXT = "This is the content of the static text resource."
TEMPLATE_TEXT = '{"id":"123","templateTest":true,"data":"Data for ID: 123"}'
PROMPT_ARGS_TEXT = "Prompt with arguments: arg1='hello', arg2='world'"
LOG_MESSAGES = ["Tool execution started", "Tool processing data", "Tool execution completed"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RESOURCE_NOT_FOUND = -32002

DEFAULT_TIMEOUT = 15.0

# Prepended to every tool and prompt name (`--prefix`): the same server behind a gateway that
# serves it as NAME_<tool>. Resource URIs are not prefixed.
P = ""


class CheckFailed(Exception):
    pass


def expect(cond: bool, reason: str) -> None:
    if not cond:
        raise CheckFailed(reason)


class Recorder:
    """State captured by the client-side callbacks."""

    def __init__(self) -> None:
        self.sampling_requests: list[types.CreateMessageRequestParams] = []
        self.elicitation_requests: list[Any] = []
        self.log_messages: list[types.LoggingMessageNotificationParams] = []

    async def sampling(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.sampling_requests.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=SAMPLING_TEXT),
            model=SAMPLING_MODEL,
            stop_reason="endTurn",
        )

    async def elicitation(self, context: Any, params: Any) -> types.ElicitResult:
        self.elicitation_requests.append(params)
        return types.ElicitResult(action="accept", content=dict(ELICIT_CONTENT))

    async def logging(self, params: types.LoggingMessageNotificationParams) -> None:
        self.log_messages.append(params)


def texts(result: types.CallToolResult) -> list[str]:
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


def single_text(result: types.CallToolResult) -> str:
    expect(len(result.content) == 1, f"expected 1 content block, got {len(result.content)}: {result.content!r}")
    block = result.content[0]
    expect(isinstance(block, types.TextContent), f"expected a text block, got {type(block).__name__}")
    return block.text


def decode_png(data: str, what: str) -> None:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise CheckFailed(f"{what} is not valid base64: {exc}") from exc
    expect(raw.startswith(PNG_SIGNATURE), f"{what} does not decode to a PNG (first bytes {raw[:8]!r})")


async def wait_until(pred: Callable[[], bool], timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() >= deadline:
            return False
        await anyio.sleep(0.02)
    return True


class Runner:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def report(self, name: str, ok: bool, reason: str = "") -> None:
        if ok:
            self.passed += 1
            print(f"PASS {name}", flush=True)
        else:
            self.failed += 1
            reason = " ".join(reason.split()) or "failed"
            print(f"FAIL {name}: {reason}", flush=True)

    async def check(self, name: str, fn: Callable[[], Awaitable[None]], timeout: float = DEFAULT_TIMEOUT) -> bool:
        try:
            with anyio.fail_after(timeout):
                await fn()
        except TimeoutError:
            self.report(name, False, f"timed out after {timeout:.0f}s")
            return False
        except CheckFailed as exc:
            self.report(name, False, str(exc))
            return False
        except MCPError as exc:
            self.report(name, False, f"MCP error {exc.code}: {exc.message}")
            return False
        except Exception as exc:  # noqa: BLE001 - one check must never abort the others
            self.report(name, False, f"{type(exc).__name__}: {exc}")
            return False
        self.report(name, True)
        return True


async def run_checks(runner: Runner, session: ClientSession, rec: Recorder) -> None:
    # ---- tools ----
    async def tools_list() -> None:
        result = await session.list_tools()
        names = {t.name for t in result.tools}
        missing = [n for n in (P + "echo", P + "test_simple_text") if n not in names]
        expect(not missing, f"missing tools {missing}; got {sorted(names)}")

    await runner.check("tools_list", tools_list)

    async def echo() -> None:
        result = await session.call_tool(P + "echo", {"message": "hi"})
        expect(not result.is_error, f"isError set: {texts(result)}")
        text = single_text(result)
        expect(text == "hi", f"expected 'hi', got {text!r}")

    await runner.check("tool_echo", echo)

    async def simple_text() -> None:
        result = await session.call_tool(P + "test_simple_text")
        expect(not result.is_error, f"isError set: {texts(result)}")
        text = single_text(result)
        expect(text == SIMPLE_TEXT, f"expected {SIMPLE_TEXT!r}, got {text!r}")

    await runner.check("tool_simple_text", simple_text)

    async def image_content() -> None:
        result = await session.call_tool(P + "test_image_content")
        expect(not result.is_error, f"isError set: {texts(result)}")
        expect(len(result.content) == 1, f"expected 1 content block, got {len(result.content)}")
        block = result.content[0]
        expect(isinstance(block, types.ImageContent), f"expected an image block, got {type(block).__name__}")
        expect(block.mime_type == "image/png", f"mimeType {block.mime_type!r} != 'image/png'")
        decode_png(block.data, "image data")

    await runner.check("tool_image_content", image_content)

    async def error_handling() -> None:
        result = await session.call_tool(P + "test_error_handling")
        expect(result.is_error is True, f"isError is {result.is_error!r}, expected true")
        got = texts(result)
        expect(got == [ERROR_TEXT], f"expected text {ERROR_TEXT!r}, got {got!r}")

    await runner.check("tool_error_handling", error_handling)

    async def sampling() -> None:
        before = len(rec.sampling_requests)
        result = await session.call_tool(P + "test_sampling", {"prompt": "What is 2+2?"})
        expect(not result.is_error, f"isError set: {texts(result)}")
        expect(len(rec.sampling_requests) > before, "sampling callback was never called")
        req = rec.sampling_requests[-1]
        seen = [
            m.content.text
            for m in req.messages
            if m.role == "user" and isinstance(m.content, types.TextContent)
        ]
        expect("What is 2+2?" in seen, f"sampling request did not carry the prompt as user text: {seen!r}")
        expect(req.max_tokens == 100, f"sampling maxTokens {req.max_tokens!r}, expected 100")
        text = single_text(result)
        want = f"LLM response: {SAMPLING_TEXT}"
        expect(text == want, f"expected {want!r}, got {text!r}")

    await runner.check("tool_sampling", sampling)

    async def elicitation() -> None:
        before = len(rec.elicitation_requests)
        result = await session.call_tool(P + "test_elicitation", {"message": "Please provide your info"})
        expect(not result.is_error, f"isError set: {texts(result)}")
        expect(len(rec.elicitation_requests) > before, "elicitation callback was never called")
        req = rec.elicitation_requests[-1]
        expect(getattr(req, "message", None) == "Please provide your info", f"elicitation message {getattr(req, 'message', None)!r}")
        schema = getattr(req, "requested_schema", None)
        props = schema.get("properties", {}) if isinstance(schema, dict) else getattr(schema, "properties", {}) or {}
        expect("username" in props and "email" in props, f"requestedSchema lacks username/email: {schema!r}")
        text = single_text(result)
        prefix = "User response: action=accept, content="
        expect(text.startswith(prefix), f"expected text starting {prefix!r}, got {text!r}")
        try:
            content = json.loads(text[len(prefix):])
        except json.JSONDecodeError as exc:
            raise CheckFailed(f"content after prefix is not JSON: {text!r}") from exc
        expect(content == ELICIT_CONTENT, f"echoed content {content!r} != {ELICIT_CONTENT!r}")

    await runner.check("tool_elicitation", elicitation)

    async def progress() -> None:
        updates: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append((progress, total, message))

        result = await session.call_tool(P + "test_tool_with_progress", progress_callback=on_progress)
        expect(not result.is_error, f"isError set: {texts(result)}")
        await wait_until(lambda: len(updates) >= 3, 1.0)
        values = [u[0] for u in updates]
        totals = [u[1] for u in updates]
        expect(values == [0, 50, 100], f"progress values {values!r}, expected [0, 50, 100]")
        expect(all(t == 100 for t in totals), f"progress totals {totals!r}, expected all 100")

    await runner.check("tool_progress", progress)

    async def set_level() -> None:
        await session.set_logging_level("debug")

    await runner.check("logging_set_level", set_level)

    async def logging() -> None:
        start = len(rec.log_messages)
        result = await session.call_tool(P + "test_tool_with_logging")
        expect(not result.is_error, f"isError set: {texts(result)}")

        def got() -> list[Any]:
            return [
                m.data for m in rec.log_messages[start:] if m.level == "info" and m.data in LOG_MESSAGES
            ]

        await wait_until(lambda: len(got()) >= 3, 1.0)
        expect(got() == LOG_MESSAGES, f"info log messages {got()!r}, expected {LOG_MESSAGES!r} "
               f"(all received: {[(m.level, m.data) for m in rec.log_messages[start:]]!r})")

    await runner.check("tool_logging", logging)

    # ---- resources ----
    async def resources_list() -> None:
        result = await session.list_resources()
        uris = [str(r.uri) for r in result.resources]
        expect("test://static-text" in uris, f"test://static-text not listed; got {uris!r}")

    await runner.check("resources_list", resources_list)

    async def read_text() -> None:
        result = await session.read_resource("test://static-text")
        expect(len(result.contents) == 1, f"expected 1 content, got {len(result.contents)}")
        c = result.contents[0]
        expect(isinstance(c, types.TextResourceContents), f"expected text contents, got {type(c).__name__}")
        expect(str(c.uri) == "test://static-text", f"uri {c.uri!r}")
        expect(c.mime_type == "text/plain", f"mimeType {c.mime_type!r} != 'text/plain'")
        expect(c.text == STATIC_TEXT, f"expected {STATIC_TEXT!r}, got {c.text!r}")

    await runner.check("resource_read_static_text", read_text)

    async def read_binary() -> None:
        result = await session.read_resource("test://static-binary")
        expect(len(result.contents) == 1, f"expected 1 content, got {len(result.contents)}")
        c = result.contents[0]
        expect(isinstance(c, types.BlobResourceContents), f"expected blob contents, got {type(c).__name__}")
        expect(c.mime_type == "image/png", f"mimeType {c.mime_type!r} != 'image/png'")
        decode_png(c.blob, "blob")

    await runner.check("resource_read_static_binary", read_binary)

    async def read_template() -> None:
        result = await session.read_resource("test://template/123/data")
        expect(len(result.contents) == 1, f"expected 1 content, got {len(result.contents)}")
        c = result.contents[0]
        expect(isinstance(c, types.TextResourceContents), f"expected text contents, got {type(c).__name__}")
        expect(str(c.uri) == "test://template/123/data", f"uri {c.uri!r}")
        expect(c.mime_type == "application/json", f"mimeType {c.mime_type!r} != 'application/json'")
        if c.text != TEMPLATE_TEXT:
            try:
                same = json.loads(c.text) == json.loads(TEMPLATE_TEXT)
            except json.JSONDecodeError:
                same = False
            note = " (same JSON value, different text/key order)" if same else ""
            raise CheckFailed(f"expected {TEMPLATE_TEXT!r}, got {c.text!r}{note}")

    await runner.check("resource_read_template", read_template)

    async def read_unknown() -> None:
        try:
            result = await session.read_resource("test://does-not-exist")
        except MCPError as exc:
            expect(exc.code == RESOURCE_NOT_FOUND, f"error code {exc.code} ({exc.message}), expected {RESOURCE_NOT_FOUND}")
            return
        raise CheckFailed(f"expected an error, got a result: {result!r}")

    await runner.check("resource_read_unknown", read_unknown)

    # ---- prompts ----
    async def prompts_list() -> None:
        result = await session.list_prompts()
        names = {p.name for p in result.prompts}
        missing = [n for n in (P + "test_simple_prompt", P + "test_prompt_with_arguments") if n not in names]
        expect(not missing, f"missing prompts {missing}; got {sorted(names)}")

    await runner.check("prompts_list", prompts_list)

    async def prompt_args() -> None:
        result = await session.get_prompt(P + "test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        expect(len(result.messages) == 1, f"expected 1 message, got {len(result.messages)}")
        m = result.messages[0]
        expect(m.role == "user", f"role {m.role!r}")
        expect(isinstance(m.content, types.TextContent), f"expected text content, got {type(m.content).__name__}")
        expect(m.content.text == PROMPT_ARGS_TEXT, f"expected {PROMPT_ARGS_TEXT!r}, got {m.content.text!r}")

    await runner.check("prompt_with_arguments", prompt_args)

    # ---- completion, ping ----
    async def completion() -> None:
        result = await session.complete(
            types.PromptReference(type="ref/prompt", name=P + "test_prompt_with_arguments"),
            {"name": "arg1", "value": "te"},
        )
        expect(result.completion is not None, "no completion object")
        expect(isinstance(result.completion.values, list), f"completion.values is {result.completion.values!r}")

    await runner.check("completion_complete", completion)

    async def ping() -> None:
        await session.send_ping()

    await runner.check("ping", ping)

    # ---- concurrency ----
    async def concurrent_echo() -> None:
        n = 50
        messages = [f"concurrent-{i}-{'x' * (i % 7)}" for i in range(n)]
        results = await asyncio.gather(
            *(session.call_tool(P + "echo", {"message": m}) for m in messages), return_exceptions=True
        )
        bad = []
        for m, r in zip(messages, results):
            if isinstance(r, BaseException):
                bad.append(f"{m}: {type(r).__name__}: {r}")
            elif r.is_error or texts(r) != [m]:
                bad.append(f"{m}: got {texts(r)!r}")
        expect(not bad, f"{len(bad)}/{n} wrong: " + "; ".join(bad[:3]))

    await runner.check("concurrent_echo_50", concurrent_echo, timeout=60.0)


async def amain(args: argparse.Namespace) -> int:
    runner = Runner()
    rec = Recorder()
    try:
        async with AsyncExitStack() as stack:
            if args.transport == "stdio":
                params = StdioServerParameters(command=args.command[0], args=list(args.command[1:]))
                read, write = await stack.enter_async_context(stdio_client(params))
            elif args.transport == "sse":
                from mcp.client.sse import sse_client

                read, write = await stack.enter_async_context(sse_client(args.url))
            else:
                from mcp.client.streamable_http import streamable_http_client

                read, write = await stack.enter_async_context(streamable_http_client(args.url))
            session = await stack.enter_async_context(
                ClientSession(
                    read,
                    write,
                    sampling_callback=rec.sampling,
                    elicitation_callback=rec.elicitation,
                    logging_callback=rec.logging,
                    client_info=types.Implementation(name="mcpkit-interop-python", version="1.0.0"),
                )
            )

            async def initialize() -> None:
                await session.initialize()

            if await runner.check("initialize", initialize, timeout=20.0):
                await run_checks(runner, session, rec)
    except BaseException as exc:  # noqa: BLE001 - transport/teardown errors must still give a summary
        if isinstance(exc, KeyboardInterrupt):
            raise
        runner.report("session", False, f"transport error: {type(exc).__name__}: {exc}")
    print(f"{runner.passed} passed, {runner.failed} failed", flush=True)
    return 0 if runner.failed == 0 else 1


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prefix", default="", help="prepended to every tool and prompt name (e.g. ref_)")
    sub = parser.add_subparsers(dest="transport", required=True)
    p_stdio = sub.add_parser("stdio", help="spawn the server: stdio -- CMD ARGS...")
    p_stdio.add_argument("command", nargs=argparse.REMAINDER)
    p_http = sub.add_parser("http", help="connect to a Streamable HTTP endpoint URL")
    p_http.add_argument("url")
    p_sse = sub.add_parser("sse", help="connect to a legacy HTTP+SSE endpoint URL (GET /sse, POST /messages)")
    p_sse.add_argument("url")
    args = parser.parse_args(argv)
    if args.transport == "stdio":
        if args.command and args.command[0] == "--":
            args.command = args.command[1:]
        if not args.command:
            parser.error("stdio needs a server command: stdio -- CMD ARGS...")
    return args


def main() -> None:
    global P
    args = parse_args(sys.argv[1:])
    P = args.prefix
    sys.exit(asyncio.run(amain(args)))


if __name__ == "__main__":
    main()
