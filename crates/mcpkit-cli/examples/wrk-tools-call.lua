-- wrk script: POST a tools/call to an MCP Streamable HTTP endpoint, each request with its own id
-- (a session refuses an id already in flight). Used to compare `mcpkit bench` with an
-- independent load tool on the same server:
--
--   SID=<Mcp-Session-Id> TOOL=echo ARGS='{"message":"x"}' \
--     wrk -t2 -c16 -d10s -s crates/mcpkit-cli/examples/wrk-tools-call.lua http://127.0.0.1:PORT/mcp
--
-- SID defaults to "canned" (what the canned_server example sends), TOOL to "canned", ARGS to {}.
local tool = os.getenv("TOOL") or "canned"
local args = os.getenv("ARGS") or "{}"
local sid = os.getenv("SID") or "canned"
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

local counter = 0

function init()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  wrk.headers["Mcp-Session-Id"] = sid
  wrk.headers["MCP-Protocol-Version"] = "2025-06-18"
end

function request()
  counter = counter + 1
  local id = tid * 1000000000 + counter
  local body = string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}',
    id, tool, args)
  return wrk.format(nil, nil, nil, body)
end
