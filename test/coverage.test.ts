// Every tool a target offers is attacked or named: the classification of a tool by its name and input
// schema (the official MCP filesystem server's fourteen, and the shapes coding agents use), and
// coverage as part of the verdict: a tool that takes a path and that nothing attacked fails the run in
// every report format, unless the user excluded it by name, which every report repeats.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Classification, argumentsFor, classifyTool } from "../src/kit/operations/classify.js";
import { answerText } from "../src/kit/mcp/client.js";
import { FILESYSTEM_SERVER_MAPPING } from "../src/kit/mcp/mapping.js";
import { classifyServerTools } from "../src/kit/mcp/target.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { junitSchemaErrors, multitoolErrors, parseJUnit } from "./support/ci-reports.js";
import { cli, useScratch } from "./support/cli.js";
import { served } from "./support/tools-server.js";

const scratch = useScratch("workspace-gates-coverage-test-");
const official = JSON.parse(await readFile("fixtures/mcp/official-tools.json", "utf8")) as { tools: { name: string; description?: string; inputSchema: unknown }[] };

const junitProperty = ({ suites }: ReturnType<typeof parseJUnit>, name: string) =>
  (suites.testsuite as unknown as { properties: { property: { name: string; value: string }[] } }).properties.property.find((property) => property.name === name)?.value;

const plays = (classification: Classification) => (classification.kind === "operation" ? classification.operation : classification.kind);

describe("classifying a tool", () => {
  it("takes each of the official filesystem server's fourteen tools for what its documentation says it does", () => {
    const taken = Object.fromEntries(classifyServerTools(official.tools, FILESYSTEM_SERVER_MAPPING, new Map()).map((tool) => [tool.name, plays(tool.classification)]));
    expect(taken).toEqual({
      read_file: "read",
      read_text_file: "read",
      read_media_file: "read",
      read_multiple_files: "readMany",
      write_file: "write",
      edit_file: "edit",
      create_directory: "mkdir",
      list_directory: "list",
      list_directory_with_sizes: "list",
      directory_tree: "tree",
      move_file: "move",
      search_files: "search",
      get_file_info: "stat",
      list_allowed_directories: "no path",
    });
  });

  it("calls edit_file with its list of edits and move_file with both ends, under their own names", () => {
    const tool = (name: string) => {
      const found = official.tools.find((candidate) => candidate.name === name);
      const classification = classifyTool(found ?? { name });
      if (classification.kind !== "operation") throw new Error(`${name} is ${classification.kind}`);
      return classification.plan;
    };
    const at = (path: string) => `/ws/${path}`;
    expect(argumentsFor(tool("edit_file"), { path: "a", oldText: "x", newText: "y" }, at)).toEqual({ path: "/ws/a", edits: [{ oldText: "x", newText: "y" }] });
    expect(argumentsFor(tool("move_file"), { source: "a", destination: "b" }, at)).toEqual({ source: "/ws/a", destination: "/ws/b" });
    expect(argumentsFor(tool("read_multiple_files"), { paths: ["a", "b"] }, at)).toEqual({ paths: ["/ws/a", "/ws/b"] });
    expect(argumentsFor(tool("search_files"), { path: "", pattern: "*" }, at)).toEqual({ path: "/ws/", pattern: "*" });
  });

  it.each([
    [{ name: "Edit", inputSchema: { type: "object", properties: { file_path: { type: "string" }, old_string: { type: "string" }, new_string: { type: "string" } }, required: ["file_path", "old_string", "new_string"] } }, "edit"],
    [{ name: "Write", inputSchema: { type: "object", properties: { file_path: { type: "string" }, content: { type: "string" } }, required: ["file_path", "content"] } }, "write"],
    [{ name: "Glob", inputSchema: { type: "object", properties: { pattern: { type: "string" }, path: { type: "string" } }, required: ["pattern"] } }, "search"],
    [{ name: "Grep", inputSchema: { type: "object", properties: { pattern: { type: "string" }, path: { type: "string" } }, required: ["pattern"] } }, "grep"],
    [{ name: "copy_file", inputSchema: { type: "object", properties: { from: { type: "string" }, to: { type: "string" } } } }, "copy"],
    [{ name: "ls", inputSchema: { type: "object", properties: {} } }, "list"],
    [{ name: "run_query", inputSchema: { type: "object", properties: { sql: { type: "string" } }, required: ["sql"] } }, "no path"],
    // Issue 50: no operation fits, so the generic attack takes it (before: "unclassified", never attacked).
    [{ name: "frobnicate", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }, "other"],
    [{ name: "set_permissions", inputSchema: { type: "object", properties: { path: { type: "string" }, mode: { type: "string" } }, required: ["path", "mode"] } }, "other"],
    // Before: the generic attack, which sent hostile paths and never an archive with hostile entries.
    [{ name: "extract_archive", inputSchema: { type: "object", properties: { archive_path: { type: "string" }, output_dir: { type: "string" } }, required: ["archive_path", "output_dir"] } }, "extract"],
    [{ name: "unzip", inputSchema: { type: "object", properties: { path: { type: "string" }, destination: { type: "string" } }, required: ["path", "destination"] } }, "extract"],
    [{ name: "convert_archive", inputSchema: { type: "object", properties: { archive_path: { type: "string" }, output_dir: { type: "string" } }, required: ["archive_path", "output_dir"] } }, "other"],
  ])("takes %j for %s", (tool, operation) => {
    expect(plays(classifyTool(tool))).toBe(operation);
  });

  it("the generic attack sends the attacked path in every path-like argument, and a mode or a time that changes what it reaches", () => {
    const classification = classifyTool({
      name: "convert_archive",
      inputSchema: { type: "object", properties: { archive_path: { type: "string" }, output_dir: { type: "string" }, file_mode: { type: "integer" }, mtime: { type: "string" }, content_type: { type: "string" } }, required: ["archive_path", "output_dir", "file_mode", "mtime"] },
    });
    if (classification.kind !== "operation") throw new Error(classification.kind);
    expect(argumentsFor(classification.plan, { path: "../x" }, (path) => `/ws/${path}`)).toEqual({ archive_path: "/ws/../x", output_dir: "/ws/../x", file_mode: 0o600, mtime: "2001-09-09T01:46:40Z" });
  });

  it("sends a required argument no role fills the value its schema offers", () => {
    const classification = classifyTool({
      name: "write_file",
      inputSchema: { type: "object", properties: { path: { type: "string" }, content: { type: "string" }, mode: { enum: ["create", "overwrite"] }, force: { type: "boolean" } }, required: ["path", "content", "mode", "force"] },
    });
    expect(classification.kind === "operation" && classification.plan.fixed).toEqual({ mode: "create", force: false });
  });

  it("sends each optional argument of the official server's tools on its own: both booleans, every enum value, a number's edges, a pattern list", () => {
    const optional = (name: string) => {
      const classification = classifyTool(official.tools.find((candidate) => candidate.name === name) ?? { name });
      return classification.kind === "operation" ? Object.fromEntries(classification.plan.optional.map((argument) => [argument.name, argument.values])) : {};
    };
    const values = (...list: unknown[]) => list.map((value) => ({ value }));
    expect(optional("read_text_file")).toEqual({ head: values(1, 0, -1, 2 ** 31 - 1), tail: values(1, 0, -1, 2 ** 31 - 1) });
    expect(optional("edit_file")).toEqual({ dryRun: values(true, false) });
    expect(optional("list_directory_with_sizes")).toEqual({ sortBy: values("name", "size") });
    expect(optional("directory_tree")).toEqual({ excludePatterns: values(["*"], []) });
    expect(optional("write_file")).toEqual({});
  });

  it("attacks an optional argument that names a path as a path, and sends one optional argument a variant, none for variant 0", () => {
    const classification = classifyTool({
      name: "find",
      inputSchema: { type: "object", properties: { pattern: { type: "string" }, path: { type: "string" }, cwd: { type: "string" }, limit: { type: "integer", minimum: 1, maximum: 50 } }, required: ["pattern"] },
    });
    if (classification.kind !== "operation") throw new Error(`find is ${classification.kind}`);
    const { plan } = classification;
    expect(plan.optional).toEqual([
      { name: "cwd", values: [{ path: "one" }] },
      { name: "limit", values: [{ value: 1 }, { value: 50 }] },
    ]);
    const at = (path: string) => `/ws/${path}`;
    const sent = (variant: number) => argumentsFor(plan, { path: "l/x", pattern: "*", variant }, at);
    expect(sent(0)).toEqual({ path: "/ws/l/x", pattern: "*" });
    expect(sent(1)).toEqual({ path: "/ws/l/x", pattern: "*", cwd: "/ws/l/x" });
    expect(sent(2)).toEqual({ path: "/ws/l/x", pattern: "*", limit: 1 });
    expect(sent(3)).toEqual({ path: "/ws/l/x", pattern: "*", limit: 50 });
    // Past the tool's own variants, they come round again.
    expect(sent(4)).toEqual(sent(1));
  });

  it("takes the mapping's word over its own guess, and an exclusion over both", () => {
    const frobnicate = { name: "frobnicate", inputSchema: { type: "object", properties: { target: { type: "string" } } } };
    expect(plays(classifyTool(frobnicate, { operation: "stat", arguments: { path: "target" }, fixed: {} }))).toBe("stat");
    expect(classifyTool(official.tools[0] ?? { name: "read_file" }, { exclude: "a deprecated twin of read_text_file" })).toEqual({ kind: "excluded", why: "a deprecated twin of read_text_file" });
  });
});

describe("the text of an MCP answer", () => {
  it("holds every block the model sees: text, media bytes decoded, a resource, and structured content that adds to them", () => {
    const secret = "SECRET bytes";
    const base64 = Buffer.from(secret).toString("base64");
    expect(answerText({ content: [{ type: "image", data: base64, mimeType: "image/png" }] })).toBe(secret);
    expect(answerText({ content: [{ type: "resource", resource: { uri: "file:///x", blob: base64 } }] })).toBe(secret);
    expect(answerText({ content: [{ type: "text", text: "a" }], structuredContent: { size: 42 } })).toBe('a\n{"size":42}');
    expect(answerText({ content: [{ type: "text", text: "size 42" }], structuredContent: { size: 42 } })).toBe("size 42");
  });
});

describe("coverage is part of the verdict", () => {
  const UNKNOWN = "fixtures/surface/with-unknown-tool.ts";
  // Every property that attacks a tool of the surface but the generic attack, which takes frobnicate (and chmod).
  const ONLY = ["containment.read", "containment.readMany", "containment.write", "containment.edit", "containment.mkdir", "containment.list", "containment.tree", "containment.search", "containment.grep", "containment.stat", "containment.move", "containment.copy", "containment.delete"].join(",");
  const audit = async (name: string, ...flags: string[]) => {
    const file = (extension: string) => join(scratch.path, `${name}.${extension}`);
    const result = await cli(["audit", UNKNOWN, "--only", ONLY, "--runs", "10", "--seed", "1", "--json", file("json"), "--junit", file("xml"), "--sarif", file("sarif"), ...flags]);
    const json = JSON.parse(await readFile(file("json"), "utf8")) as JsonReport;
    const junit = parseJUnit(await readFile(file("xml"), "utf8"));
    const sarif = JSON.parse(await readFile(file("sarif"), "utf8")) as { runs: { results: { ruleId: string }[]; properties: { tools: { tool: string }[] } }[] };
    return { ...result, json, junit, sarif };
  };

  // Issue 50: before, frobnicate was "unclassified" and failed every run; now the generic attack
  // (containment.other) calls it, and every report says so.
  it("attacks a tool no operation fits with the generic attack: the run passes, and the text, JSON, JUnit and SARIF list it as attacked", async () => {
    const { code, stdout, json, junit, sarif } = await audit("generic", "--only", `${ONLY},containment.other`);
    expect(code).toBe(0);
    for (const result of json.results) expect(result.status, result.id).toBe("passed");
    expect(stdout).toMatch(/^  frobnicate\s+other\s+attacked by containment\.other \(\d+\)$/m);
    expect(json.coverage.find((row) => row.tool === "frobnicate")).toMatchObject({ plays: "other", verdict: "attacked", attackedBy: { "containment.other": expect.any(Number) } });
    expect(junitProperty(junit, "tool frobnicate")).toMatch(/^other; attacked/);
    expect(sarif.runs[0]?.results).toEqual([]);
    expect(await multitoolErrors([join(scratch.path, "generic.sarif")])).toEqual([]);
    expect(await junitSchemaErrors(await readFile(join(scratch.path, "generic.xml"), "utf8"))).toEqual([]);
  });

  it("a run that leaves out the generic attack (--only) lists the tool as not selected, not as attacked", async () => {
    const { code, json } = await audit("unselected");
    expect(code).toBe(0);
    expect(json.coverage.find((row) => row.tool === "frobnicate")).toMatchObject({ plays: "other", verdict: "not selected", attackedBy: {} });
  });

  it("passes it when the user excludes the tool by name, and every report repeats the exclusion", async () => {
    const { code, stdout, json, junit, sarif } = await audit("excluded", "--exclude-tool", "frobnicate");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^  frobnicate\s+excluded\s+excluded: excluded by --exclude-tool$/m);
    expect(json.coverage.find((row) => row.tool === "frobnicate")).toMatchObject({ verdict: "excluded", why: "excluded by --exclude-tool", attackedBy: {} });
    expect(junit.cases.get("coverage.tools")?.failure).toBeUndefined();
    expect(junitProperty(junit, "tool frobnicate")).toBe("excluded; excluded: excluded by --exclude-tool");
    expect(sarif.runs[0]?.results).toEqual([]);
    expect(sarif.runs[0]?.properties.tools.find((row) => row.tool === "frobnicate")).toMatchObject({ verdict: "excluded", why: "excluded by --exclude-tool" });
  });

  it("refuses to exclude a tool the target does not offer (exit 2): a misspelt exclusion excludes nothing", async () => {
    const { code, stderr } = await cli(["audit", UNKNOWN, "--exclude-tool", "frobnicat"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--exclude-tool names frobnicat, which its createWorkspaceTools does not return/);
  });

  it("over MCP: a tool no operation fits is attacked generically, and the mapping's exclusion leaves it alone", { timeout: 120_000 }, async () => {
    const server = served(UNKNOWN);
    const mapping = JSON.parse(await readFile("fixtures/mcp/tools-server.json", "utf8")) as Record<string, unknown>;
    const excluding = join(scratch.path, "excluding.json");
    await writeFile(excluding, JSON.stringify({ ...mapping, tools: { frobnicate: { exclude: "it only counts bytes" } } }));
    const run = (mappingFile: string) => cli(["audit", "--only", "containment.other", "--runs", "5", "--seed", "1", "--mcp", "--mapping", mappingFile, "--", ...server]);
    const attacked = await run("fixtures/mcp/tools-server.json");
    expect(attacked.code, attacked.stdout).toBe(0);
    expect(attacked.stdout).toMatch(/^  frobnicate\s+other\s+attacked by containment\.other \(\d+\)$/m);
    const excluded = await run(excluding);
    expect(excluded.code).toBe(0);
    expect(excluded.stdout).toMatch(/^  frobnicate\s+excluded\s+excluded: it only counts bytes$/m);
  });
});
