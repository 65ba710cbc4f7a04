// `audit --list-tools`: the target started, how the audit takes each of its tools printed, and nothing
// attacked (issue 45), for a module and for an MCP server with its mapping.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderToolList } from "../src/kit/audit/reports/tool-list.js";
import { FILESYSTEM_SERVER_MAPPING } from "../src/kit/mcp/mapping.js";
import { classifyServerTools } from "../src/kit/mcp/target.js";
import { cli, useScratch } from "./support/cli.js";

const scratch = useScratch("workspace-gates-list-tools-test-");

const SERVER = ["--mcp", "--mapping", "fixtures/mcp/tools-server.json", "--", "node", "--import", "tsx", "fixtures/mcp/tools-server.ts"];

/** The rows of the table, each tool with its operation, what decided it and its arguments or why none. */
function rows(stdout: string): Map<string, { operation: string; by: string; detail: string }> {
  const lines = stdout.split("\n");
  const header = lines.findIndex((line) => line.startsWith("tool "));
  const body = lines.slice(header + 1).filter((line) => line !== "");
  return new Map(body.map((line) => {
    const [tool = "", operation = "", by = "", ...detail] = line.split(/ {2,}/);
    return [tool, { operation, by, detail: detail.join("  ") }];
  }));
}

describe("audit --list-tools", () => {
  it("prints how a module's tools are taken, by their names, with each role's argument, and attacks none", async () => {
    const { code, stdout, stderr } = await cli(["audit", "fixtures/surface/surface.ts", "--list-tools", "--exclude-tool", "copy"]);
    expect(code, stderr).toBe(0);
    const table = rows(stdout);
    // The contract's names (docs/contract.md, "Further tools"), each taken for its operation by name.
    const byName = { read: "read", read_many: "readMany", write: "write", edit: "edit", mkdir: "mkdir", ls: "list", tree: "tree", find: "search", grep: "grep", stat: "stat", move: "move", delete: "delete" };
    for (const [tool, operation] of Object.entries(byName)) expect(table.get(tool), tool).toMatchObject({ operation, by: "name" });
    expect(table.get("move")?.detail).toBe("source: source, destination: destination");
    expect(table.get("edit")?.detail).toBe("path: path, oldText: oldText, newText: newText");
    expect(table.get("bash")).toMatchObject({ operation: "none", detail: expect.stringMatching(/^takes no path: /) });
    expect(table.get("copy")).toMatchObject({ operation: "none", detail: "excluded: excluded by --exclude-tool" });
    // Nothing ran: no property row, no verdict.
    expect(stdout).not.toMatch(/^audit: |passed|FAILED/m);
  });

  it("says so of a module without tools", async () => {
    const module = join(scratch.path, "inside-only.mjs");
    await writeFile(module, "export const isInside = () => false;\n");
    const { code, stdout } = await cli(["audit", module, "--list-tools"]);
    expect(code).toBe(0);
    expect(stdout).toBe(`${module} offers no tools: only the properties of its exports apply\n`);
  });

  it("starts an MCP server and prints how each tool it lists is taken: by the mapping, by name, or not at all", async () => {
    const { code, stdout, stderr } = await cli(["audit", "--list-tools", ...SERVER, "fixtures/surface/with-unknown-tool.ts", "{root}"]);
    expect(code, stderr).toBe(0);
    const table = rows(stdout);
    // fixtures/mcp/tools-server.json names read, write and mkdir; the rest go by their names; frobnicate by its schema.
    for (const tool of ["read", "write", "mkdir"]) expect(table.get(tool)?.by, tool).toBe("mapping");
    expect(table.get("ls")).toMatchObject({ operation: "list", by: "name", detail: "path: path" });
    // No operation fits frobnicate: the generic attack takes it (issue 50), the mapping may still say what it does.
    expect(table.get("frobnicate")).toMatchObject({ operation: "other", by: "schema", detail: "path: path" });
    expect(table.get("chmod")).toMatchObject({ operation: "other", by: "name", detail: 'path: path; always sends mode = "600"' });
    expect(table.has("bash"), "bash over MCP is the audit's own shell, not a tool of the server").toBe(false);
  }, 60_000);

  it("says a tool plays its role by the official server's name, not by a mapping, when no mapping named it", async () => {
    const official = JSON.parse(await readFile("fixtures/mcp/official-tools.json", "utf8")) as { tools: { name: string; inputSchema: object }[] };
    const unmapped = rows(renderToolList("server", classifyServerTools(official.tools, FILESYSTEM_SERVER_MAPPING, new Map())));
    for (const tool of ["read_text_file", "write_file", "create_directory"]) expect(unmapped.get(tool)?.by, tool).toBe("official name");
    expect([...unmapped.values()].map(({ by }) => by)).not.toContain("mapping");
    const named = { ...FILESYSTEM_SERVER_MAPPING, read: { ...FILESYSTEM_SERVER_MAPPING.read, named: true } };
    const mapped = rows(renderToolList("server", classifyServerTools(official.tools, named, new Map())));
    expect(mapped.get("read_text_file")?.by).toBe("mapping");
    expect(mapped.get("write_file")?.by).toBe("official name");
  });

  it("exits 2 on a server that does not start, and on a flag of a run beside it, naming why in one line", async () => {
    const dead = await cli(["audit", "--list-tools", "--mcp", "--", "node", "-e", "process.exit(3)"]);
    expect(dead.code).toBe(2);
    expect(dead.stderr).toMatch(/^audit: cannot load the MCP server node -e process\.exit\(3\): the MCP server did not start/);
    const mixed = await cli(["audit", "fixtures/surface/surface.ts", "--list-tools", "--only", "containment.read", "--json", join(scratch.path, "x.json")]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr.split("\n")[0]).toBe("audit: --list-tools starts the target and stops: it takes no --only, --json");
  }, 60_000);
});
