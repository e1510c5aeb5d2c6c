-- The independent HTTP load driver of the harness (bench/harness.py): wrk POSTs a JSON-RPC
-- `tools/call echo` to a Streamable HTTP endpoint on every connection, each with its own id,
-- and checks every reply: HTTP 200 and a body (JSON, or an SSE event with the JSON on its `data:`
-- line) holding a `result` that is not `"isError":true`. At the end it prints one JSON line
-- (after the line `JSON`): requests, seconds, bad replies (status or body), socket errors and the
-- p50/p99 latency in µs.
--
-- Environment:
--   MODE  session (default: the 2025-11-25 wire on the session SID) or stateless (the 2026-07-28
--         wire: no session, protocol `_meta` in the params, Mcp-Method and Mcp-Name headers)
--   SID   the Mcp-Session-Id of the session mode (the harness opens the session first)
--   ARGS  the tool arguments, a JSON object (default {"message":"hello"})
--   TOOL  the tool called (default echo; a gateway serves it as NAME_echo)
--   AUTH  an Authorization header value sent with every request (a gateway that wants a token)
--
--   MODE=session SID=... wrk -t2 -c16 -d5s -s bench/wrk/tools-call.lua http://127.0.0.1:PORT/mcp
local mode = os.getenv("MODE") or "session"
local sid = os.getenv("SID")
local args = os.getenv("ARGS") or '{"message":"hello"}'
local tool = os.getenv("TOOL") or "echo"
local auth = os.getenv("AUTH")
local meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
  .. '"io.modelcontextprotocol/clientCapabilities":{},'
  .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"0"}}'

local threads = {}
local next_tid = 0

function setup(thread)
  next_tid = next_tid + 1
  thread:set("tid", next_tid)
  table.insert(threads, thread)
end

local counter = 0
bad = 0
first_bad = ""

function init()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  if auth then
    wrk.headers["Authorization"] = auth
  end
  if mode == "stateless" then
    wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
    wrk.headers["Mcp-Method"] = "tools/call"
    wrk.headers["Mcp-Name"] = tool
  else
    wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
    if sid then
      wrk.headers["Mcp-Session-Id"] = sid
    end
  end
end

function request()
  counter = counter + 1
  local id = tid * 1000000000 + counter
  local params
  if mode == "stateless" then
    params = '{"name":"' .. tool .. '","arguments":' .. args .. ',' .. meta .. '}'
  else
    params = '{"name":"' .. tool .. '","arguments":' .. args .. '}'
  end
  local body = '{"jsonrpc":"2.0","id":' .. id .. ',"method":"tools/call","params":' .. params .. '}'
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"result":', 1, true)
      or string.find(body, '"isError":true', 1, true) then
    bad = bad + 1
    if first_bad == "" then
      first_bad = status .. " " .. string.sub(body, 1, 200)
    end
  end
end

function done(summary, latency, requests)
  local total_bad, why = 0, ""
  for _, t in ipairs(threads) do
    total_bad = total_bad + t:get("bad")
    local w = t:get("first_bad")
    if why == "" and w ~= nil then
      why = w
    end
  end
  local e = summary.errors
  io.write("JSON\n")
  io.write(string.format(
    '{"requests":%d,"seconds":%.6f,"bad":%d,"socket_errors":%d,"p50_us":%.1f,"p99_us":%.1f,"first_bad":"%s"}\n',
    summary.requests, summary.duration / 1e6, total_bad, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99),
    string.gsub(why, '[%c"\\]', "?")))
end
