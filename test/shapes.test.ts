// Paths wherever a schema carries them (issue 50): a tool whose paths are the items of a list of
// objects, one nested object, the file headers of a patch or a file:// URI is classified for what it
// does and attacked there, each item of a list attacked first and last alike. The correct twin
// (fixtures/shapes/shapes.ts) passes; each planted bug dies at the default budget at seed 1, in process
// and over MCP (seeds 1 to 20: test/sweeps/shapes.sweep.ts).
import { afterAll, describe, expect, it } from "vitest";
import { SHAPES_MAPPING, SHAPE_VARIANTS } from "../fixtures/shapes/catalog.js";
import { patchFiles } from "../fixtures/shapes/shapes.js";
import { disposeSandboxes } from "../src/kit/audit/runner/property.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { fileUri, patchText } from "../src/kit/operations/carriers.js";
import { type ArgumentPlan, type ToolDescription, argumentsFor, classifyTool } from "../src/kit/operations/classify.js";
import { parseMapping } from "../src/kit/mcp/mapping.js";
import { RESOURCES_READ, resourceSurfaces, resourceUri, templateSurface } from "../src/kit/mcp/resources.js";
import { loadTarget, offeredTools } from "../src/kit/operations/target.js";
import { surface } from "../src/kit/operations/surface.js";
import { renderToolList } from "../src/kit/audit/reports/tool-list.js";
import { coverageRows } from "../src/kit/audit/coverage.js";
import { MAPPING_FILE, defaultRuns, missedSeeds, overMcp, property } from "./support/surface.js";

afterAll(() => disposeSandboxes());

const SECURE = "fixtures/shapes/shapes.ts";

const object = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ type: "object", properties, required });
const string = { type: "string" };

function planOf(tool: ToolDescription): { operation: string; plan: ArgumentPlan } {
  const classification = classifyTool(tool);
  if (classification.kind !== "operation") throw new Error(`${tool.name} is ${classification.kind}: ${classification.why}`);
  return { operation: classification.operation, plan: classification.plan };
}

describe("a path carried inside another argument", () => {
  // Before issue 50: write_multiple_files was a readMany of `files` (sent lists of strings), and the
  // patch and URI tools took "no path".
  it.each([
    ["write_multiple_files", { files: { type: "array", items: object({ path: string, content: string }) } }, "write", "list"],
    ["read_multiple_files", { files: { type: "array", items: object({ path: string }) } }, "read", "list"],
    ["edit_files", { edits: { type: "array", items: object({ path: string, oldText: string, newText: string }) } }, "edit", "list"],
    ["copy_files", { operations: { type: "array", items: object({ from: string, to: string }) } }, "copy", "list"],
    ["read_file", { target: object({ path: string }) }, "read", "object"],
    ["apply_patch", { patch: string }, "write", "patch"],
    ["apply_diff", { diff: string }, "write", "patch"],
  ] as const)("%s is classified by what its items or text carry", (name, properties, operation, carrier) => {
    const found = planOf({ name, inputSchema: object(properties) });
    expect(found.operation).toBe(operation);
    expect(found.plan.carrier?.kind).toBe(carrier);
  });

  it("a list of strings stays a list of paths, and a path argument of its own wins over a carrier", () => {
    expect(planOf({ name: "read_multiple_files", inputSchema: object({ paths: { type: "array", items: string } }) }).plan.carrier).toBeUndefined();
    expect(planOf({ name: "edit_file", inputSchema: object({ path: string, edits: { type: "array", items: object({ oldText: string, newText: string }) } }) }).plan).toMatchObject({ roles: { path: "path" }, edits: "edits" });
  });

  it("sends the attacked item and the one beside it, the attacked one first or last, each with the item's other required fields", () => {
    const { plan } = planOf({ name: "write_multiple_files", inputSchema: object({ files: { type: "array", items: object({ path: string, content: string, encoding: { type: "string", enum: ["utf8"] } }) } }) });
    const input = { path: "../x", content: "m", beside: { path: "beside-1.txt", content: "m" } };
    const at = (path: string) => `/ws/${path}`;
    expect(argumentsFor(plan, input, at)).toEqual({ files: [{ encoding: "utf8", path: "/ws/../x", content: "m" }, { encoding: "utf8", path: "/ws/beside-1.txt", content: "m" }] });
    expect(argumentsFor(plan, { ...input, last: true }, at)).toEqual({ files: [{ encoding: "utf8", path: "/ws/beside-1.txt", content: "m" }, { encoding: "utf8", path: "/ws/../x", content: "m" }] });
    expect(argumentsFor(plan, { path: "../x", content: "m" }, at)).toEqual({ files: [{ encoding: "utf8", path: "/ws/../x", content: "m" }] });
  });

  it("writes the hostile path into a patch's headers, in the form the tool's description shows, and reads back as the twin parses it", () => {
    const envelope = planOf({ name: "apply_patch", description: "Apply a patch in the *** Begin Patch format", inputSchema: object({ patch: string }) }).plan;
    const sent = argumentsFor(envelope, { path: "../outside/x", content: "m\n", beside: { path: "a.txt", content: "m\n" }, last: true }, (path) => path);
    expect(sent.patch).toBe("*** Begin Patch\n*** Add File: a.txt\n+m\n*** Add File: ../outside/x\n+m\n*** End Patch\n");
    const unified = patchText("unified", [{ path: "a.txt", content: "m\n" }, { path: "/abs/../x", content: "m\n" }]);
    expect(unified).toBe("--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,1 @@\n+m\n--- /dev/null\n+++ /abs/../x\n@@ -0,0 +1,1 @@\n+m\n");
    expect(patchFiles(unified, "unified")).toEqual([{ path: "a.txt", content: "m\n" }, { path: "/abs/../x", content: "m\n" }]);
  });

  it("spells a path as a file:// URI when the argument's name or format says URI, raw, below the root when relative", () => {
    const { operation, plan } = planOf({ name: "read_resource", inputSchema: object({ uri: { type: "string", format: "uri" } }) });
    expect([operation, plan.spelling]).toEqual(["read", "file-uri"]);
    expect(argumentsFor(plan, { path: "../outside/a b%" }, (path) => path, "/ws")).toEqual({ uri: "file:///ws/../outside/a%20b%25" });
    expect(fileUri("/abs/x", "/ws")).toBe("file:///abs/x");
  });

  it("the mapping names a list, a patch and a URI for a tool whose schema does not say", () => {
    const mapping = parseMapping(
      JSON.stringify({
        tools: {
          save_all: { operation: "write", arguments: { items: "entries", path: "target", content: "body" } },
          patcher: { operation: "write", arguments: { patch: "input" }, patchForm: "unified" },
          fetch: { operation: "read", arguments: { path: "location" }, spelling: "file-uri" },
        },
      }),
      "m.json",
    );
    const classify = (name: string) => {
      const classification = classifyTool({ name, inputSchema: object({}) }, mapping.tools[name]);
      if (classification.kind !== "operation") throw new Error(classification.kind);
      return classification;
    };
    expect(argumentsFor(classify("save_all").plan, { path: "a", content: "m" }, (path) => path)).toEqual({ entries: [{ target: "a", body: "m" }] });
    expect(argumentsFor(classify("patcher").plan, { path: "a", content: "m\n" }, (path) => path)).toEqual({ input: "--- /dev/null\n+++ b/a\n@@ -0,0 +1,1 @@\n+m\n" });
    expect(argumentsFor(classify("fetch").plan, { path: "a" }, (path) => path, "/ws")).toEqual({ location: "file:///ws/a" });
    expect(classify("save_all").by).toBe("mapping");
    expect(() => parseMapping(JSON.stringify({ tools: { t: { operation: "write", arguments: { patch: "p" }, patchForm: "context" } } }), "m.json")).toThrow(/tools\.t\.patchForm must be one of "unified", "envelope"/);
  });
});

describe("how each carried path is shown", () => {
  it("--list-tools and the coverage table say where each tool's paths go", async () => {
    const offered = offeredTools(await loadTarget(SECURE));
    const listed = renderToolList("shapes", offered);
    expect(listed).toMatch(/write_multiple_files +write +schema +path: files\[\]\.path, content: files\[\]\.content; paths in each item of `files`/);
    expect(listed).toMatch(/apply_patch +write +schema +paths in the file headers of the patch `patch` \(\*\*\* Begin Patch\)/);
    expect(listed).toMatch(/apply_diff +write +schema +paths in the file headers of the patch `diff` \(unified\)/);
    expect(listed).toMatch(/read_uri +read +schema +path: uri; paths as file:\/\/ URIs/);
    const generic = classifyTool({ name: "convert_archive", inputSchema: object({ archive_path: string, output_dir: string }) });
    expect(renderToolList("x", [{ name: "convert_archive", classification: generic }])).toMatch(/^convert_archive +other +schema +path: archive_path; the same path in output_dir$/m);
    const rows = coverageRows(offered, [], undefined);
    expect(rows.find((row) => row.tool === "apply_diff")).toMatchObject({ plays: "write", verdict: "not attacked", why: expect.stringMatching(/^by schema, paths in the file headers of the patch `diff`/) });
  });
});

describe("an MCP server's resources", () => {
  // Before issue 50 a server's resources were never listed nor read.
  it("are surfaces that play read: resources/read and each template, excluded by name like a tool", () => {
    const resources = { listed: [], templates: [{ uriTemplate: "file:///{+path}", name: "file" }] };
    const surfaces = resourceSurfaces(resources, new Map([[templateSurface("file:///{+path}"), "read elsewhere"]]));
    expect(surfaces.map(({ name, classification }) => [name, classification.kind === "operation" ? `${classification.operation} by ${classification.by}` : classification.kind])).toEqual([
      [RESOURCES_READ, "read by resources"],
      ["resource template file:///{+path}", "excluded"],
    ]);
    expect(resourceSurfaces(undefined, new Map())).toEqual([]);
  });

  // Before: a template's first expression took the path, so notes://{vault}/{+note} was sent the path as
  // its vault and refused every call, and coverage called it attacked.
  it("a template of several variables is never called until the mapping places its path; the mapping's word is taken", () => {
    const resources = { listed: [], templates: [{ uriTemplate: "notes://{vault}/{+note}", name: "note" }, { uriTemplate: "db://{table}", name: "table" }] };
    const alone = resourceSurfaces(resources, new Map());
    expect(alone[1]?.classification).toMatchObject({ kind: "operation", by: "resources", plan: { unplaced: expect.stringMatching(/several variables \(vault, note\).*mapping's resources/) } });
    expect(surface(alone.map((tool) => ({ ...tool, call: async () => ({ content: "" }) }))).of("read").map((tool) => tool.name)).toEqual([RESOURCES_READ, "resource template db://{table}"]);
    const rows = coverageRows(alone, [{ id: "containment.read", status: "passed", calls: { [RESOURCES_READ]: 3 } }], undefined);
    expect(rows[1]).toMatchObject({ verdict: "not attacked", why: expect.stringMatching(/^by resources, never called: the template has several variables/) });
    const mapping = parseMapping(JSON.stringify({ resources: { "notes://{vault}/{+note}": { operation: "list", path: "note", fixed: { vault: "main" }, paths: "relative" }, "db://{table}": { exclude: "a database, not files" } } }), "m.json");
    const mapped = resourceSurfaces(resources, new Map(), mapping.resources);
    expect(mapped[1]?.classification).toEqual({ kind: "operation", operation: "list", by: "mapping", plan: { roles: { path: "note" }, fixed: { vault: "main" }, optional: [] } });
    expect(mapped[2]?.classification).toEqual({ kind: "excluded", why: "a database, not files" });
  });

  it("fill the mapped variable with the path and the others with their fixed values, by the template's operators", () => {
    const placed = { roles: { path: "note" }, fixed: { vault: "my vault" } };
    expect(resourceUri(templateSurface("notes://{vault}/{+note}"), "../outside/a b", "/ws", placed)).toBe("notes://my%20vault/../outside/a%20b");
    expect(resourceUri(templateSurface("file:///read{?vault,note}"), "../x", "/ws", placed)).toBe("file:///read?vault=my%20vault&note=../x");
    expect(resourceUri(templateSurface("notes://{vault}{/note}"), "a/../b", "/ws", placed)).toBe("notes://my%20vault/a/../b");
  });

  it.each([
    [{ "notes://{vault}/{+note}": { fixed: { vault: "main" } } }, /resources\.notes:\/\/\{vault\}\/\{\+note\}\.path must name the variable of the template that carries the path: it has several \(its variables: vault, note\)/],
    [{ "notes://{vault}/{+note}": { path: "file", fixed: { vault: "main" } } }, /\.path must name the variable of the template that carries the path \(its variables: vault, note\)/],
    [{ "notes://{vault}/{+note}": { path: "note" } }, /\.fixed must give vault a value: a URI without it names no resource/],
    [{ "notes://{vault}/{+note}": { path: "note", fixed: { vault: "main", page: "1" } } }, /\.fixed\.page is not another variable of the template/],
    [{ "notes://{vault}/{+note}": { path: "note", fixed: { vault: 1 } } }, /\.fixed\.vault must be a string/],
    [{ "notes://{+note}": { operation: "write" } }, /resources\.notes:\/\/\{\+note\}\.operation must be one of "read", "list", "tree", "stat": a resource is asked one path, by its URI/],
    [{ "notes://{+note}": { exclude: "x", path: "note" } }, /has "exclude" and other fields/],
    [{ "notes://all": { operation: "read" } }, /resources\.notes:\/\/all: a key is "resources\/read" or a URI template as the server lists it, with a \{variable\}/],
    [{ "resources/read": { path: "uri" } }, /resources\.resources\/read has unknown field path .*asked the file:\/\/ URI of the path/],
    [{ "notes://{+note}": { paths: "raw" } }, /\.paths must be one of "absolute", "relative"/],
  ])("a bad resources entry is refused, naming the rule: %j", (resources, rule) => {
    expect(() => parseMapping(JSON.stringify({ resources }), "m.json")).toThrow(rule);
  });

  it("fill the hostile path into a file:// URI or a template, raw", () => {
    expect(resourceUri(RESOURCES_READ, "../outside/secret.txt", "/ws")).toBe("file:///ws/../outside/secret.txt");
    expect(resourceUri(templateSurface("file:///{+path}"), "/abs/a b", "/ws")).toBe("file:///abs/a%20b");
    expect(resourceUri(templateSurface("file://{+path}"), "x", "/ws")).toBe("file:///ws/x");
    expect(resourceUri(templateSurface("notes://{name}/text"), "../x", "/ws")).toBe("notes://../x/text");
  });

  it("--list-tools shows them beside the tools, the notes template placed by the mapping or never called without it", async () => {
    const { answer: listed } = await overMcp(SECURE, async (target) => renderToolList("shapes", target.offered), SHAPES_MAPPING);
    expect(listed).toMatch(/^resources\/read +read +resources +a resource read at the attacked path's URI; paths as file:\/\/ URIs$/m);
    expect(listed).toMatch(/^resource template file:\/\/\/\{\+path\} +read +resources /m);
    expect(listed).toMatch(/^resource template notes:\/\/\{vault\}\/\{\+note\} +read +mapping +path: note; always sends vault = "main"$/m);
    const { answer: unmapped } = await overMcp(SECURE, async (target) => renderToolList("shapes", target.offered), MAPPING_FILE);
    expect(unmapped).toMatch(/^resource template notes:\/\/\{vault\}\/\{\+note\} +read +resources +never called: the template has several variables \(vault, note\) and the audit cannot tell which carries the path: name it in the mapping's resources$/m);
  }, 60_000);
});

const caught = SHAPE_VARIANTS.flatMap((variant) => variant.caughtBy.map((id) => [variant.module, id] as const));
const attacking = [...new Set(SHAPE_VARIANTS.flatMap((variant) => variant.caughtBy))];

describe("the correct twin passes, each planted bug dies at seed 1", () => {
  it.each(attacking)("the twin passes %s in process and over MCP", { timeout: 120_000 }, async (id) => {
    const inProcess = await runProperty(property(id), await loadTarget(SECURE), { seed: 1, runs: defaultRuns(id) });
    expect(inProcess.status, `${inProcess.reason}\n${inProcess.counterexample}`).toBe("passed");
    const { answer: overMcpResult, serverFailure } = await overMcp(SECURE, (target) => runProperty(property(id), target, { seed: 1, runs: defaultRuns(id) }), SHAPES_MAPPING);
    expect(overMcpResult.status, `${overMcpResult.reason}\n${overMcpResult.counterexample}`).toBe("passed");
    expect(serverFailure).toBeUndefined();
  });

  it.each(caught)("%s is killed by %s in process and over MCP", { timeout: 120_000 }, async (module, id) => {
    if (SHAPE_VARIANTS.find((variant) => variant.module === module)?.mcpOnly !== true) expect(await missedSeeds(await loadTarget(`fixtures/shapes/${module}.ts`), id, [1]), "in process").toEqual([]);
    const { answer: missed, serverFailure } = await overMcp(`fixtures/shapes/${module}.ts`, (target) => missedSeeds(target, id, [1]), SHAPES_MAPPING);
    expect(missed, "over MCP").toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});
