// The page: talks to `mcpkit dev` (which holds the MCP client) through its JSON API and one
// event stream. Server data is only ever set as text or as a checked data: URL.

const token = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);
let calls = 0;
let running = null; // the call id shown in Result while it runs
let generation = -1;
let serverCaps = {};
let roots = [];

function withToken(path) {
  return `${path}?token=${encodeURIComponent(token)}`;
}

async function api(path, body) {
  const init = body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(withToken(path), init);
  let v;
  try {
    v = await r.json();
  } catch {
    v = { error: `${r.status} ${r.statusText}` };
  }
  if (!r.ok && !v.error) v.error = `${r.status} ${r.statusText}`;
  return v;
}

function setStatus(text, down) {
  $("status").textContent = text;
  $("status").classList.toggle("down", !!down);
}

// ---- server, tools, resources, prompts ----

async function loadState() {
  const s = await api("/api/state");
  $("target").textContent = s.target || "";
  const protocol = $("protocol");
  if (s.mode && ![...protocol.options].some((o) => o.value === s.mode)) protocol.append(el("option", { value: s.mode, text: s.mode }));
  if (s.mode) protocol.value = s.mode;
  if (Array.isArray(s.roots)) renderRoots(s.roots);
  if (!s.connected) {
    setStatus(s.error ? `Not connected: ${s.error}` : "Connecting…", !!s.error);
    return;
  }
  generation = s.generation;
  setStatus(`Connected (${s.protocolVersion})`);
  const info = $("server-info");
  info.replaceChildren();
  const row = (k, v) => {
    if (v === undefined || v === null || v === "") return;
    info.append(el("dt", { text: k }), el("dd", { text: String(v) }));
  };
  const si = s.serverInfo || {};
  row("Name", si.title ? `${si.title} (${si.name})` : si.name);
  row("Version", si.version);
  row("Revision", s.protocolVersion + (s.stateless ? " (stateless era)" : " (handshake era)"));
  const caps = s.capabilities || {};
  serverCaps = caps;
  row("Capabilities", Object.keys(caps).filter((k) => caps[k] != null).join(", ") || "none");
  if (caps.extensions) row("Extensions", Object.keys(caps.extensions).join(", "));
  $("capabilities").textContent = JSON.stringify(caps, null, 2);
  $("instructions").hidden = !s.instructions;
  $("instructions-text").textContent = s.instructions || "";
  renderTools(s.tools);
  renderResources(s.resources, s.resourceTemplates);
  renderPrompts(s.prompts);
  renderSkills(s.skills);
  $("tasks").hidden = !(caps.extensions && caps.extensions["io.modelcontextprotocol/tasks"]);
  $("log-note").textContent = caps.logging ? "" : "The server does not declare logging.";
}

function selectIn(list, button) {
  for (const b of list.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b === button));
}

function renderTools(tools) {
  const list = $("tool-list");
  list.replaceChildren();
  const items = (tools && tools.items) || [];
  $("tools-note").textContent = tools && tools.error ? `tools/list failed: ${tools.error}` : items.length ? "" : "No tools.";
  for (const t of items) {
    const b = el("button", { type: "button", text: t.name, "aria-pressed": "false" });
    const marks = [viewUriOf(t) ? "has a view (MCP App)" : "", appOnly(t) ? "app only" : ""].filter(Boolean).join(", ");
    if (t.description || marks) b.title = [t.description, marks].filter(Boolean).join(" — ");
    b.addEventListener("click", () => {
      selectIn(list, b);
      showCallForm(t.title || t.name, t.description, t.inputSchema, "Call", (args) => callTool(t, args));
      const support = t.execution && t.execution.taskSupport;
      $("call-task").hidden = support !== "optional";
      $("call-as-task").checked = false;
    });
    list.append(el("li", {}, b));
  }
}

function renderResources(resources, templates) {
  const list = $("resource-list");
  list.replaceChildren();
  for (const r of (resources && resources.items) || []) {
    const b = el("button", { type: "button", text: r.name || r.uri, title: r.uri });
    b.addEventListener("click", () => readResource(r.uri));
    list.append(el("li", {}, b));
  }
  const tl = $("template-list");
  tl.replaceChildren();
  for (const t of (templates && templates.items) || []) {
    const b = el("button", { type: "button", text: t.uriTemplate, "aria-label": `Read template ${t.uriTemplate}` });
    b.addEventListener("click", () => {
      const names = templateVariables(t.uriTemplate);
      const schema = { type: "object", properties: {}, required: names };
      for (const n of names) schema.properties[n] = { type: "string" };
      showCallForm(t.title || t.name || t.uriTemplate, t.description, schema, "Read", (args) => readResource(expandTemplate(t.uriTemplate, args)));
      if (serverCaps.completions) attachCompletion($("call-fields"), { type: "ref/resource", uri: t.uriTemplate });
    });
    tl.append(el("li", {}, b, t.description ? el("small", { class: "desc", text: t.description }) : null));
  }
}

function renderPrompts(prompts) {
  const list = $("prompt-list");
  list.replaceChildren();
  for (const p of (prompts && prompts.items) || []) {
    const b = el("button", { type: "button", text: p.name, "aria-pressed": "false" });
    b.addEventListener("click", () => {
      selectIn(list, b);
      const schema = { type: "object", properties: {}, required: [] };
      for (const a of p.arguments || []) {
        schema.properties[a.name] = { type: "string", description: a.description };
        if (a.required) schema.required.push(a.name);
      }
      showCallForm(p.title || p.name, p.description, schema, "Get", (args) => getPrompt(p.name, args));
      if (serverCaps.completions) attachCompletion($("call-fields"), { type: "ref/prompt", name: p.name });
    });
    list.append(el("li", {}, b));
  }
}

// The variables of an RFC 6570 URI template, in order.
function templateVariables(template) {
  const names = [];
  for (const m of template.matchAll(/\{([+#./;?&]?)([^}]*)\}/g)) {
    for (const part of m[2].split(",")) {
      const n = part.replace(/\*$/, "").replace(/:\d+$/, "").trim();
      if (n && !names.includes(n)) names.push(n);
    }
  }
  return names;
}

// `template` with its variables replaced by `args` (reserved expansion for `{+x}` and `{#x}`).
function expandTemplate(template, args) {
  return template.replace(/\{([+#./;?&]?)([^}]*)\}/g, (_, op, list) => {
    const reserved = op === "+" || op === "#";
    const enc = (v) => (reserved ? encodeURI(v) : encodeURIComponent(v));
    const vars = list.split(",").map((p) => p.replace(/\*$/, "").replace(/:\d+$/, "").trim());
    const present = vars.filter((n) => args[n] !== undefined && args[n] !== "");
    const sep = { "": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&" }[op];
    const named = op === ";" || op === "?" || op === "&";
    const parts = present.map((n) => (named ? `${n}=${enc(String(args[n]))}` : enc(String(args[n]))));
    if (!parts.length) return "";
    const first = { "": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&" }[op];
    return first + parts.join(sep);
  });
}

// Completions (`completion/complete`) under each text input of `container`, asked as the user
// types; a suggestion is a button that fills the input in.
function attachCompletion(container, ref) {
  for (const input of container.querySelectorAll("input[name]")) {
    if (input.type !== "text") continue;
    const list = el("ul", { class: "suggestions", "aria-label": `Completions for ${input.name}` });
    input.parentNode.append(list);
    let timer = null;
    let asked = 0;
    const ask = async () => {
      const n = ++asked;
      const v = await api("/api/complete", { ref, argument: input.name, value: input.value });
      if (n !== asked) return;
      list.replaceChildren();
      if (v.error) return list.append(el("li", { class: "note", text: `completion/complete failed: ${v.error}` }));
      const values = (v.result && v.result.completion && v.result.completion.values) || [];
      for (const value of values.slice(0, 30)) {
        const b = el("button", { type: "button", text: String(value) });
        b.addEventListener("click", () => {
          input.value = String(value);
          list.replaceChildren();
          input.focus();
        });
        list.append(el("li", {}, b));
      }
    };
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(ask, 150);
    });
  }
}

function renderSkills(skills) {
  $("skills").hidden = !skills;
  const list = $("skill-list");
  list.replaceChildren();
  if (!skills) return;
  const items = skills.items || [];
  $("skills-note").textContent = skills.error ? `skills/list failed: ${skills.error}` : items.length ? "" : "No skills.";
  for (const k of items) {
    const name = (k.frontmatter && k.frontmatter.name) || k.uri;
    const b = el("button", { type: "button", text: String(name), title: (k.frontmatter && k.frontmatter.description) || k.uri });
    b.addEventListener("click", () => showSkill(String(name), k.uri));
    list.append(el("li", {}, b));
  }
}

async function showSkill(name, uri) {
  const body = resultHeading(`Skill ${name}`);
  const v = await api("/api/skill", { uri });
  if (v.error) return showError(body, v.error);
  body.append(el("p", { class: "note", text: uri }), el("pre", { text: (v.result && v.result.text) || "" }));
}

// ---- roots ----

function renderRoots(list) {
  roots = list;
  const ul = $("root-list");
  ul.replaceChildren();
  if (!roots.length) ul.append(el("li", { class: "note", text: "No roots." }));
  roots.forEach((r, i) => {
    const remove = el("button", { type: "button", text: "Remove", "aria-label": `Remove root ${r.uri}` });
    remove.addEventListener("click", () => sendRoots(roots.filter((_, j) => j !== i)));
    ul.append(el("li", {}, el("code", { text: r.uri }), r.name ? ` (${r.name}) ` : " ", remove));
  });
}

async function sendRoots(next) {
  const v = await api("/api/roots", { roots: next });
  if (v.error) {
    $("roots-note").textContent = `Roots not changed: ${v.error}`;
    return;
  }
  renderRoots(next);
  $("roots-note").textContent = "Roots changed; the server was told (notifications/roots/list_changed).";
}

$("root-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const uri = $("root-uri").value.trim();
  if (!uri) return;
  const name = $("root-name").value.trim();
  sendRoots(roots.concat([name ? { uri, name } : { uri }]));
  $("root-uri").value = "";
  $("root-name").value = "";
});

// ---- logs ----

$("log-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const level = $("log-level").value;
  if (!level) return;
  const v = await api("/api/log-level", { level });
  $("log-note").textContent = v.error ? `logging/setLevel failed: ${v.error}` : `Level set to ${level}.`;
});

$("log-clear").addEventListener("click", () => $("log-list").replaceChildren());

function addLog(p, source, at) {
  const data = typeof p.data === "string" ? p.data : JSON.stringify(p.data);
  $("log-list").append(
    el("li", { class: `log-${p.level}` }, el("time", { text: at || "" }), el("span", { class: "level", text: String(p.level || "") }), source === "view" ? el("span", { class: "tag", text: "view" }) : null, p.logger ? `[${p.logger}] ` : "", data || ""),
  );
}

// ---- tasks ----

const taskRows = new Map();

function onTask(e) {
  const t = e.task || {};
  let row = taskRows.get(t.taskId);
  if (!row) {
    const status = el("span");
    const cancel = el("button", { type: "button", text: "Cancel task", "aria-label": `Cancel task ${t.taskId}` });
    cancel.addEventListener("click", () => api("/api/task/cancel", { task: t.taskId }));
    row = { li: el("li", {}, el("code", { text: t.taskId }), ` ${e.tool || ""}: `, status, " ", cancel), status, cancel };
    taskRows.set(t.taskId, row);
    $("task-list").append(row.li);
    $("tasks").hidden = false;
  }
  const p = e.progress ? ` (${e.progress.progress}${e.progress.total != null ? ` / ${e.progress.total}` : ""})` : "";
  row.status.textContent = `${t.status}${p}${t.statusMessage ? ` ${t.statusMessage}` : ""}`;
  row.cancel.hidden = ["completed", "failed", "cancelled"].includes(t.status);
}

function onTaskEnd(e) {
  const row = taskRows.get(e.task);
  if (!row) return;
  if (e.error) row.status.textContent = `ended: ${e.error}`;
  else if (!/^completed/.test(row.status.textContent)) row.status.textContent = "completed";
  row.cancel.hidden = true;
}

// ---- the App region: a tool's view (MCP Apps) ----

let currentView = null; // {id, frame, uri}

function viewUriOf(t) {
  const m = t._meta || {};
  const uri = (m.ui && m.ui.resourceUri) || m["ui/resourceUri"];
  return typeof uri === "string" && uri.startsWith("ui://") ? uri : null;
}

function appOnly(t) {
  const v = t._meta && t._meta.ui && t._meta.ui.visibility;
  return Array.isArray(v) && !v.includes("model");
}

function closeView() {
  if (!currentView) return;
  api("/api/view/close", { view: currentView.id });
  currentView.frame.remove();
  currentView = null;
}

// Open the view at `uri` (for `tool`) in a sandboxed iframe on the views' origin; its id, or
// null when it could not be opened.
async function openView(uri, tool) {
  closeView();
  $("app-requests").replaceChildren();
  $("app-note").textContent = `Opening ${uri}…`;
  const theme = matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  const v = await api("/api/view", { uri, tool, theme, locale: navigator.language });
  if (v.error) {
    $("app-note").textContent = `The view ${uri} could not be opened: ${v.error}`;
    return null;
  }
  const frame = el("iframe", { sandbox: v.sandbox, title: `View ${uri}`, referrerpolicy: "no-referrer", src: v.src });
  if (v.allow) frame.setAttribute("allow", v.allow);
  if (v.prefersBorder === false) frame.classList.add("borderless");
  currentView = { id: v.view, frame, uri };
  $("app-frame").replaceChildren(frame);
  $("app-note").textContent = `${uri}${tool ? ` (${tool.name})` : ""}: loading`;
  return v.view;
}

function postToView(view, text) {
  if (!view.frame.contentWindow) return;
  try {
    // The view's origin is opaque (sandboxed without allow-same-origin): "*" is the only target.
    view.frame.contentWindow.postMessage(JSON.parse(text), "*");
  } catch (err) {
    console.warn("mcpkit dev: a message for the view could not be posted", err);
  }
}

// What the view posts goes to mcpkit dev's bridge (which answers, and calls the server with
// the visibility gate); the answer comes back here.
window.addEventListener("message", async (e) => {
  const view = currentView;
  if (!view || e.source !== view.frame.contentWindow) return;
  const m = e.data;
  if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
  const v = await api("/api/view/post", { view: view.id, message: JSON.stringify(m) });
  if (typeof v.reply === "string" && currentView === view) postToView(view, v.reply);
});

function onViewEvent(e) {
  const ev = e.event || {};
  const current = currentView && e.view === currentView.id;
  if (ev.type === "log") return addLog(ev.log || {}, "view");
  if (!current) return;
  const requests = $("app-requests");
  switch (ev.type) {
    case "initialized":
      $("app-note").textContent = `${currentView.uri}: ready`;
      return;
    case "size":
      if (typeof ev.height === "number" && ev.height > 0) currentView.frame.style.height = `${Math.min(Math.max(ev.height, 40), 2000)}px`;
      return;
    case "open-link": {
      const open = el("button", { type: "button", text: "Open link" });
      open.addEventListener("click", () => {
        if (/^https?:\/\//i.test(ev.url || "")) window.open(ev.url, "_blank", "noopener,noreferrer");
      });
      requests.append(el("li", {}, "The view asks to open ", el("code", { text: ev.url || "" }), " ", open));
      return;
    }
    case "message":
      requests.append(el("li", {}, "The view adds a message: ", el("code", { text: JSON.stringify(ev.params) })));
      return;
    case "model-context":
      requests.append(el("li", {}, "The view updates the model's context: ", el("code", { text: JSON.stringify(ev.params) })));
      return;
  }
}

$("protocol-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  setStatus("Reconnecting…");
  const v = await api("/api/reconnect", { protocol: $("protocol").value });
  if (!v.connected) setStatus(`Not connected: ${v.error}`, true);
});

// ---- the call form ----

let submitForm = null;

function showCallForm(name, description, schema, verb, run) {
  $("call-note").hidden = true;
  $("call-form").hidden = false;
  $("call-name").textContent = name;
  $("call-description").textContent = description || "";
  $("call-error").textContent = "";
  $("call-submit").textContent = verb;
  $("call-task").hidden = true;
  const read = schemaForm(schema, $("call-fields"));
  submitForm = () => {
    let args;
    try {
      args = read();
    } catch (e) {
      $("call-error").textContent = e.message;
      return;
    }
    $("call-error").textContent = "";
    run(args);
  };
}

$("call-form").addEventListener("submit", (e) => {
  e.preventDefault();
  if (submitForm) submitForm();
});

// ---- results ----

function resultHeading(text) {
  const body = $("result-body");
  body.replaceChildren(el("h3", { text }));
  body.classList.remove("is-error");
  return body;
}

function showError(body, message) {
  body.classList.add("is-error");
  body.append(el("p", { class: "error", text: message }));
}

async function callTool(t, args) {
  const name = t.name;
  const id = ++calls;
  running = id;
  const body = resultHeading(`${name} (running)`);
  $("progress").hidden = false;
  $("progress-bar").removeAttribute("value");
  $("progress-text").textContent = "";
  // A tool with a view: the view opens first and is sent the call's input, then its result.
  const uri = viewUriOf(t);
  const view = uri ? await openView(uri, t) : null;
  const support = t.execution && t.execution.taskSupport;
  const task = support === "required" || (support === "optional" && $("call-as-task").checked);
  const v = await api("/api/call", { call: id, tool: name, arguments: args, task, view });
  if (running === id) {
    running = null;
    $("progress").hidden = true;
  }
  body.querySelector("h3").textContent = name;
  if (v.cancelled) body.append(el("p", { class: "note", text: "Cancelled." }));
  else if (v.error) showError(body, v.error);
  else renderToolResult(body, v.result || {});
}

function renderToolResult(body, r) {
  if (r.isError) {
    body.classList.add("is-error");
    body.append(el("p", { class: "is-error-banner", text: "The tool reported an error (isError)." }));
  }
  for (const block of r.content || []) body.append(renderBlock(block));
  if (r.structuredContent !== undefined) {
    body.append(el("div", { class: "block" }, el("h4", { text: "structuredContent" }), el("pre", { class: "structured", text: JSON.stringify(r.structuredContent, null, 2) })));
  }
}

// A data: URL for base64 `data` of `mime`, or null when either looks wrong.
function dataUrl(mime, data, kind) {
  if (typeof mime !== "string" || !new RegExp(`^${kind}/[\\w.+-]+$`).test(mime)) return null;
  if (typeof data !== "string" || !/^[A-Za-z0-9+/=\s]*$/.test(data)) return null;
  return `data:${mime};base64,${data.replace(/\s/g, "")}`;
}

function renderBlock(b) {
  const div = el("div", { class: "block" });
  switch (b.type) {
    case "text":
      div.append(el("pre", { text: b.text }));
      break;
    case "image": {
      const url = dataUrl(b.mimeType, b.data, "image");
      div.append(url ? el("img", { src: url, alt: `image (${b.mimeType})` }) : el("p", { class: "error", text: `an image of type ${b.mimeType} that cannot be shown` }));
      break;
    }
    case "audio": {
      const url = dataUrl(b.mimeType, b.data, "audio");
      div.append(url ? el("audio", { src: url, controls: true, "aria-label": `audio (${b.mimeType})` }) : el("p", { class: "error", text: `audio of type ${b.mimeType} that cannot be played` }));
      break;
    }
    case "resource_link":
      div.append(el("p", { text: `Resource link: ${b.name || ""} ${b.uri}` }));
      break;
    case "resource": {
      const r = b.resource || {};
      div.append(el("p", { text: `Resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ""}` }));
      div.append(el("pre", { text: r.text !== undefined ? r.text : `(${(r.blob || "").length} base64 characters)` }));
      break;
    }
    default:
      div.append(el("pre", { text: JSON.stringify(b, null, 2) }));
  }
  return div;
}

async function readResource(uri) {
  const body = resultHeading(uri);
  const v = await api("/api/read", { uri });
  if (v.error) return showError(body, v.error);
  for (const c of (v.result && v.result.contents) || []) body.append(renderBlock({ type: "resource", resource: c }));
}

$("read-form").addEventListener("submit", (e) => {
  e.preventDefault();
  readResource($("read-uri").value);
});

async function getPrompt(name, args) {
  const body = resultHeading(name);
  const v = await api("/api/prompt", { name, arguments: args });
  if (v.error) return showError(body, v.error);
  const r = v.result || {};
  if (r.description) body.append(el("p", { text: r.description }));
  for (const m of r.messages || []) {
    body.append(el("h4", { text: m.role }));
    body.append(renderBlock(m.content || {}));
  }
}

$("cancel").addEventListener("click", () => {
  if (running !== null) api("/api/cancel", { call: running });
});

function onProgress(e) {
  if (e.call !== running) return;
  const bar = $("progress-bar");
  if (typeof e.total === "number" && e.total > 0) {
    bar.max = e.total;
    bar.value = Math.min(e.progress, e.total);
  }
  $("progress-text").textContent = `${e.progress}${typeof e.total === "number" ? ` / ${e.total}` : ""}${e.message ? ` ${e.message}` : ""}`;
}

// ---- messages ----

function summary(text) {
  try {
    const m = JSON.parse(text);
    if (m.method) return m.id !== undefined ? `${m.method} #${m.id}` : m.method;
    if (m.error) return `error #${m.id}: ${m.error.message}`;
    if (m.id !== undefined) return `result #${m.id}`;
  } catch {
    // Not JSON: shown as is.
  }
  return text.slice(0, 80);
}

function onMessage(e) {
  const pretty = (() => {
    try {
      return JSON.stringify(JSON.parse(e.text), null, 2);
    } catch {
      return e.text;
    }
  })();
  const arrow = e.dir === "out" ? "→" : "←";
  const view = e.peer === "view";
  const line = el("summary", {}, el("time", { text: e.at }), " ", el("span", { class: "arrow", text: arrow, "aria-label": e.dir === "out" ? "sent" : "received" }), view ? el("span", { class: "tag", text: "view", title: "between the App view and mcpkit dev" }) : " ", el("span", { text: summary(e.text) }));
  const li = el("li", { class: `dir-${e.dir}` }, el("details", {}, line, el("pre", { text: pretty })));
  const filter = $("message-filter").value.toLowerCase();
  li.hidden = filter !== "" && !e.text.toLowerCase().includes(filter);
  li.dataset.text = e.text.toLowerCase();
  $("message-list").append(li);
  if (view) return;
  if (e.dir === "in" && e.text.includes('"notifications/message"')) {
    try {
      const m = JSON.parse(e.text);
      if (m.method === "notifications/message") addLog(m.params || {}, "server", e.at);
    } catch {
      // Not JSON: not a log message.
    }
  }
  // A list changed on the server: show the new one.
  if (e.dir === "in" && /"method":"notifications\/(tools|resources|prompts)\/list_changed"/.test(e.text)) {
    scheduleLoad();
  }
}

// Read the state once for a burst of reasons (a replayed history holds every connection).
let loadTimer = null;
function scheduleLoad() {
  clearTimeout(loadTimer);
  loadTimer = setTimeout(loadState, 50);
}

$("message-filter").addEventListener("input", () => {
  const f = $("message-filter").value.toLowerCase();
  for (const li of $("message-list").children) li.hidden = f !== "" && !li.dataset.text.includes(f);
});

$("message-clear").addEventListener("click", () => $("message-list").replaceChildren());

// ---- the server's questions ----

const dialogs = new Map();

function answer(id, value) {
  const d = dialogs.get(id);
  if (d) {
    dialogs.delete(id);
    d.close();
    d.remove();
  }
  api("/api/answer", { id, answer: value });
}

function dialogFor(id, title) {
  const titleId = `ask-${id}-title`;
  const d = el("dialog", { role: "dialog", "aria-labelledby": titleId }, el("h2", { id: titleId, text: title }));
  dialogs.set(id, d);
  $("dialogs").append(d);
  return d;
}

function buttons(...list) {
  const row = el("div", { class: "buttons" });
  for (const [text, type, onClick] of list) {
    const b = el("button", { type, text });
    if (onClick) b.addEventListener("click", onClick);
    row.append(b);
  }
  return row;
}

function askElicitation(id, p) {
  const d = dialogFor(id, "The server asks for input");
  d.append(el("p", { text: p.message || "" }));
  // Escape is "Cancel".
  d.addEventListener("cancel", (e) => {
    e.preventDefault();
    answer(id, { action: "cancel" });
  });
  const form = el("form", { novalidate: true });
  const error = el("p", { class: "error", role: "alert" });
  let read = () => ({});
  if (p.mode === "url") {
    form.append(el("p", { text: "It asks you to open this URL:" }), el("pre", { text: p.url || "" }));
  } else {
    const fields = el("div");
    form.append(fields);
    read = schemaForm(p.requestedSchema, fields);
  }
  form.append(
    error,
    buttons(["Accept", "submit"], ["Decline", "button", () => answer(id, { action: "decline" })], ["Cancel", "button", () => answer(id, { action: "cancel" })]),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (p.mode === "url") {
      if (/^https?:\/\//i.test(p.url || "")) window.open(p.url, "_blank", "noopener,noreferrer");
      return answer(id, { action: "accept" });
    }
    try {
      answer(id, { action: "accept", content: read() });
    } catch (err) {
      error.textContent = err.message;
    }
  });
  d.append(form);
  d.showModal();
}

function askSampling(id, p) {
  const d = dialogFor(id, "The server asks for an LLM completion");
  d.addEventListener("cancel", (e) => {
    e.preventDefault();
    answer(id, {});
  });
  if (p.systemPrompt) d.append(el("p", { text: `System: ${p.systemPrompt}` }));
  for (const m of p.messages || []) {
    const blocks = Array.isArray(m.content) ? m.content : [m.content || {}];
    for (const b of blocks) d.append(el("p", {}, el("strong", { text: `${m.role}: ` }), b.type === "text" ? b.text : `[${b.type}]`));
  }
  d.append(el("p", { class: "note", text: `Up to ${p.maxTokens} tokens.` }));
  const rid = `ask-${id}-response`;
  const response = el("textarea", { id: rid, required: true });
  const form = el("form", {}, el("label", { for: rid, text: "Response" }), response, buttons(["Send", "submit"], ["Reject", "button", () => answer(id, {})]));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    answer(id, { text: response.value });
  });
  d.append(form);
  d.showModal();
}

// ---- the event stream ----

function onEvent(e) {
  switch (e.kind) {
    case "message":
      return onMessage(e);
    case "progress":
      return onProgress(e);
    case "view-post":
      if (currentView && e.view === currentView.id) postToView(currentView, e.text);
      return;
    case "view-event":
      return onViewEvent(e);
    case "task":
      return onTask(e);
    case "task-end":
      return onTaskEnd(e);
    case "note":
      return addLog({ level: "notice", logger: "mcpkit dev", data: e.text }, "host");
    case "ask":
      if (e.method === "elicitation/create") return askElicitation(e.id, e.params || {});
      if (e.method === "sampling/createMessage") return askSampling(e.id, e.params || {});
      return;
    case "answered": {
      const d = dialogs.get(e.id);
      if (d) {
        dialogs.delete(e.id);
        d.close();
        d.remove();
      }
      return;
    }
    case "connected":
      if (e.generation !== generation) {
        // The views of the old connection are closed with it.
        if (currentView) {
          currentView.frame.remove();
          currentView = null;
          $("app-note").textContent = "Reconnected: call the tool again to see its view.";
        }
        scheduleLoad();
      }
      return;
    case "disconnected":
      return setStatus(`Disconnected: ${e.reason}`, true);
    case "building":
      $("build").hidden = false;
      $("build-status").textContent = "Building…";
      return;
    case "build":
      $("build").hidden = e.ok;
      $("build-status").textContent = e.ok ? "Built." : "The build failed; the server keeps running.";
      $("build-output").textContent = e.output || "";
      return;
  }
}

const events = new EventSource(withToken("/api/events"));
events.onmessage = (m) => {
  try {
    onEvent(JSON.parse(m.data));
  } catch (err) {
    console.warn("mcpkit dev: an event could not be shown", err);
  }
};
events.onerror = () => setStatus("The connection to mcpkit dev was lost; retrying…", true);
events.onopen = () => setStatus("Connecting…");
