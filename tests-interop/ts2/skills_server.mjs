#!/usr/bin/env node
// A Skills extension server (io.modelcontextprotocol/skills, SEP-2640) built on the official MCP
// TypeScript SDK v2 (`SkillsExtension` from `@modelcontextprotocol/server/ext/skills`), over
// stdio, serving two skills from memory: `tidy` (SKILL.md and references/RULES.md) and
// `acme/notes` (SKILL.md only). The mcpkit client lists, loads and reads them, verified.
//
// Usage: node skills_server.mjs stdio

import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { SkillsExtension, memorySkillFiles } from "@modelcontextprotocol/server/ext/skills";

export const FILES = {
  "tidy/SKILL.md": "---\nname: tidy\ndescription: Keep the workspace tidy\nlicense: MIT\n---\n\nRead references/RULES.md.\n",
  "tidy/references/RULES.md": "# Rules\n\nPut things back.\n",
  "acme/notes/SKILL.md": "---\nname: notes\ndescription: Take meeting notes\n---\n\nOne line per decision.\n",
};

if (process.argv[2] !== "stdio") {
  console.error("usage: node skills_server.mjs stdio");
  process.exit(2);
}

const catalog = await SkillsExtension.load(memorySkillFiles(FILES), { strict: true });
serveStdio(
  () => {
    const server = new McpServer({ name: "ts2-skills-server", version: "1.0.0" }, { capabilities: { resources: {} } });
    catalog.attach(server);
    return server;
  },
  { onerror: (error) => console.error("stdio:", error) },
);
