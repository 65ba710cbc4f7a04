// Archive extraction is an operation the audit attacks (issue 50): a tool that extracts an archive is
// classified as such, and containment.extract writes tars of its own (names that climb out or are
// absolute, links out and entries through them, hard links to outside files) into the workspace. The
// correct twins pass (fixtures/archives/archives.ts; the Python server with tarfile's data filter);
// each planted bug dies at the default budget at seed 1, in process and over MCP, and its
// counterexample keeps only the entries it needs (seeds 1 to 20: test/sweeps/archives.sweep.ts).
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ARCHIVE_VARIANTS, PYTHON_TWIN } from "../fixtures/archives/catalog.js";
import { readTar } from "../fixtures/archives/archives.js";
import { ARCHIVE_ATTACKS, archiveEntries, entryOfText, entryText } from "../src/kit/audit/arbitraries/archives.js";
import { containmentExtract } from "../src/kit/audit/properties/archives.js";
import { disposeSandboxes } from "../src/kit/audit/runner/property.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { coverageRows } from "../src/kit/audit/coverage.js";
import { renderToolList } from "../src/kit/audit/reports/tool-list.js";
import { parseMapping } from "../src/kit/mcp/mapping.js";
import { argumentsFor, classifyTool } from "../src/kit/operations/classify.js";
import { type AuditTarget, loadTarget, offeredTools } from "../src/kit/operations/target.js";
import { type TarEntry, tarBytes } from "../src/kit/sandbox/tar.js";
import { defaultRuns, overMcp, overServer } from "./support/surface.js";

afterAll(() => disposeSandboxes());

const TWIN = "fixtures/archives/archives.ts";
const ID = containmentExtract.id;
const string = { type: "string" };
const object = (properties: Record<string, unknown>) => ({ type: "object", properties, required: Object.keys(properties) });

const run = (target: AuditTarget) => runProperty(containmentExtract, target, { seed: 1, runs: defaultRuns(ID) });

describe("a tool that extracts an archive", () => {
  // Before: extract_archive was attacked generically (containment.other), sent hostile paths in both
  // arguments and never an archive with hostile entries, so tar slip passed on the fork and its twin alike.
  it.each([
    ["extract_archive", { path: string, destination: string }, { archive: "path", destination: "destination" }],
    ["extract_archive", { archive_path: string, output_dir: string }, { archive: "archive_path", destination: "output_dir" }],
    ["unzip_file", { zip_file: string, extract_to: string }, { archive: "zip_file", destination: "extract_to" }],
    ["untar", { tarball: string, into: string, strip: { type: "integer" } }, { archive: "tarball", destination: "into" }],
  ] as const)("%s %j is classified as extract, its archive and destination as roles", (name, properties, roles) => {
    const classification = classifyTool({ name, inputSchema: object(properties) });
    expect(classification.kind === "operation" && [classification.operation, classification.plan.roles]).toEqual(["extract", roles]);
  });

  it("a name that does not say it extracts, or a schema without a destination, is not", () => {
    expect(classifyTool({ name: "create_archive", inputSchema: object({ source: string, destination: string }) })).toMatchObject({ operation: "move" });
    expect(classifyTool({ name: "extract_text", inputSchema: object({ path: string }) })).toMatchObject({ operation: "other" });
  });

  it("the mapping names an archive and a destination, and each is sent its path", () => {
    const mapping = parseMapping(JSON.stringify({ tools: { restore: { operation: "extract", arguments: { archive: "backup", destination: "target_dir" } } } }), "m.json");
    const classification = classifyTool({ name: "restore", inputSchema: object({ backup: string, target_dir: string }) }, mapping.tools.restore);
    if (classification.kind !== "operation") throw new Error(classification.kind);
    expect(argumentsFor(classification.plan, { archive: "a.tar", destination: "../out" }, (path) => `/ws/${path}`)).toEqual({ backup: "/ws/a.tar", target_dir: "/ws/../out" });
  });

  it("--list-tools and the coverage table show it taken as an extraction", async () => {
    const offered = offeredTools(await loadTarget(TWIN));
    expect(renderToolList("archives", offered)).toMatch(/^extract_archive +extract +schema +archive: path, destination: destination$/m);
    expect(coverageRows(offered, [], undefined).find((row) => row.tool === "extract_archive")).toMatchObject({ plays: "extract" });
  });
});

describe("the archives the audit builds", () => {
  const sample = (attack: (typeof ARCHIVE_ATTACKS)[keyof typeof ARCHIVE_ATTACKS]) => fc.sample(archiveEntries(attack), { seed: 3, numRuns: 20 });

  it("hold safe entries and one class of hostile ones, each entry written as given, which tarfile reads back", async () => {
    const dir = await mkdtemp(join(tmpdir(), "workspace-gates-archives-test-"));
    try {
      for (const [name, attack] of Object.entries(ARCHIVE_ATTACKS)) {
        const [entries = []] = sample(attack);
        expect(entries.some((entry) => entry.name === "docs/readme.txt"), name).toBe(true);
        const file = join(dir, `${name}.tar`);
        await writeFile(file, tarBytes(entries));
        const listed = execFileSync("python3", ["-c", "import sys, tarfile\nfor m in tarfile.open(sys.argv[1]): print(m.name, m.linkname, oct(m.mode))", file], { encoding: "utf8" }).trim().split("\n");
        expect(listed).toEqual(entries.map((entry) => `${entry.name} ${"target" in entry ? entry.target : ""} ${entry.kind === "directory" ? "0o700" : entry.kind === "symlink" ? "0o777" : "0o600"}`));
        expect(readTar(tarBytes(entries)).map((entry) => entry.name)).toEqual(entries.map((entry) => entry.name));
      }
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it("write a name or a link target too long for ustar in a pax header", () => {
    const long: TarEntry[] = [{ kind: "file", name: `$BOX/${"d/".repeat(80)}x.txt`, content: "x\n" }, { kind: "symlink", name: "l", target: `../${"t".repeat(120)}` }];
    expect(readTar(tarBytes(long)).map((entry) => [entry.name, "target" in entry ? entry.target : ""])).toEqual(long.map((entry) => [entry.name, "target" in entry ? entry.target : ""]));
  });

  it("show each entry as a counterexample line that reads back as the entry", () => {
    for (const attack of Object.values(ARCHIVE_ATTACKS)) for (const entries of sample(attack)) for (const entry of entries) expect(entryOfText(entryText(entry))).toEqual(entry);
  });
});

const modules = ARCHIVE_VARIANTS.flatMap((variant) => ("module" in variant.target ? [variant.target.module] : []));
const servers = ARCHIVE_VARIANTS.flatMap((variant) => ("server" in variant.target ? [variant.target.server] : []));

describe("the correct twins pass, each planted bug dies at seed 1 with the entries it needs", () => {
  it("the twin passes in process and over MCP", { timeout: 180_000 }, async () => {
    const inProcess = await run(await loadTarget(TWIN));
    expect(inProcess.status, `${inProcess.reason}\n${inProcess.counterexample}`).toBe("passed");
    const { answer, serverFailure } = await overMcp(TWIN, run);
    expect(answer.status, `${answer.reason}\n${answer.counterexample}`).toBe("passed");
    expect(serverFailure).toBeUndefined();
  });

  it("the Python server with tarfile's data filter passes: a server in another language, over MCP", { timeout: 180_000 }, async () => {
    const { answer, serverFailure } = await overServer(PYTHON_TWIN, run);
    expect(answer.status, `${answer.reason}\n${answer.counterexample}`).toBe("passed");
    expect(serverFailure).toBeUndefined();
  });

  it.each(modules)("%s dies in process and over MCP, its counterexample one call on an archive of its bad entries alone", { timeout: 180_000 }, async (module) => {
    const path = `fixtures/archives/${module}.ts`;
    const inProcess = await run(await loadTarget(path));
    expect(inProcess.status).toBe("failed");
    // Shrunk: one call, and none of the safe entries (a correct extractor's work) left in its archive.
    expect(inProcess.counterexample).toMatch(/\ncall:\n {2}1\. extract_archive\.execute\(/);
    expect(inProcess.counterexample).not.toMatch(/docs\/readme\.txt|notes\.txt/);
    const { answer, serverFailure } = await overMcp(path, run);
    expect(answer.status).toBe("failed");
    expect(serverFailure).toBeUndefined();
  });

  it.each(servers.map((server) => [server.join(" "), server] as const))("%s dies over MCP", { timeout: 180_000 }, async (_name, server) => {
    const { answer, serverFailure } = await overServer(server, run);
    expect(answer.status).toBe("failed");
    expect(answer.counterexample).not.toMatch(/docs\/readme\.txt|notes\.txt/);
    expect(serverFailure).toBeUndefined();
  });
});

describe("every run of containment.extract", () => {
  // An extractor that stops at its first bad entry meets only the first class of an archive: with every
  // class in one archive, names checked and links followed (follows-extracted-link) passed every seed.
  it("extracts each class of hostile entries from an archive of its own", () => {
    const classOf = (entry: TarEntry) =>
      entry.name.startsWith("../") ? "climb" : entry.name.startsWith("$BOX/") ? "absolute" : /^(lnk|leaf\.txt|hard\.txt|sub)(\/|$)/.exec(entry.name)?.[1];
    for (const { probes } of fc.sample(containmentExtract.arbitrary, { seed: 5, numRuns: 20 })) {
      const classes = probes.map((probe) => [...new Set(probe.entries.map(classOf).filter((found) => found !== undefined))]);
      expect(classes.every((found) => found.length === 1), JSON.stringify(classes)).toBe(true);
      expect(new Set(classes.flat()).size).toBe(Object.keys(ARCHIVE_ATTACKS).length);
    }
  });
});
