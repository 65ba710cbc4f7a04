// The reports CI systems read, checked the way those systems read them: SARIF against the official
// 2.1.0 schema (as shipped by @microsoft/jest-sarif) and by the SARIF Multitool with GitHub's rules,
// JUnit through a real XML parser and against the schema Jenkins reads it by.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { type AuditProperty, violation } from "../src/kit/audit/runner/property.js";
import type { AuditReport, JsonReport } from "../src/kit/audit/reports/report.js";
import { JSON_SCHEMA_VERSION } from "../src/kit/audit/reports/report.js";
import { toJson } from "../src/kit/audit/reports/report-json.js";
import { toJUnit, toSarif } from "../src/kit/audit/reports/report-formats.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { failsRun } from "../src/kit/audit/reports/verdict.js";
import { DEFAULT_FAIL_ON, ESCAPES } from "../src/kit/findings/findings.js";
import { findingsFile, findingsLocation } from "../src/kit/findings/sarif.js";
import { cli as runCli } from "./support/cli.js";
import { junitSchemaErrors, multitoolErrors, parseJUnit, sarifValidator } from "./support/ci-reports.js";

/** What an AuditReport built by hand holds besides its results: the verdict's defaults, and where SARIF points. */
const BARE = { conformance: false, failOn: DEFAULT_FAIL_ON, location: "m.mjs", coverage: [] };

interface SarifLog {
  runs: [
    {
      tool: { driver: { rules: { id: string; properties: { tags: string[]; "security-severity"?: string } }[] } };
      invocations: { workingDirectory?: { uri: string } }[];
      results: {
        ruleId: string;
        ruleIndex: number;
        level: string;
        message: { text: string };
        locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[];
        partialFingerprints: Record<string, string>;
        properties: Record<string, unknown>;
      }[];
    },
  ];
}

const readSarif = async (file: string) => JSON.parse(await readFile(file, "utf8")) as SarifLog;

const cli = (...argv: string[]) => runCli(argv);

let scratch: string;
let validateSarif: (log: unknown) => boolean;
let errors: () => unknown;
const files = { json: "", junit: "", sarif: "" };
let fork: { code: number; stdout: string };

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "workspace-gates-reports-test-"));
  ({ validate: validateSarif, errors } = await sarifValidator());
  Object.assign(files, { json: join(scratch, "a.json"), junit: join(scratch, "a.xml"), sarif: join(scratch, "a.sarif") });
  const only = "isInside.posix,containment.read,truncation.read,limits.hardlink";
  fork = await cli("audit", "fixtures/vulnerable/similar-prefix.ts", "--only", only, "--seed", "2", "--runs", "30", "--json", files.json, "--junit", files.junit, "--sarif", files.sarif);
}, 120_000);
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("--json", () => {
  it("carries the schema version, the tool's version and the summary counts", async () => {
    const { version } = JSON.parse(await readFile("package.json", "utf8")) as { version: string };
    const report = JSON.parse(await readFile(files.json, "utf8")) as JsonReport;
    expect(fork.code).toBe(1);
    expect(report).toMatchObject({ schemaVersion: JSON_SCHEMA_VERSION, tool: { name: "workspace-gates", version }, conformance: false });
    // The four properties, then coverage.tools, which passes: read is attacked and --only leaves write's property out.
    expect(report.summary).toMatchObject({ total: 5, passed: 2, failed: 2, warnings: 0, suppressed: 0, skipped: 0, notApplicable: 0, knownLimits: 1, conformanceDiffers: 0 });
    const failed = report.results.filter((result) => result.status === "failed" && result.kind === "guarantee");
    expect(report.summary.byConsequence).toEqual(Object.fromEntries(failed.map((result) => [result.consequence, failed.filter((other) => other.consequence === result.consequence).length])));
    expect(report).toMatchObject({ failOn: DEFAULT_FAIL_ON, location: "fixtures/vulnerable/similar-prefix.ts" });
  });
});

describe("a failure's reason", () => {
  it("names the sandbox as $BOX, as the counterexample does, never this run's temp path", async () => {
    const json = join(scratch, "reason.json");
    const { code } = await cli("audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.workspacePath", "--seed", "1", "--runs", "30", "--json", json);
    const text = await readFile(json, "utf8");
    const [result] = (JSON.parse(text) as JsonReport).results;
    expect(code).toBe(1);
    expect(result?.reason).toMatch(/\$BOX\/(ws|WS)\b/);
    expect(text).not.toContain("workspace-gates-audit-");
  });
});

describe("--sarif", () => {
  it("validates against the SARIF 2.1.0 schema, which refuses a broken log", async () => {
    const log = JSON.parse(await readFile(files.sarif, "utf8")) as { version: string };
    expect(validateSarif(log), JSON.stringify(errors())).toBe(true);
    expect(validateSarif({ ...log, version: "2.0.0" })).toBe(false);
    expect(validateSarif({ ...log, runs: [{ results: [] }] })).toBe(false);
  });

  it("passes the SARIF Multitool's GitHub rules, which refuse a result without a location as upload-sarif does", async () => {
    const log = await readSarif(files.sarif);
    const [run] = log.runs;
    const unlocated = join(scratch, "unlocated.sarif");
    await writeFile(unlocated, JSON.stringify({ ...log, runs: [{ ...run, results: run.results.map(({ locations: _locations, ...result }) => result) }] }));
    expect(await multitoolErrors([files.sarif])).toEqual([]);
    expect((await multitoolErrors([unlocated])).join("\n")).toMatch(/GH1015 Error_MissingLocationsArray: runs\[0\]\.results\[0\]/);
  }, 60_000);

  it("has one result per failed guarantee, with the rule, the consequence, the threat, the counterexample and the replay; none for a known limit", async () => {
    const [run] = (await readSarif(files.sarif)).runs;
    expect(run.tool.driver.rules.map((rule) => rule.id)).toEqual(["isInside.posix", "containment.read", "truncation.read", "limits.hardlink", "coverage.tools"]);
    expect(run.results.map((result) => [result.ruleId, result.level])).toEqual([
      ["isInside.posix", "error"],
      ["containment.read", "error"],
    ]);
    const [result] = run.results;
    expect(run.tool.driver.rules[result?.ruleIndex as number]?.id).toBe("isInside.posix");
    const replay = /^ {4}replay: (.+--only isInside\.posix .+)$/m.exec(fork.stdout)?.[1] as string;
    expect(result?.properties.replay).toBe(replay);
    expect(result?.message.text).toContain(`\nreplay: ${replay}`);
    expect(result?.message.text).toMatch(/\nconsequence: hardening broken\nthreat: the model's input alone\n/);
    expect(result?.message.text).toMatch(/\ncounterexample:\ncall:\n {2}1\. isInside\("\/.*", "\/.*", path\.posix\)\n/);
    // The fork's mistake is its isInside, written on the line that defines it (its header comment says it too).
    const mistake = (await readFile("fixtures/vulnerable/similar-prefix.ts", "utf8")).split("\n").findIndex((line) => line.includes("isInside: (root, path) => path.startsWith(root)")) + 1;
    expect(mistake).toBeGreaterThan(1);
    expect(result?.locations).toEqual([{ physicalLocation: { artifactLocation: { uri: "fixtures/vulnerable/similar-prefix.ts" }, region: { startLine: mistake } } }]);
  });

  it("points each result at the line that names what failed: the tool, else the export that makes it, else line 1 and says so", async () => {
    const lineOf = async (file: string, written: string) => (await readFile(file, "utf8")).split("\n").findIndex((line) => line.includes(written) && !/^\s*(\*|\/\/)/.test(line)) + 1;
    // The flags first: a command after -- would take them.
    const run = async (name: string, ...argv: string[]) => {
      const sarif = join(scratch, `${name}.sarif`);
      await cli("audit", "--seed", "1", "--runs", "30", "--sarif", sarif, ...argv);
      return { file: sarif, results: (await readSarif(sarif)).runs[0].results };
    };
    const region = (result: SarifLog["runs"][0]["results"][number] | undefined) => result?.locations[0]?.physicalLocation.region.startLine;
    // The fork does not write "read": its tools come from the export that makes them.
    const fork = await run("fork-read", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.read");
    expect(region(fork.results[0])).toBe(await lineOf("fixtures/vulnerable/similar-prefix.ts", "createWorkspaceTools"));
    // The surface writes each tool by its name: the listing's result points at where ls is made.
    const surface = await run("surface-ls", "fixtures/surface/ls-stats-through-links.ts", "--only", "containment.list", "--sarif-location", "fixtures/surface/surface.ts");
    expect(region(surface.results[0])).toBe(await lineOf("fixtures/surface/surface.ts", '"ls",'));
    // A file that names none of it: line 1, and the result says what it looked for.
    const elsewhere = await run("elsewhere", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.read", "--sarif-location", "LICENSE");
    expect(region(elsewhere.results[0])).toBe(1);
    expect(elsewhere.results[0]?.message.text).toMatch(/\nlocation: line 1, as no line of LICENSE names read or createWorkspaceTools$/);
    // Over MCP, the mapping's line: test/mcp.test.ts ("prints a replay that runs the same case").
    expect(await multitoolErrors([fork.file, surface.file, elsewhere.file])).toEqual([]);
  }, 120_000);

  it("ranks each failed rule by its consequence: security-severity and the CWE tags of the consequence, the threat and the property", async () => {
    const [run] = (await readSarif(files.sarif)).runs;
    const rule = (id: string) => run.tool.driver.rules.find((candidate) => candidate.id === id)?.properties;
    // isInside answered wrongly (a hardening rule, CWE-22 of its own); read returned an outside secret.
    expect(rule("isInside.posix")).toEqual({ tags: ["security", "external/cwe/cwe-693", "external/cwe/cwe-022", "isInside", "guarantee"], "security-severity": "3.7" });
    expect(rule("containment.read")?.["security-severity"]).toBe("7.5");
    expect(rule("containment.read")?.tags).toEqual(expect.arrayContaining(["security", "external/cwe/cwe-022", "external/cwe/cwe-200"]));
    expect(Number(rule("containment.read")?.["security-severity"])).toBeGreaterThan(Number(rule("isInside.posix")?.["security-severity"]));
    // A rule that passed has no result to rank.
    expect(rule("truncation.read")).toEqual({ tags: ["truncation", "guarantee"] });
  });

  it("gives a finding the same fingerprint in every run that finds it, and another finding another", async () => {
    const other = join(scratch, "seed-9.sarif");
    await cli("audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "isInside.posix,containment.read", "--seed", "9", "--runs", "30", "--sarif", other);
    const fingerprints = async (file: string) => new Map((await readSarif(file)).runs[0].results.map((result) => [result.ruleId, result.partialFingerprints["workspaceGatesFinding/v1"]]));
    const [first, again] = [await fingerprints(files.sarif), await fingerprints(other)];
    expect(again.get("isInside.posix")).toBe(first.get("isInside.posix"));
    expect(again.get("containment.read")).toBe(first.get("containment.read"));
    expect(new Set(first.values()).size).toBe(2);
  }, 60_000);

  it("points an MCP audit's results, and a module's outside the working directory, at a file code scanning accepts", async () => {
    const module = join(scratch, "outside.mjs");
    await writeFile(module, "export const isInside = () => true;\n");
    const sarif = join(scratch, "outside.sarif");
    await cli("audit", module, "--only", "isInside.posix", "--seed", "1", "--runs", "20", "--sarif", sarif);
    const [run] = (await readSarif(sarif)).runs;
    expect(run.results[0]?.locations[0]?.physicalLocation.artifactLocation.uri).toBe(`file://${module}`);
    expect(run.invocations[0]?.workingDirectory?.uri).toBe(`file://${process.cwd()}/`);
    expect(await multitoolErrors([sarif])).toEqual([]);
  }, 60_000);
});

describe("the file SARIF results point at", () => {
  it("is the one named, else the module, else the mapping, else package.json, relative to the working directory when under it", () => {
    expect(findingsFile({ named: "src/tools.ts", module: "m.ts", mapping: "map.json" }, "/repo")).toBe("src/tools.ts");
    expect(findingsFile({ module: "/repo/lib/m.ts", mapping: "map.json" }, "/repo")).toBe("lib/m.ts");
    expect(findingsFile({ mapping: "config/map.json" }, "/repo")).toBe("config/map.json");
    expect(findingsFile({}, "/repo")).toBe("package.json");
    expect(findingsFile({ module: "../elsewhere/m.ts" }, "/repo")).toBe("/elsewhere/m.ts");
    expect(findingsFile({ named: "..notes/x.ts" }, "/repo")).toBe("..notes/x.ts");
  });

  it("is, for an MCP server with no file named, the first word of its command that is a file of the repository, and says when it is only the fallback", () => {
    const cwd = process.cwd();
    expect(findingsLocation({ command: ["node", "--import", "tsx", "fixtures/mcp/tools-server.ts", "{root}"] }, cwd)).toEqual({ file: "fixtures/mcp/tools-server.ts", fallback: false });
    expect(findingsLocation({ command: [process.execPath, "./fixtures/mcp/tools-server.ts", "--root={root}"] }, cwd)).toEqual({ file: "fixtures/mcp/tools-server.ts", fallback: false });
    expect(findingsLocation({ mapping: "map.json", command: ["node", "fixtures/mcp/tools-server.ts"] }, cwd).file).toBe("map.json");
    // A package run by name, a Python module, a folder (go run ./cmd): no file of the repository.
    for (const command of [["npx", "-y", "@modelcontextprotocol/server-filesystem", "{root}"], ["python", "-m", "my_server", "--root={root}"], ["go", "run", "./src"]])
      expect(findingsLocation({ command }, cwd), command.join(" ")).toEqual({ file: "package.json", fallback: true });
    expect(findingsLocation({ module: "m.ts" }, cwd).fallback).toBe(false);
  });

  it("takes a server's script, never its compiled binary, which code scanning cannot show", async () => {
    const repository = join(scratch, "polyglot");
    await mkdir(repository, { recursive: true });
    await writeFile(join(repository, "server"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00]));
    await writeFile(join(repository, "server.py"), "import sys\n");
    expect(findingsLocation({ command: ["./server", "{root}"] }, repository)).toEqual({ file: "package.json", fallback: true });
    expect(findingsLocation({ command: ["python3", "server.py", "{root}"] }, repository)).toEqual({ file: "server.py", fallback: false });
  });

  it("says on stderr when the results point at the fallback", async () => {
    const sarif = join(scratch, "fallback.sarif");
    const { code, stderr } = await cli("audit", "--sarif", sarif, "--only", "isInside.posix", "--runs", "5", "--seed", "1");
    expect(code).toBe(0);
    expect(stderr).toContain("audit: note: nothing of this run names a file of the repository (no --sarif-location, module, mapping, or server file in the working directory), so every SARIF result points at package.json; name one with --sarif-location (the action's sarif-location input)\n");
    const named = await cli("audit", "--sarif", sarif, "--sarif-location", "src/index.ts", "--only", "isInside.posix", "--runs", "5", "--seed", "1");
    expect(named.stderr).not.toContain("note: nothing of this run");
  });

  it("needs --sarif", async () => {
    const { code, stderr } = await cli("audit", "--sarif-location", "src/x.ts", "--only", "isInside.posix");
    expect(code).toBe(2);
    expect(stderr).toContain("--sarif-location says where SARIF results point: give it with --sarif");
  });
});

describe("--junit", () => {
  it("is valid by the JUnit schema Jenkins reads, which refuses an attribute it does not know", async () => {
    const xml = await readFile(files.junit, "utf8");
    expect(await junitSchemaErrors(xml)).toEqual([]);
    expect((await junitSchemaErrors(xml.replace("<testsuites ", '<testsuites skipped="0" '))).join("\n")).toMatch(/attribute 'skipped' is not allowed/);
  });

  it("has one test case per property: the failure typed by its consequence with counterexample and replay, the known limit passing with what it found", async () => {
    const { suites, cases } = parseJUnit(await readFile(files.junit, "utf8"));
    expect(suites).toMatchObject({ tests: "5", failures: "2" });
    expect(suites.testsuite).toMatchObject({ tests: "5", failures: "2", skipped: "0" });
    expect([...cases.keys()]).toEqual(["isInside.posix", "containment.read", "truncation.read", "limits.hardlink", "coverage.tools"]);
    const failure = cases.get("isInside.posix")?.failure;
    expect(failure?.type).toBe("hardening broken");
    expect(cases.get("containment.read")?.failure?.type).toBe("outside read");
    expect(failure?.["#text"]).toContain(`replay: ${/^ {4}replay: (.+--only isInside\.posix .+)$/m.exec(fork.stdout)?.[1] as string}`);
    expect(failure?.["#text"]).toMatch(/\nconsequence: hardening broken\nthreat: the model's input alone\n/);
    expect(failure?.["#text"]).toMatch(/counterexample:\ncall:\n {2}1\. isInside\(/);
    expect(cases.get("truncation.read")).toEqual({ classname: "truncation", name: "truncation.read", time: expect.stringMatching(/^\d+\.\d{3}$/) });
    expect(cases.get("limits.hardlink")?.failure).toBeUndefined();
    expect(cases.get("limits.hardlink")?.["system-out"]).toMatch(/^known limit/);
  });

  it("marks skipped properties with the exports they need", async () => {
    const module = join(scratch, "inside-only.mjs");
    // Calling every path inside breaks the check (calling one outside would be only over-strict, a warning).
    await writeFile(module, "export const isInside = () => true;\n");
    const junit = join(scratch, "skipped.xml");
    await cli("audit", module, "--only", "isInside.posix,containment.read", "--runs", "30", "--seed", "1", "--junit", junit);
    const { suites, cases } = parseJUnit(await readFile(junit, "utf8"));
    // coverage.tools is not applicable too: a module without tools offers none to attack.
    expect(suites.testsuite).toMatchObject({ tests: "3", failures: "1", skipped: "2" });
    expect(cases.get("containment.read")?.skipped?.message).toBe("needs createWorkspaceTools, which the module does not export");
    expect(cases.get("coverage.tools")?.skipped?.message).toBe("not applicable: the target offers no tools");
  });

  it("escapes markup and writes characters XML cannot hold as \\u{…}", () => {
    const report: AuditReport = {
      ...BARE,
      target: 'm<&>"',
      seed: 1,
      runs: 1,
      results: [
        { id: "fields.tools", gate: "stringField", kind: "guarantee", title: "t", status: "failed", runs: 1, cases: 1, timeMs: 5, calls: {}, seed: 1, reason: 'a\u0000b <x> & "q"\nnext', counterexample: "c\u001bd" },
      ],
    };
    const { suites, cases } = parseJUnit(toJUnit(toJson(report, "npx workspace-gates audit", [])));
    expect(suites.testsuite.name).toBe('workspace-gates audit of m<&>"');
    expect(cases.get("fields.tools")?.failure?.message).toBe('a\\u{0}b <x> & "q"\nnext');
    expect(cases.get("fields.tools")?.failure?.["#text"]).toContain("counterexample:\nc\\u{1b}d");
    expect(validateSarif(JSON.parse(toSarif(toJson(report, "npx workspace-gates audit", []))))).toBe(true);
  });
});

describe("a failure's consequence and threat", () => {
  it("are printed under each failure in the text report", () => {
    const detail = (id: string) => new RegExp(`^\\S+\\s+${id.replace(".", "\\.")}\\s+(FAILED|known limit)[^\\n]*\\n {4}rule: [^\\n]*\\n {4}consequence: ([^\\n]*)\\n {4}threat: ([^\\n]*)\\n`, "m").exec(fork.stdout)?.slice(2);
    expect(detail("isInside.posix")).toEqual(["hardening broken", "the model's input alone"]);
    expect(detail("containment.read")?.[0]).toBe("outside read");
    expect(detail("limits.hardlink")).toEqual(["outside read", "a link inside the workspace"]);
  });

  it("is the input alone when the failure needs no link, a link when it needs one", async () => {
    const json = join(scratch, "threats.json");
    // The fork lets `../ws-other/x` through by its prefix check: no link needed, and the shrunk tree
    // keeps none (it kept some until the openings were left out first, issue 49; lesserCases,
    // judges a tree that keeps them: "the threat a failure needs", below). Its hardlink leak needs one.
    await cli("audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.read,limits.hardlink", "--seed", "2", "--runs", "30", "--json", json);
    const results = new Map((JSON.parse(await readFile(json, "utf8")) as JsonReport).results.map((result) => [result.id, result]));
    expect(results.get("containment.read")?.counterexample).not.toMatch(/ -> /);
    expect(results.get("containment.read")).toMatchObject({ consequence: "outside read", threat: "the model's input alone", weaknesses: ["CWE-22", "CWE-200"] });
    expect(results.get("limits.hardlink")).toMatchObject({ threat: "a link inside the workspace", weaknesses: ["CWE-22", "CWE-200", "CWE-59"] });
  }, 60_000);

  it("counts every consequence its run showed: the escape is the finding, the lesser failure beside it", async () => {
    // Values of 10 or more change the outside; of 5 or more break a hardening rule: the case shrinks to
    // 10, the smallest that escapes, never to 5, which only breaks the rule.
    const property: AuditProperty<number> = {
      id: "example.shrinks",
      gate: "workspacePath",
      kind: "guarantee",
      title: "an example whose worst failure shrinks away",
      needs: ["isInside"],
      consequence: "hardening broken",
      threat: () => "the model's input alone",
      arbitrary: fc.integer({ min: 0, max: 1000 }),
      render: String,
      check: async (_target, value) => {
        if (value >= 10) violation(`${value} changed the outside`, "outsideChanged");
        if (value >= 5) violation(`${value} broke a hardening rule`);
      },
    };
    const result = await runProperty(property, { label: "m.mjs", isInside: () => true }, { seed: 1, runs: 100 });
    expect(result).toMatchObject({ status: "failed", counterexample: "10", consequence: "outside changed", alsoSeen: ["hardening broken"] });
    expect(failsRun(result, { conformance: false, failOn: ESCAPES })).toBe(true);
    // An escape its run showed beside the finding counts too.
    expect(failsRun({ ...result, consequence: "hardening broken", alsoSeen: ["outside changed"] }, { conformance: false, failOn: ESCAPES })).toBe(true);
    expect(failsRun({ ...result, consequence: "hardening broken", alsoSeen: ["unavailable"] }, { conformance: false, failOn: ESCAPES })).toBe(false);
  });
});
