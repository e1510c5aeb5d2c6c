#!/usr/bin/env node
// Interop checks of the Skills extension (io.modelcontextprotocol/skills, SEP-2640): the official
// MCP TypeScript SDK v2 host side (`SkillsClient` from `@modelcontextprotocol/client/ext/skills`)
// against `mcpkit serve` at protocol revision 2026-07-28. It lists the reference skills, gets
// one by URI, reads (and so verifies: size, digest, frontmatter) a SKILL.md and a supporting
// file, and reads a skill directory.
//
// Usage:
//   node skills_checks_v2.mjs stdio -- CMD [ARGS...]
//   node skills_checks_v2.mjs http URL
//
// Output as client_checks_v2.mjs: `PASS name` / `FAIL name: reason` per check, then
// `N passed, M failed` alone on the last line; exit code 0 when every check passed.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const PDF = "skill://pdf-processing/SKILL.md";
const NAMES = ["pdf-processing", "refunds", "git-workflow"];

let passed = 0;
let failed = 0;

function expect(cond, reason) {
  if (!cond) throw new Error(reason);
}

async function check(name, fn) {
  try {
    await fn();
    passed += 1;
    console.log(`PASS ${name}`);
  } catch (err) {
    failed += 1;
    const why = String(err?.message ?? err).split(/\s+/).filter(Boolean).join(" ");
    console.log(`FAIL ${name}: ${why}`);
  }
}

function transport(argv) {
  const [kind, ...rest] = argv;
  if (kind === "stdio") {
    const cmd = rest[0] === "--" ? rest.slice(1) : rest;
    return new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), env: { ...process.env }, stderr: "inherit" });
  }
  if (kind === "http" && rest.length === 1) return new StreamableHTTPClientTransport(new URL(rest[0]));
  console.error("usage: skills_checks_v2.mjs stdio -- CMD [ARGS...] | http URL");
  process.exit(2);
}

async function main() {
  const client = new Client(
    { name: "mcpkit-interop-ts2-skills", version: "1.0.0" },
    { capabilities: {}, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(transport(process.argv.slice(2)), { timeout: 25_000 });
  const skills = new SkillsClient(client);
  let entries = [];

  await check("supported", async () => {
    expect(skills.supported, "the server's skills extension is not seen");
    expect(skills.directoryRead, "directoryRead is not seen");
  });
  await check("list", async () => {
    const listing = await skills.list();
    entries = listing.skills;
    const names = entries.map((s) => s.frontmatter.name);
    expect(JSON.stringify(names) === JSON.stringify(NAMES), `names ${JSON.stringify(names)}`);
    expect(listing.invalid.length === 0, `invalid entries ${JSON.stringify(listing.invalid)}`);
  });
  await check("get", async () => {
    const { skill } = await skills.get(PDF);
    expect(skill.uri === PDF, `uri ${skill.uri}`);
    expect(Array.isArray(skill.resources) && skill.resources.length === 4, `resources ${JSON.stringify(skill.resources)}`);
  });
  await check("read_skill_md_verified", async () => {
    const entry = entries.find((s) => s.uri === PDF);
    expect(entry, "pdf-processing not listed");
    const file = await skills.read(entry);
    expect(file.verified, "SKILL.md not verified");
    expect(file.frontmatter?.name === "pdf-processing", `frontmatter ${JSON.stringify(file.frontmatter)}`);
    expect(file.body?.includes("# PDF processing"), `body ${JSON.stringify(file.body)}`);
  });
  await check("read_supporting_file_verified", async () => {
    const entry = entries.find((s) => s.uri === PDF);
    const file = await skills.read(entry, "references/FORMS.md");
    expect(file.verified, "FORMS.md not verified");
    expect(file.text?.startsWith("# Forms"), `text ${JSON.stringify(file.text)}`);
  });
  await check("read_directory", async () => {
    const { resources } = await skills.readDirectory("skill://pdf-processing");
    const dirs = resources.filter((r) => r.mimeType === "inode/directory").map((r) => r.uri);
    expect(dirs.includes("skill://pdf-processing/references"), `children ${JSON.stringify(resources)}`);
  });
  await check("unknown_skill_is_invalid_params", async () => {
    try {
      await skills.get("skill://nope/SKILL.md");
    } catch (err) {
      expect(err?.code === -32602, `code ${err?.code}: ${err?.message}`);
      return;
    }
    throw new Error("skills/get of an unknown skill succeeded");
  });

  await client.close();
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
