"use strict";
// Forms generated from JSON Schemas: a tool's input schema, an elicitation's requested schema,
// a prompt's arguments. Every input has a <label> naming its argument; required fields are
// marked and carry `required`; defaults prefill; descriptions describe the input. Everything
// from the server is set as text (textContent, value), never as HTML.

let fieldIds = 0;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") e.textContent = v;
    else if (k === "class") e.className = v;
    else if (k in e && typeof v !== "string") e[k] = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

// `schema` with a local `$ref` (`#/$defs/X`, `#/definitions/X`) replaced by its target.
function resolveRef(schema, root, depth) {
  let s = schema || {};
  for (let i = 0; i < 8 && typeof s.$ref === "string" && s.$ref.startsWith("#/"); i++) {
    let t = root;
    for (const part of s.$ref.slice(2).split("/")) t = t && t[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    if (!t || typeof t !== "object") break;
    const rest = Object.assign({}, s);
    delete rest.$ref;
    s = Object.assign({}, t, rest);
  }
  // `anyOf: [X, {type: null}]` (an Option<X>) is X.
  const alts = s.anyOf || s.oneOf;
  if (Array.isArray(alts) && !s.type && depth < 8) {
    const nonNull = alts.filter((a) => a && a.type !== "null");
    if (nonNull.length === 1) return resolveRef(Object.assign({}, s, nonNull[0], { anyOf: undefined, oneOf: undefined }), root, depth + 1);
  }
  return s;
}

function typeOf(s) {
  if (Array.isArray(s.type)) return s.type.find((t) => t !== "null") || "string";
  if (s.type) return s.type;
  if (s.properties) return "object";
  if (s.enum) return "string";
  return null;
}

// The choices of an enum field: [{value, title}], from `enum` (+ `enumNames`) or `oneOf`/`anyOf`
// of `const`s (titled enums); null when it has none.
function choicesOf(s) {
  if (Array.isArray(s.enum)) {
    return s.enum.map((v, i) => ({ value: v, title: Array.isArray(s.enumNames) && s.enumNames[i] != null ? String(s.enumNames[i]) : String(v) }));
  }
  const alts = s.oneOf || s.anyOf;
  if (Array.isArray(alts) && alts.length && alts.every((a) => a && "const" in a)) {
    return alts.map((a) => ({ value: a.const, title: a.title != null ? String(a.title) : String(a.const) }));
  }
  return null;
}

// The label of a field: the argument's name (the required mark is hidden from the accessible
// name; `required` says it).
function labelFor(id, name, required) {
  return el("label", { for: id }, name, required ? el("span", { class: "req", "aria-hidden": "true", text: "*" }) : null);
}

function describe(s, input, wrap) {
  if (s.description == null) return;
  const id = input.id + "-desc";
  input.setAttribute("aria-describedby", id);
  wrap.append(el("small", { id, class: "desc", text: String(s.description) }));
}

// A field for `schema` named `name`; returns {node, read} where read() gives
// {present, value} or throws an Error naming the problem.
function buildField(name, schema, root, required, depth) {
  const s = resolveRef(schema, root, 0);
  const id = "f" + ++fieldIds;
  const type = typeOf(s);
  const title = s.title != null && s.title !== name ? `${name} (${s.title})` : name;
  const choices = choicesOf(s);
  if (type === "object" && s.properties && depth < 6) {
    const fs = el("fieldset", { id }, el("legend", {}, title, required ? el("span", { class: "req", "aria-hidden": "true", text: "*" }) : null));
    if (s.description != null) fs.append(el("small", { class: "desc", text: String(s.description) }));
    const inner = buildObject(s, root, fs, depth + 1);
    return {
      node: fs,
      read() {
        const v = inner();
        return { present: required || Object.keys(v).length > 0, value: v };
      },
    };
  }
  const wrap = el("div", { class: "field" });
  if (type === "boolean") {
    const input = el("input", { id, type: "checkbox", name });
    input.checked = s.default === true;
    wrap.append(input, " ", labelFor(id, title, required));
    describe(s, input, wrap);
    return { node: wrap, read: () => ({ present: true, value: input.checked }) };
  }
  if (type === "array" && s.items) {
    const items = resolveRef(s.items, root, 0);
    const itemChoices = choicesOf(items);
    if (itemChoices) {
      // Multi-select enum: one checkbox per choice, in a group named by the argument.
      const fs = el("fieldset", { id, role: "group" }, el("legend", {}, title, required ? el("span", { class: "req", "aria-hidden": "true", text: "*" }) : null));
      const boxes = itemChoices.map((c, i) => {
        const cid = `${id}-${i}`;
        const box = el("input", { id: cid, type: "checkbox" });
        box.checked = Array.isArray(s.default) && s.default.some((d) => d === c.value);
        fs.append(el("div", {}, box, " ", el("label", { for: cid, text: c.title })));
        return [box, c.value];
      });
      if (s.description != null) fs.append(el("small", { class: "desc", text: String(s.description) }));
      return {
        node: fs,
        read() {
          const v = boxes.filter(([b]) => b.checked).map(([, value]) => value);
          return { present: required || v.length > 0, value: v };
        },
      };
    }
    return buildArray(name, title, s, items, root, required, depth, id);
  }
  let input;
  if (choices) {
    input = el("select", { id, name, required });
    if (!required || s.default === undefined) input.append(el("option", { value: "", text: required ? "(choose)" : "(none)" }));
    choices.forEach((c, i) => {
      const o = el("option", { value: String(i), text: c.title });
      if (s.default !== undefined && c.value === s.default) o.selected = true;
      input.append(o);
    });
  } else if (type === "number" || type === "integer") {
    input = el("input", { id, name, type: "number", step: type === "integer" ? "1" : "any", required });
    if (typeof s.minimum === "number") input.min = String(s.minimum);
    if (typeof s.maximum === "number") input.max = String(s.maximum);
    if (typeof s.default === "number") input.value = String(s.default);
  } else if (type === "string") {
    const kind = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" }[s.format] || "text";
    if (typeof s.maxLength !== "number" || s.maxLength > 200 || kind !== "text") {
      input = el("input", { id, name, type: kind, required });
    } else {
      input = el("input", { id, name, type: "text", required, maxlength: String(s.maxLength) });
    }
    if (typeof s.default === "string") input.value = s.default;
  } else {
    // No simple type (a union, `any`): JSON.
    input = el("textarea", { id, name, required, placeholder: "JSON" });
    if (s.default !== undefined) input.value = JSON.stringify(s.default);
  }
  wrap.append(labelFor(id, title, required), input);
  describe(s, input, wrap);
  return {
    node: wrap,
    read() {
      const raw = input.value;
      if (raw === "") {
        if (required) throw new Error(`${name} is required`);
        return { present: false };
      }
      if (choices) return { present: true, value: choices[Number(raw)].value };
      if (type === "integer") {
        if (!/^-?\d+$/.test(raw.trim())) throw new Error(`${name} must be an integer`);
        return { present: true, value: parseInt(raw, 10) };
      }
      if (type === "number") {
        const n = Number(raw);
        if (raw.trim() === "" || !Number.isFinite(n)) throw new Error(`${name} must be a number`);
        return { present: true, value: n };
      }
      if (type === "string") return { present: true, value: raw };
      try {
        return { present: true, value: JSON.parse(raw) };
      } catch (e) {
        throw new Error(`${name} is not JSON: ${e.message}`);
      }
    },
  };
}

// An array of non-enum items: a list of item fields with "Add" and "Remove" buttons.
function buildArray(name, title, s, items, root, required, depth, id) {
  const fs = el("fieldset", { id }, el("legend", {}, title, required ? el("span", { class: "req", "aria-hidden": "true", text: "*" }) : null));
  if (s.description != null) fs.append(el("small", { class: "desc", text: String(s.description) }));
  const list = el("div");
  const rows = [];
  const add = (value) => {
    const field = buildField(`${name}[${rows.length}]`, value === undefined ? items : Object.assign({}, items, { default: value }), root, true, depth + 1);
    const row = el("div", { class: "array-item" }, field.node);
    const entry = { row, field };
    const remove = el("button", { type: "button", text: "Remove", "aria-label": `Remove ${name} item` });
    remove.addEventListener("click", () => {
      rows.splice(rows.indexOf(entry), 1);
      row.remove();
    });
    row.append(remove);
    rows.push(entry);
    list.append(row);
  };
  if (Array.isArray(s.default)) s.default.forEach(add);
  const addButton = el("button", { type: "button", text: `Add ${name} item` });
  addButton.addEventListener("click", () => add());
  fs.append(list, addButton);
  return {
    node: fs,
    read() {
      const v = rows.map((r) => r.field.read()).filter((r) => r.present).map((r) => r.value);
      return { present: required || v.length > 0, value: v };
    },
  };
}

// The fields of an object schema appended to `container`; returns read() → the object.
function buildObject(schema, root, container, depth) {
  const s = resolveRef(schema, root, 0);
  const required = Array.isArray(s.required) ? s.required : [];
  const fields = Object.entries(s.properties || {}).map(([name, prop]) => {
    const f = buildField(name, prop, root, required.includes(name), depth || 0);
    container.append(f.node);
    return [name, f];
  });
  return () => {
    const out = {};
    for (const [name, f] of fields) {
      const r = f.read();
      if (r.present) out[name] = r.value;
    }
    return out;
  };
}

// A form for `schema` in `container` (emptied first); returns read() → the arguments object,
// throwing an Error that names the first bad field.
function schemaForm(schema, container) {
  container.replaceChildren();
  const root = schema || {};
  if (!root.properties || Object.keys(root.properties).length === 0) {
    container.append(el("p", { class: "note", text: "No arguments." }));
  }
  return buildObject(root, root, container, 0);
}
