// Reads on stdin what mcpkit sent (tools, a view's read contents, the host bridge's messages)
// and prints, as one JSON object, what the official MCP Apps package makes of it: whether each
// shape parses under its schema and keeps every member (the schemas drop members they do not
// know, so a misspelt key shows as a difference), and what its host helpers read.
import {
  McpUiToolMetaSchema,
  McpUiResourceMetaSchema,
  McpUiResourceCspSchema,
  McpUiResourcePermissionsSchema,
  McpUiInitializeResultSchema,
  McpUiToolInputNotificationSchema,
  McpUiToolResultNotificationSchema,
  McpUiToolCancelledNotificationSchema,
  McpUiHostContextChangedNotificationSchema,
  buildAllowAttribute,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));

// Key order does not matter; a member dropped or changed does.
const canonical = (v) =>
  Array.isArray(v)
    ? v.map(canonical)
    : v && typeof v === "object"
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]))
      : v;

function check(schema, value) {
  const parsed = schema.safeParse(value);
  if (!parsed.success) return `invalid: ${parsed.error.message}`;
  const same = JSON.stringify(canonical(parsed.data)) === JSON.stringify(canonical(value));
  return same ? "ok" : `changed: ${JSON.stringify(parsed.data)}`;
}

const notificationSchemas = {
  "ui/notifications/tool-input": McpUiToolInputNotificationSchema,
  "ui/notifications/tool-result": McpUiToolResultNotificationSchema,
  "ui/notifications/tool-cancelled": McpUiToolCancelledNotificationSchema,
  "ui/notifications/host-context-changed": McpUiHostContextChangedNotificationSchema,
};

const out = {
  tools: input.tools.map((tool) => {
    let resourceUri;
    try {
      resourceUri = getToolUiResourceUri(tool) ?? null;
    } catch (e) {
      resourceUri = `throws: ${e.message}`;
    }
    return {
      name: tool.name,
      meta: tool._meta?.ui === undefined ? "none" : check(McpUiToolMetaSchema, tool._meta.ui),
      resourceUri,
      appOnly: isToolVisibilityAppOnly(tool),
    };
  }),
  views: input.contents.map((c) => {
    const ui = c._meta?.ui ?? {};
    return {
      uri: c.uri,
      meta: check(McpUiResourceMetaSchema, ui),
      csp: ui.csp === undefined ? "none" : check(McpUiResourceCspSchema, ui.csp),
      permissions: ui.permissions === undefined ? "none" : check(McpUiResourcePermissionsSchema, ui.permissions),
      allow: buildAllowAttribute(ui.permissions),
    };
  }),
  initializeResult: check(McpUiInitializeResultSchema, input.initializeResult),
  notifications: input.notifications.map((n) => {
    const schema = notificationSchemas[n.method];
    if (!schema) return `${n.method}: no schema`;
    if (n.jsonrpc !== "2.0" || "id" in n) return `${n.method}: not a JSON-RPC notification`;
    // The schemas describe the method and params; the envelope's "jsonrpc" is checked above.
    return `${n.method}: ${check(schema, { method: n.method, params: n.params })}`;
  }),
};
process.stdout.write(JSON.stringify(out));
