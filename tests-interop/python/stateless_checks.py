#!/usr/bin/env python3
"""Interop checks at protocol revision 2026-07-28: the official MCP Python SDK's high-level
`Client` against an MCP server, stateless era.

Usage (each may start with `--prefix ref_`: tool and prompt names prefixed, URIs unchanged):
    stateless_checks.py MODE stdio -- CMD [ARGS...]   spawn the server (the SDK's stdio_client)
    stateless_checks.py MODE http URL                 Streamable HTTP endpoint URL

MODE is `2026-07-28` (pinned: no probe, every request carries the 2026 `_meta`) or `auto`
(probe `server/discover`, adopt the newest mutual version). Either way the connection must end
up on 2026-07-28: the server under test speaks it.

The server is expected to expose the conformance fixtures (test_simple_text, test_sampling,
test_input_required_result_*, test_trigger_tool_change, test://static-text, ...) plus `echo`.
Sampling, elicitation and roots reach the server through `input_required` rounds that the SDK
drives with the callbacks below.

Output convention as client_checks.py: one `PASS name` / `FAIL name: reason` line per check,
then `N passed, M failed` alone on the last line; exit code 0 when every check passed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from typing import Any

import anyio

import mcp.types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.subscriptions import PromptsListChanged, ToolsListChanged

from client_checks import (
    ELICIT_CONTENT,
    ERROR_TEXT,
    PROMPT_ARGS_TEXT,
    SAMPLING_MODEL,
    SAMPLING_TEXT,
    SIMPLE_TEXT,
    STATIC_TEXT,
    TEMPLATE_TEXT,
    CheckFailed,
    Runner,
    decode_png,
    expect,
    single_text,
    texts,
)

warnings.simplefilter("ignore")

STATELESS_REVISION = "2026-07-28"
SERVER_NAME = "mcpkit-reference"
ROOT_URI = "file:///interop/root"
# From 2026-07-28 an unknown resource is Invalid params (-32602) with the uri in `data`.
INVALID_PARAMS = -32602
MISSING_CAPABILITY = -32021
LOG_MESSAGES = ["Tool execution started", "Tool processing data", "Tool execution completed"]
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"

# What the elicitation callback answers, by field name; other fields get "<field>-answer" (or
# true for booleans).
FIELD_ANSWERS: dict[str, Any] = dict(ELICIT_CONTENT) | {
    "name": "Ada",
    "color": "teal",
    "context": "interop context",
    "value": "streamed",
}


# Prepended to every tool and prompt name (`--prefix`): the same server behind a gateway that
# serves it as NAME_<tool>. Resource URIs are not prefixed.
P = ""
# The serverInfo name `server/discover` must give (`--server-name`; a gateway has its own).
SERVER = SERVER_NAME


class Recorder:
    """The client-side input handlers, with what they were asked."""

    def __init__(self) -> None:
        self.sampling_requests: list[types.CreateMessageRequestParams] = []
        self.elicitation_requests: list[Any] = []
        self.roots_requests = 0
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
        schema = getattr(params, "requested_schema", None)
        if not isinstance(schema, dict):
            schema = schema.model_dump(by_alias=True) if schema is not None else {}
        content: dict[str, Any] = {}
        for field, spec in (schema.get("properties") or {}).items():
            kind = spec.get("type") if isinstance(spec, dict) else None
            content[field] = FIELD_ANSWERS.get(field, True if kind == "boolean" else f"{field}-answer")
        return types.ElicitResult(action="accept", content=content)

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.roots_requests += 1
        return types.ListRootsResult(roots=[types.Root(uri=ROOT_URI, name="interop")])

    async def logging(self, params: types.LoggingMessageNotificationParams) -> None:
        self.log_messages.append(params)


def elicitation_messages(rec: Recorder, start: int) -> list[str | None]:
    return [getattr(r, "message", None) for r in rec.elicitation_requests[start:]]


def make_client(args: argparse.Namespace, rec: Recorder | None) -> Client:
    if args.transport == "stdio":
        target: Any = StdioServerParameters(command=args.command[0], args=list(args.command[1:]))
    else:
        target = args.url
    callbacks: dict[str, Any] = {}
    if rec is not None:
        callbacks = {
            "sampling_callback": rec.sampling,
            "elicitation_callback": rec.elicitation,
            "list_roots_callback": rec.roots,
            "logging_callback": rec.logging,
        }
    return Client(
        target,
        mode=args.mode,
        client_info=types.Implementation(name="mcpkit-interop-python-stateless", version="1.0.0"),
        read_timeout_seconds=20.0,
        **callbacks,
    )


async def run_checks(runner: Runner, client: Client, rec: Recorder, mode: str) -> None:
    # ---- discovery ----
    async def discover() -> None:
        expect(client.protocol_version == STATELESS_REVISION, f"negotiated {client.protocol_version!r}, expected {STATELESS_REVISION!r}")
        if mode == "auto":
            # Only the probe learns the server's capabilities, identity and instructions up
            # front; a pinned version adopts a synthesized discover result.
            caps = client.server_capabilities
            expect(caps.tools is not None, "server capabilities lack tools")
            expect(caps.resources is not None, "server capabilities lack resources")
            expect(caps.prompts is not None, "server capabilities lack prompts")
            info = client.server_info
            expect(info is not None and info.name == SERVER, f"serverInfo {info!r}")
            expect(bool(client.instructions), "no instructions from server/discover")

    await runner.check("discover", discover)

    # ---- tools ----
    async def tools_list() -> None:
        result = await client.list_tools()
        names = {t.name for t in result.tools}
        wanted = (P + "echo", P + "test_simple_text", P + "test_input_required_result_elicitation", P + "test_header_param")
        missing = [n for n in wanted if n not in names]
        expect(not missing, f"missing tools {missing}; got {sorted(names)}")

    await runner.check("tools_list", tools_list)

    async def echo() -> None:
        result = await client.call_tool(P + "echo", {"message": "hi 2026"})
        expect(not result.is_error, f"isError set: {texts(result)}")
        text = single_text(result)
        expect(text == "hi 2026", f"expected 'hi 2026', got {text!r}")

    await runner.check("tool_echo", echo)

    async def simple_text() -> None:
        result = await client.call_tool(P + "test_simple_text")
        expect(single_text(result) == SIMPLE_TEXT, f"got {texts(result)!r}")

    await runner.check("tool_simple_text", simple_text)

    async def image_content() -> None:
        result = await client.call_tool(P + "test_image_content")
        expect(len(result.content) == 1, f"expected 1 content block, got {len(result.content)}")
        block = result.content[0]
        expect(isinstance(block, types.ImageContent), f"expected an image block, got {type(block).__name__}")
        expect(block.mime_type == "image/png", f"mimeType {block.mime_type!r} != 'image/png'")
        decode_png(block.data, "image data")

    await runner.check("tool_image_content", image_content)

    async def embedded_resource() -> None:
        result = await client.call_tool(P + "test_embedded_resource")
        expect(len(result.content) == 1, f"expected 1 content block, got {len(result.content)}")
        block = result.content[0]
        expect(isinstance(block, types.EmbeddedResource), f"expected a resource block, got {type(block).__name__}")
        r = block.resource
        expect(isinstance(r, types.TextResourceContents), f"expected text contents, got {type(r).__name__}")
        expect(str(r.uri) == "test://embedded-resource", f"uri {r.uri!r}")
        expect(r.text == "This is an embedded resource content.", f"text {r.text!r}")

    await runner.check("tool_embedded_resource", embedded_resource)

    async def error_handling() -> None:
        result = await client.call_tool(P + "test_error_handling")
        expect(result.is_error is True, f"isError is {result.is_error!r}, expected true")
        expect(texts(result) == [ERROR_TEXT], f"got {texts(result)!r}")

    await runner.check("tool_error_handling", error_handling)

    async def unknown_tool() -> None:
        try:
            result = await client.call_tool("no_such_tool")
        except MCPError as exc:
            expect(exc.code == INVALID_PARAMS, f"error code {exc.code} ({exc.message}), expected {INVALID_PARAMS}")
            return
        expect(result.is_error is True, f"expected an error for an unknown tool, got {result!r}")

    await runner.check("tool_unknown", unknown_tool)

    async def header_param() -> None:
        # `region` is mirrored into Mcp-Param-Region on HTTP; a non-ASCII value takes the
        # Base64 form, which the server must decode and match.
        result = await client.call_tool(P + "test_header_param", {"region": "Zürich 東京", "query": "q1"})
        expect(not result.is_error, f"isError set: {texts(result)}")
        text = single_text(result)
        expect(text == "region=Zürich 東京, query=q1", f"got {text!r}")

    await runner.check("tool_header_param", header_param)

    async def progress() -> None:
        updates: list[float] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            updates.append(p)

        result = await client.call_tool(P + "test_tool_with_progress", progress_callback=on_progress)
        expect(not result.is_error, f"isError set: {texts(result)}")
        expect(updates == [0, 50, 100], f"progress values {updates!r}, expected [0, 50, 100]")

    await runner.check("tool_progress", progress)

    # ---- sampling, elicitation, roots through input_required rounds ----
    async def sampling() -> None:
        before = len(rec.sampling_requests)
        result = await client.call_tool(P + "test_sampling", {"prompt": "What is 2+2?"})
        expect(len(rec.sampling_requests) == before + 1, "sampling callback not called exactly once")
        req = rec.sampling_requests[-1]
        seen = [m.content.text for m in req.messages if isinstance(m.content, types.TextContent)]
        expect(seen == ["What is 2+2?"], f"sampling messages {seen!r}")
        expect(req.max_tokens == 100, f"maxTokens {req.max_tokens!r}")
        want = f"LLM response: {SAMPLING_TEXT}"
        expect(single_text(result) == want, f"expected {want!r}, got {texts(result)!r}")

    await runner.check("tool_sampling", sampling)

    async def elicitation() -> None:
        before = len(rec.elicitation_requests)
        result = await client.call_tool(P + "test_elicitation", {"message": "Please provide your info"})
        expect(elicitation_messages(rec, before) == ["Please provide your info"], "elicitation not asked once")
        text = single_text(result)
        prefix = "User response: action=accept, content="
        expect(text.startswith(prefix), f"got {text!r}")
        expect(json.loads(text[len(prefix):]) == ELICIT_CONTENT, f"echoed content in {text!r}")

    await runner.check("tool_elicitation", elicitation)

    async def ir_elicitation() -> None:
        before = len(rec.elicitation_requests)
        result = await client.call_tool(P + "test_input_required_result_elicitation")
        expect(elicitation_messages(rec, before) == ["What is your name?"], "elicitation not asked once")
        expect(single_text(result) == "Hello, Ada!", f"got {texts(result)!r}")

    await runner.check("input_required_elicitation", ir_elicitation)

    async def ir_sampling() -> None:
        result = await client.call_tool(P + "test_input_required_result_sampling")
        want = f"LLM response: {SAMPLING_TEXT}"
        expect(single_text(result) == want, f"got {texts(result)!r}")

    await runner.check("input_required_sampling", ir_sampling)

    async def ir_roots() -> None:
        before = rec.roots_requests
        result = await client.call_tool(P + "test_input_required_result_list_roots")
        expect(rec.roots_requests == before + 1, "roots callback not called exactly once")
        expect(single_text(result) == f"Client roots: {ROOT_URI}", f"got {texts(result)!r}")

    await runner.check("input_required_list_roots", ir_roots)

    async def ir_multi_round() -> None:
        before = len(rec.elicitation_requests)
        result = await client.call_tool(P + "test_input_required_result_multi_round")
        asked = elicitation_messages(rec, before)
        want = ["Step 1: What is your name?", "Step 2: What is your favorite color?"]
        expect(asked == want, f"asked {asked!r}, expected {want!r}")
        expect(single_text(result) == "Ada likes teal", f"got {texts(result)!r}")

    await runner.check("input_required_multi_round", ir_multi_round)

    async def ir_multiple_inputs() -> None:
        result = await client.call_tool(P + "test_input_required_result_multiple_inputs")
        want = f"name=Ada; greeting={SAMPLING_TEXT}; Client roots: {ROOT_URI}"
        expect(single_text(result) == want, f"got {texts(result)!r}")

    await runner.check("input_required_multiple_inputs", ir_multiple_inputs)

    async def ir_request_state() -> None:
        result = await client.call_tool(P + "test_input_required_result_request_state")
        expect(single_text(result) == "Confirmed ok=true: state-ok", f"got {texts(result)!r}")

    await runner.check("input_required_request_state", ir_request_state)

    async def ir_prompt() -> None:
        result = await client.get_prompt(P + "test_input_required_result_prompt")
        got = [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]
        expect(got == ["Context: interop context"], f"got {got!r}")

    await runner.check("input_required_prompt", ir_prompt)

    # ---- logging is per request on this wire ----
    async def no_logs_without_level() -> None:
        start = len(rec.log_messages)
        result = await client.call_tool(P + "test_logging_tool")
        expect(not result.is_error, f"isError set: {texts(result)}")
        got = [m.data for m in rec.log_messages[start:]]
        expect(got == [], f"log messages arrived although no logLevel was asked for: {got!r}")

    await runner.check("logging_silent_without_level", no_logs_without_level)

    async def logs_with_level() -> None:
        start = len(rec.log_messages)
        result = await client.call_tool(P + "test_logging_tool", meta={LOG_LEVEL_KEY: "info"})
        expect(not result.is_error, f"isError set: {texts(result)}")
        got = [m.data for m in rec.log_messages[start:]]
        expect(got == LOG_MESSAGES, f"log messages {got!r}, expected {LOG_MESSAGES!r}")

    await runner.check("logging_with_level", logs_with_level)

    # ---- resources ----
    async def resources_list() -> None:
        result = await client.list_resources()
        uris = [str(r.uri) for r in result.resources]
        expect("test://static-text" in uris, f"test://static-text not listed; got {uris!r}")
        templates = await client.list_resource_templates()
        got = [t.uri_template for t in templates.resource_templates]
        expect("test://template/{id}/data" in got, f"templates {got!r}")

    await runner.check("resources_list", resources_list)

    async def read_text() -> None:
        result = await client.read_resource("test://static-text")
        expect(len(result.contents) == 1, f"expected 1 content, got {len(result.contents)}")
        c = result.contents[0]
        expect(isinstance(c, types.TextResourceContents), f"expected text contents, got {type(c).__name__}")
        expect(c.text == STATIC_TEXT and c.mime_type == "text/plain", f"got {c!r}")

    await runner.check("resource_read_static_text", read_text)

    async def read_binary() -> None:
        result = await client.read_resource("test://static-binary")
        c = result.contents[0]
        expect(isinstance(c, types.BlobResourceContents), f"expected blob contents, got {type(c).__name__}")
        decode_png(c.blob, "blob")

    await runner.check("resource_read_static_binary", read_binary)

    async def read_template() -> None:
        result = await client.read_resource("test://template/123/data")
        c = result.contents[0]
        expect(isinstance(c, types.TextResourceContents), f"expected text contents, got {type(c).__name__}")
        expect(json.loads(c.text) == json.loads(TEMPLATE_TEXT), f"got {c.text!r}")

    await runner.check("resource_read_template", read_template)

    async def read_unknown() -> None:
        try:
            result = await client.read_resource("test://does-not-exist")
        except MCPError as exc:
            expect(exc.code == INVALID_PARAMS, f"error code {exc.code} ({exc.message}), expected {INVALID_PARAMS}")
            data = exc.error.data if hasattr(exc, "error") else None
            expect(isinstance(data, dict) and data.get("uri") == "test://does-not-exist", f"error data {data!r}")
            return
        raise CheckFailed(f"expected an error, got a result: {result!r}")

    await runner.check("resource_read_unknown", read_unknown)

    # ---- prompts, completion ----
    async def prompts_list() -> None:
        result = await client.list_prompts()
        names = {p.name for p in result.prompts}
        missing = [n for n in (P + "test_simple_prompt", P + "test_prompt_with_arguments") if n not in names]
        expect(not missing, f"missing prompts {missing}; got {sorted(names)}")

    await runner.check("prompts_list", prompts_list)

    async def prompt_args() -> None:
        result = await client.get_prompt(P + "test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        got = [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]
        expect(got == [PROMPT_ARGS_TEXT], f"got {got!r}")

    await runner.check("prompt_with_arguments", prompt_args)

    async def completion() -> None:
        result = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data"),
            {"name": "id", "value": "1"},
        )
        values = result.completion.values
        expect(isinstance(values, list) and values, f"completion.values is {values!r}")
        expect(values == ["123"], f"values {values!r}, expected ['123']")

    await runner.check("completion_complete", completion)

    # ---- subscriptions/listen ----
    async def listen_tools() -> None:
        async with client.listen(tools_list_changed=True) as sub:
            expect(sub.honored.tools_list_changed is True, f"honored {sub.honored!r}")
            first = await client.call_tool(P + "test_trigger_tool_change")
            event = await sub.__anext__()
            expect(isinstance(event, ToolsListChanged), f"got {event!r}")
            # Put the catalogue back (the trigger toggles test_dynamic_tool).
            second = await client.call_tool(P + "test_trigger_tool_change")
            expect({single_text(first), single_text(second)} == {"Added test_dynamic_tool", "Removed test_dynamic_tool"},
                   f"trigger said {texts(first)!r}, {texts(second)!r}")

    await runner.check("listen_tools_list_changed", listen_tools)

    async def listen_filtered() -> None:
        async with client.listen(prompts_list_changed=True) as sub:
            expect(not sub.honored.tools_list_changed, f"honored {sub.honored!r}")
            # A tool change must not reach a prompts-only subscription: the first event is the
            # prompt change that follows it.
            await client.call_tool(P + "test_trigger_tool_change")
            await client.call_tool(P + "test_trigger_prompt_change")
            event = await sub.__anext__()
            expect(isinstance(event, PromptsListChanged), f"first event {event!r}, expected PromptsListChanged")
            await client.call_tool(P + "test_trigger_tool_change")
            await client.call_tool(P + "test_trigger_prompt_change")

    await runner.check("listen_filters_kinds", listen_filtered)

    # ---- concurrency ----
    async def concurrent_echo() -> None:
        messages = [f"concurrent-{i}" for i in range(20)]
        results = await asyncio.gather(*(client.call_tool(P + "echo", {"message": m}) for m in messages))
        bad = [m for m, r in zip(messages, results) if texts(r) != [m]]
        expect(not bad, f"wrong echoes for {bad[:3]!r}")

    await runner.check("concurrent_echo_20", concurrent_echo, timeout=60.0)


async def missing_capability_checks(runner: Runner, args: argparse.Namespace) -> None:
    """A client that declares no sampling gets MissingRequiredClientCapability, not a round."""

    async def missing() -> None:
        async with make_client(args, None) as bare:
            try:
                result = await bare.call_tool(P + "test_missing_capability")
            except MCPError as exc:
                expect(exc.code == MISSING_CAPABILITY, f"error code {exc.code} ({exc.message})")
                return
            raise CheckFailed(f"expected error {MISSING_CAPABILITY}, got {result!r}")

    await runner.check("missing_client_capability", missing, timeout=30.0)


async def amain(args: argparse.Namespace) -> int:
    runner = Runner()
    rec = Recorder()
    try:
        # Connecting runs the mode's negotiation (a discover probe for `auto`); it is bounded by
        # the client's read timeout. Entered outside any check: its task group must outlive them.
        async with make_client(args, rec) as client:
            runner.report("connect", True)
            await run_checks(runner, client, rec, args.mode)
        await missing_capability_checks(runner, args)
    except BaseException as exc:  # noqa: BLE001 - transport/teardown errors must still give a summary
        if isinstance(exc, KeyboardInterrupt):
            raise
        runner.report("session", False, f"transport error: {type(exc).__name__}: {exc}")
    print(f"{runner.passed} passed, {runner.failed} failed", flush=True)
    return 0 if runner.failed == 0 else 1


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prefix", default="", help="prepended to every tool and prompt name (e.g. ref_)")
    parser.add_argument("--server-name", default=SERVER_NAME, help="the serverInfo name expected from server/discover")
    parser.add_argument("mode", choices=[STATELESS_REVISION, "auto"])
    sub = parser.add_subparsers(dest="transport", required=True)
    p_stdio = sub.add_parser("stdio", help="spawn the server: stdio -- CMD ARGS...")
    p_stdio.add_argument("command", nargs=argparse.REMAINDER)
    p_http = sub.add_parser("http", help="connect to a Streamable HTTP endpoint URL")
    p_http.add_argument("url")
    args = parser.parse_args(argv)
    if args.transport == "stdio":
        if args.command and args.command[0] == "--":
            args.command = args.command[1:]
        if not args.command:
            parser.error("stdio needs a server command: stdio -- CMD ARGS...")
    return args


def main() -> None:
    global P, SERVER
    args = parse_args(sys.argv[1:])
    P = args.prefix
    SERVER = args.server_name
    sys.exit(anyio.run(amain, args))


if __name__ == "__main__":
    main()
