// The reports CI systems read, checked the way those systems read them: SARIF against the official
// 2.1.0 schema (as shipped by @microsoft/jest-sarif), JUnit through a real XML parser.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { compareWithBaseline } from "../src/kit/audit/baseline.js";
import { type AuditProperty, violation } from "../src/kit/audit/property.js";
import type { AuditReport, JsonReport } from "../src/kit/audit/report.js";
import { JSON_SCHEMA_VERSION, renderText, summarize, toJson } from "../src/kit/audit/report.js";
import { runProperty } from "../src/kit/audit/run.js";
import { toJUnit, toSarif } from "../src/kit/audit/report-formats.js";
import { cli as runCli } from "./support/cli.js";
import { parseJUnit, sarifValidator } from "./support/ci-reports.js";

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
  const only = "isInside.posix,truncation.read,limits.hardlink";
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
    // The three properties, then coverage.tools, which passes: --only leaves read's and write's out.
    expect(report.summary).toEqual({ total: 4, passed: 2, failed: 1, skipped: 0, notApplicable: 0, knownLimits: 1, conformanceDiffers: 0 });
  });
});

describe("a failure's reason", () => {
  it("names the sandbox as $BOX, as the counterexample does, never this run's temp path", async () => {
    const json = join(scratch, "reason.json");
    const { code } = await cli("audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.read", "--seed", "1", "--runs", "30", "--json", json);
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

  it("has one result per failed guarantee, with the rule, the counterexample and the replay; none for a known limit", async () => {
    const log = JSON.parse(await readFile(files.sarif, "utf8")) as {
      runs: [{ tool: { driver: { rules: { id: string }[] } }; results: { ruleId: string; ruleIndex: number; level: string; message: { text: string }; locations: unknown[]; properties: Record<string, unknown> }[] }];
    };
    const [run] = log.runs;
    expect(run.tool.driver.rules.map((rule) => rule.id)).toEqual(["isInside.posix", "truncation.read", "limits.hardlink", "coverage.tools"]);
    expect(run.results.map((result) => [result.ruleId, result.level])).toEqual([["isInside.posix", "error"]]);
    const [result] = run.results;
    expect(run.tool.driver.rules[result?.ruleIndex as number]?.id).toBe("isInside.posix");
    const replay = /^ {4}replay: (.+)$/m.exec(fork.stdout)?.[1] as string;
    expect(result?.properties.replay).toBe(replay);
    expect(result?.message.text).toContain(`\nreplay: ${replay}`);
    expect(result?.message.text).toMatch(/\ncounterexample:\nisInside\("\/.*", "\/.*", path\.posix\)\n/);
    expect(result?.locations).toEqual([{ physicalLocation: { artifactLocation: { uri: "fixtures/vulnerable/similar-prefix.ts" } } }]);
  });
});

describe("--junit", () => {
  it("has one test case per property: the failure with counterexample and replay, the known limit passing with what it found", async () => {
    const { suites, cases } = parseJUnit(await readFile(files.junit, "utf8"));
    expect(suites).toMatchObject({ tests: "4", failures: "1", skipped: "0" });
    expect([...cases.keys()]).toEqual(["isInside.posix", "truncation.read", "limits.hardlink", "coverage.tools"]);
    const failure = cases.get("isInside.posix")?.failure;
    expect(failure?.type).toBe("guarantee");
    expect(failure?.["#text"]).toContain(`replay: ${/^ {4}replay: (.+)$/m.exec(fork.stdout)?.[1] as string}`);
    expect(failure?.["#text"]).toMatch(/counterexample:\nisInside\(/);
    expect(cases.get("truncation.read")).toEqual({ classname: "truncation", name: "truncation.read", time: expect.stringMatching(/^\d+\.\d{3}$/) });
    expect(cases.get("limits.hardlink")?.failure).toBeUndefined();
    expect(cases.get("limits.hardlink")?.["system-out"]).toMatch(/^known limit/);
  });

  it("marks skipped properties with the exports they need", async () => {
    const module = join(scratch, "inside-only.mjs");
    await writeFile(module, "export const isInside = () => false;\n");
    const junit = join(scratch, "skipped.xml");
    await cli("audit", module, "--only", "isInside.posix,containment.read", "--runs", "3", "--seed", "1", "--junit", junit);
    const { suites, cases } = parseJUnit(await readFile(junit, "utf8"));
    // coverage.tools is not applicable too: a module without tools offers none to attack.
    expect(suites).toMatchObject({ tests: "3", failures: "1", skipped: "2" });
    expect(cases.get("containment.read")?.skipped?.message).toBe("needs createWorkspaceTools, which the module does not export");
    expect(cases.get("coverage.tools")?.skipped?.message).toBe("not applicable: the target offers no tools");
  });

  it("escapes markup and writes characters XML cannot hold as \\u{…}", () => {
    const report: AuditReport = {
      target: 'm<&>"',
      seed: 1,
      runs: 1,
      conformance: false,
      results: [
        { id: "fields.tools", gate: "stringField", kind: "guarantee", title: "t", status: "failed", runs: 1, cases: 1, timeMs: 5, calls: {}, seed: 1, reason: 'a\u0000b <x> & "q"\nnext', counterexample: "c\u001bd" },
      ],
      coverage: [],
    };
    const { suites, cases } = parseJUnit(toJUnit(toJson(report, "npx workspace-gates audit", [])));
    expect(suites.testsuite.name).toBe('workspace-gates audit of m<&>"');
    expect(cases.get("fields.tools")?.failure?.message).toBe('a\\u{0}b <x> & "q"\nnext');
    expect(cases.get("fields.tools")?.failure?.["#text"]).toContain("counterexample:\nc\\u{1b}d");
    expect(validateSarif(JSON.parse(toSarif(toJson(report, "npx workspace-gates audit", []))))).toBe(true);
  });
});

describe("cases and runs", () => {
  // Each value holds as many cases as it has elements; values of 10 or more elements break the rule.
  const property = (limit: number): AuditProperty<number[]> => ({
    id: "example.cases",
    gate: "isInside",
    kind: "guarantee",
    title: "an example whose runs hold several cases",
    needs: ["isInside"],
    arbitrary: fc.array(fc.nat(), { minLength: 1, maxLength: 20, size: "max" }),
    casesIn: (value) => value.length,
    render: (value) => JSON.stringify(value),
    check: async (_target, value) => {
      if (value.length >= limit) violation(`${value.length} elements`);
    },
  });
  const target = { label: "m.mjs", isInside: () => true };

  it("counts every case of every run, and a run of a property without casesIn as one", async () => {
    const seen: number[] = [];
    const counting: AuditProperty<number[]> = { ...property(Infinity), check: async (_target, value) => void seen.push(value.length) };
    const result = await runProperty(counting, target, { seed: 3, runs: 25 });
    expect(result).toMatchObject({ status: "passed", runs: 25, cases: seen.reduce((sum, length) => sum + length, 0) });
    expect(result.cases).toBeGreaterThan(25);
    const { casesIn: _casesIn, ...oneEach } = counting;
    expect(await runProperty(oneEach, target, { seed: 3, runs: 25 })).toMatchObject({ runs: 25, cases: 25 });
  });

  it("counts the cases of the runs that passed and the one that broke the rule, not the shrink candidates after it", async () => {
    const lengths: number[] = [];
    const failing = property(10);
    const recording: AuditProperty<number[]> = {
      ...failing,
      check: async (checked, value) => {
        lengths.push(value.length);
        await failing.check(checked, value);
      },
    };
    const result = await runProperty(recording, target, { seed: 3, runs: 100 });
    expect(result.status).toBe("failed");
    const passed = lengths.slice(0, result.runs - 1);
    expect(lengths.length, "shrinking ran more checks").toBeGreaterThan(result.runs);
    expect(passed.every((length) => length < 10) && (lengths[result.runs - 1] ?? 0) >= 10).toBe(true);
    expect(result.cases).toBe(passed.reduce((sum, length) => sum + length, 0) + 1);
    const text = renderText({ target: "m.mjs", seed: 3, runs: 100, conformance: false, results: [result], coverage: [] }, "npx workspace-gates audit", ["m.mjs"]);
    expect(text).toMatch(new RegExp(`^isInside\\s+example\\.cases\\s+FAILED\\s+${result.runs}\\s+${result.cases}\\s`, "m"));
    expect(text).toContain(`judged: ${result.cases} cases in ${result.runs} runs\n`);
  });
});

describe("a property that cannot judge this target", () => {
  const property: AuditProperty<number> = {
    id: "example.notApplicable",
    gate: "isInside",
    kind: "guarantee",
    title: "an example that needs what the target lacks",
    needs: ["isInside"],
    notApplicable: () => "needs a win32 path API the target does not take",
    arbitrary: fc.nat(),
    render: String,
    check: () => Promise.reject(new Error("a property that is not applicable must not run")),
  };

  it("is reported as not applicable, apart from skipped, and is no regression against a baseline that passed it", async () => {
    const target = { label: "m.mjs", isInside: () => true };
    const result = await runProperty(property, target, { seed: 1, runs: 5 });
    expect(result).toMatchObject({ status: "not-applicable", runs: 0, reason: "needs a win32 path API the target does not take" });
    const report: AuditReport = { target: "m.mjs", seed: 1, runs: 5, conformance: false, results: [result], coverage: [] };
    const text = renderText(report, "npx workspace-gates audit", ["m.mjs"]);
    expect(text).toMatch(/^isInside\s+example\.notApplicable\s+not applicable\s+0\s/m);
    expect(text).toContain("    not applicable: needs a win32 path API the target does not take\n");
    expect(text).toMatch(/^audit: 0 passed, 0 failed, 0 skipped, 1 not applicable$/m);
    expect(summarize([result], false)).toMatchObject({ notApplicable: 1, skipped: 0, failed: 0 });
    expect(compareWithBaseline("b.json", new Map([[property.id, "passed"]]), [result], false).regressions).toEqual([]);
    const { cases } = parseJUnit(toJUnit(toJson(report, "npx workspace-gates audit", ["m.mjs"])));
    expect(cases.get(property.id)?.skipped?.message).toBe("not applicable: needs a win32 path API the target does not take");
  });
});
