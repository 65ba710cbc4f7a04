// What a finding carries in every report and which findings fail the run: the cases and runs a
// property judged, its shrinking under a deadline, why a property could not judge, a failure's
// consequence and the threat it needs, and --fail-on. (test/audit-reports.test.ts checks the reports
// themselves the way CI systems read them.)
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { compareWithBaseline } from "../src/kit/audit/reports/baseline.js";
import { type AuditProperty, violation } from "../src/kit/audit/runner/property.js";
import type { AuditReport, JsonReport } from "../src/kit/audit/reports/report.js";
import { SHRINK_STOPPED } from "../src/kit/audit/reports/report.js";
import { toJson } from "../src/kit/audit/reports/report-json.js";
import { renderText } from "../src/kit/audit/reports/report-text.js";
import { DEFAULT_VERDICT, summarize } from "../src/kit/audit/reports/verdict.js";
import { SHRINK_FLOOR_CANDIDATES, runProperty } from "../src/kit/audit/runner/run.js";
import { toJUnit } from "../src/kit/audit/reports/report-formats.js";
import { CONSEQUENCES, type Consequence, DEFAULT_FAIL_ON, ESCAPES, STRICT_FAIL_ON } from "../src/kit/findings/findings.js";
import { cli as runCli } from "./support/cli.js";
import { parseJUnit } from "./support/ci-reports.js";

/** What an AuditReport built by hand holds besides its results: the verdict's defaults, and where SARIF points. */
const BARE = { conformance: false, failOn: DEFAULT_FAIL_ON, location: "m.mjs", coverage: [] };

const cli = (...argv: string[]) => runCli(argv);

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "workspace-gates-findings-test-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("cases and runs", () => {
  // Each value holds as many cases as it has elements; values of 10 or more elements break the rule.
  const property = (limit: number): AuditProperty<number[]> => ({
    id: "example.cases",
    gate: "isInside",
    kind: "guarantee",
    title: "an example whose runs hold several cases",
    needs: ["isInside"],
    consequence: "hardening broken",
    threat: () => "the model's input alone",
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
    const text = renderText({ ...BARE, target: "m.mjs", seed: 3, runs: 100, results: [result] }, "npx workspace-gates audit", ["m.mjs"]);
    expect(text).toMatch(new RegExp(`^isInside\\s+example\\.cases\\s+FAILED\\s+${result.runs}\\s+${result.cases}\\s`, "m"));
    expect(text).toContain(`judged: ${result.cases} cases in ${result.runs} runs\n`);
  });
});

describe("shrinking under a deadline", () => {
  // Any list breaks the rule: shrinking takes each number but the smallest down to 1, a candidate
  // each, so a list of many more numbers than the floor takes more candidates than the floor.
  const property = (length: number, checked: number[][] = []): AuditProperty<number[]> => ({
    id: "example.shrink",
    gate: "isInside",
    kind: "guarantee",
    title: "an example whose shrinking takes as many candidates as its list is long",
    needs: ["isInside"],
    consequence: "hardening broken",
    threat: () => "the model's input alone",
    arbitrary: fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: length, maxLength: length }),
    render: (value) => value.join(","),
    check: async (_target, value) => {
      checked.push(value);
      violation(`${value.length} numbers`);
    },
  });
  const target = { label: "m.mjs", isInside: () => true };

  it("past the deadline, stops after SHRINK_FLOOR_CANDIDATES candidates with the smallest failing case found, and says so", async () => {
    const checked: number[][] = [];
    const stopped = await runProperty(property(400, checked), target, { seed: 5, runs: 10, shrinkDeadlineMs: 0 });
    expect(stopped).toMatchObject({ status: "failed", shrinkStopped: true });
    // The first value failed; every candidate after it up to the floor was checked, none after.
    expect(checked).toHaveLength(1 + SHRINK_FLOOR_CANDIDATES);
    const full = await runProperty(property(400), target, { seed: 5, runs: 10 });
    expect(full.counterexample).toBe(Array<number>(400).fill(1).join(","));
    expect(stopped.counterexample).not.toBe(full.counterexample);
  });

  it("shrinks to the end within the floor, on any machine: the floor is a count, not a time", async () => {
    for (const options of [{ shrinkDeadlineMs: 0 }, {}]) {
      const short = await runProperty(property(2), target, { seed: 5, runs: 10, ...options });
      expect(short).toMatchObject({ status: "failed", counterexample: "1,1" });
      expect(short.shrinkStopped).toBeUndefined();
    }
  });

  it("is the time budget's: a failure whose shrink is long stops when its share is spent, and every report says so", async () => {
    // lexical-fallback's faults.tools shrinks through some fifteen hundred candidates at seed 8 (seed 1
    // did until the trees' generators changed, issue 46).
    const module = "fixtures/vulnerable/lexical-fallback.ts";
    const [json, junit, sarif] = ["stopped.json", "stopped.xml", "stopped.sarif"].map((name) => join(scratch, name));
    const { code, stdout } = await cli("audit", module, "--only", "faults.tools", "--time", "1", "--seed", "8", "--json", json!, "--junit", junit!, "--sarif", sarif!);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^\w+\s+faults\.tools\s+FAILED\s/m);
    expect(stdout).toMatch(new RegExp(`\\n {4}${SHRINK_STOPPED}\\n {4}replay: `));
    const [result] = (JSON.parse(await readFile(json!, "utf8")) as JsonReport).results;
    expect(result).toMatchObject({ id: "faults.tools", shrinkStopped: true });
    expect(result?.counterexample).not.toContain(SHRINK_STOPPED);
    // The replay does the reported case, shrinking nothing: the same counterexample, without the mark.
    const words = (result?.replay ?? "").split(" ");
    const replayed = await cli(...words.slice(words.indexOf("audit")));
    expect(replayed.code).toBe(1);
    expect(replayed.stdout).toContain(`counterexample:\n${(result?.counterexample ?? "").split("\n").map((line) => `      ${line}`).join("\n")}\n    replay: `);
    for (const file of [junit, sarif]) expect(await readFile(file!, "utf8")).toContain(SHRINK_STOPPED);
  });
});

describe("a property that cannot judge this target", () => {
  const property: AuditProperty<number> = {
    id: "example.notApplicable",
    gate: "isInside",
    kind: "guarantee",
    title: "an example that needs what the target lacks",
    needs: ["isInside"],
    consequence: "hardening broken",
    threat: () => "the model's input alone",
    notApplicable: () => "needs a win32 path API the target does not take",
    arbitrary: fc.nat(),
    render: String,
    check: () => Promise.reject(new Error("a property that is not applicable must not run")),
  };

  it("is reported as not applicable, apart from skipped, and is no regression against a baseline that passed it", async () => {
    const target = { label: "m.mjs", isInside: () => true };
    const result = await runProperty(property, target, { seed: 1, runs: 5 });
    expect(result).toMatchObject({ status: "not-applicable", runs: 0, reason: "needs a win32 path API the target does not take" });
    const report: AuditReport = { ...BARE, target: "m.mjs", seed: 1, runs: 5, results: [result] };
    const text = renderText(report, "npx workspace-gates audit", ["m.mjs"]);
    expect(text).toMatch(/^isInside\s+example\.notApplicable\s+not applicable\s+0\s/m);
    expect(text).toContain("    not applicable: needs a win32 path API the target does not take\n");
    expect(text).toMatch(/^audit: 0 passed, 0 failed, 0 skipped, 1 not applicable$/m);
    expect(summarize([result], DEFAULT_VERDICT)).toMatchObject({ notApplicable: 1, skipped: 0, failed: 0 });
    expect(compareWithBaseline("b.json", new Map([[property.id, "passed"]]), [result], false).regressions).toEqual([]);
    const { cases } = parseJUnit(toJUnit(toJson(report, "npx workspace-gates audit", ["m.mjs"])));
    expect(cases.get(property.id)?.skipped?.message).toBe("not applicable: needs a win32 path API the target does not take");
  });
});

describe("the threat a failure needs", () => {
  // Values are lists of links; any list fails, so the same case without its links fails too, and needed less.
  const checked: number[][] = [];
  const property: AuditProperty<number[]> = {
    id: "example.threat",
    gate: "workspacePath",
    kind: "guarantee",
    title: "an example that fails with or without its links",
    needs: ["isInside"],
    consequence: "hardening broken",
    threat: (links) => (links.length > 0 ? "a link inside the workspace" : "the model's input alone"),
    lesserCases: (links) => (links.length > 0 ? [[]] : []),
    arbitrary: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
    render: (links) => JSON.stringify(links),
    check: async (_target, links) => {
      checked.push(links);
      violation(`${links.length} links`);
    },
  };
  const target = { label: "m.mjs", isInside: () => true };

  it("judges a failed case again without its links, and reports the lesser threat when that fails too", async () => {
    checked.length = 0;
    const result = await runProperty(property, target, { seed: 1, runs: 10 });
    expect(result).toMatchObject({ status: "failed", threat: "the model's input alone" });
    expect(checked.at(-1)).toEqual([]);
  });

  it("does not judge it again when told to stop at the first failure: the threat is the case's own", async () => {
    checked.length = 0;
    const result = await runProperty(property, target, { seed: 1, runs: 10, stopAtFirstFailure: true });
    expect(result).toMatchObject({ status: "failed", threat: "a link inside the workspace" });
    expect(checked).toHaveLength(1);
  });
});

describe("--fail-on", () => {
  it("fails on escapes, harm, broken defences and unattacked tools by default; conventions only with --strict; wording only with --conformance or --strict", () => {
    expect(DEFAULT_FAIL_ON).toEqual([
      "outside changed",
      "outside read",
      "approval bypassed",
      "inside destroyed",
      "protected changed",
      "protected read",
      "misreported",
      "outside revealed",
      "protected revealed",
      "unavailable",
      "hardening broken",
      "not attacked",
    ]);
    expect(STRICT_FAIL_ON).toEqual([...DEFAULT_FAIL_ON, "convention differs"]);
    expect(Object.keys(CONSEQUENCES).filter((consequence) => !STRICT_FAIL_ON.includes(consequence as Consequence))).toEqual(["wording differs"]);
    expect(ESCAPES).toEqual(["outside changed", "outside read"]);
  });

  it("warns of a failure whose consequence it leaves out: reported, not failing the run", async () => {
    const json = join(scratch, "tolerated.json");
    const sarif = join(scratch, "tolerated.sarif");
    const junit = join(scratch, "tolerated.xml");
    const { code, stdout } = await cli("audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "isInside.posix", "--seed", "2", "--runs", "30", "--fail-on", "outside-revealed,unavailable", "--json", json, "--sarif", sarif, "--junit", junit);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^isInside\s+isInside\.posix\s+warning\s/m);
    expect(stdout).toContain(
      "warnings, which do not fail the run (--fail-on outside changed,outside read,outside revealed,unavailable leaves out their consequences): isInside.posix (hardening broken)\n",
    );
    expect(stdout).toMatch(/^audit: 1 passed, 0 failed, 0 skipped, 1 warning$/m);
    const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
    expect(report.failOn).toEqual(["outside changed", "outside read", "outside revealed", "unavailable"]);
    expect(report.summary).toMatchObject({ failed: 0, warnings: 1 });
    const log = JSON.parse(await readFile(sarif, "utf8")) as { runs: [{ results: { level: string }[] }] };
    expect(log.runs[0].results.map((result) => result.level)).toEqual(["warning"]);
    const { cases } = parseJUnit(await readFile(junit, "utf8"));
    expect(cases.get("isInside.posix")?.failure).toBeUndefined();
    expect(cases.get("isInside.posix")?.["system-out"]).toMatch(/^warning: the verdict's rule leaves out its consequence \(hardening broken\)/);
  }, 60_000);

  it("can never switch an escape off", async () => {
    const { code, stdout } = await cli("audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.read", "--seed", "2", "--runs", "30", "--fail-on", "unavailable");
    expect(code).toBe(1);
    expect(stdout).toMatch(/^workspacePath\s+containment\.read\s+FAILED\s/m);
  }, 60_000);

  it("refuses an unknown consequence, wording, and a baseline beside it, naming the flag and the rule (exit 2)", async () => {
    const cases: [string[], string][] = [
      [["--fail-on", "outside written"], `--fail-on: unknown consequence "outside written"; the consequences are ${STRICT_FAIL_ON.join(", ")}`],
      [["--fail-on", ","], "--fail-on needs at least one consequence"],
      [["--fail-on", "wording differs"], "--fail-on: wording differs is not a guarantee's consequence; --conformance makes differing texts fail the run"],
      [["--fail-on", "unavailable", "--baseline", "fixtures/baseline.json"], "--fail-on and --baseline are two verdicts: give one"],
    ];
    for (const [flags, message] of cases) {
      const { code, stderr } = await cli("audit", ...flags, "--only", "isInside.posix");
      expect(code, flags.join(" ")).toBe(2);
      expect(stderr).toContain(message);
    }
  });

  it("against a baseline that failed the same property, an escape still fails the run", async () => {
    const baseline = join(scratch, "escaping-baseline.json");
    await cli("audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.read", "--seed", "2", "--runs", "30", "--json", baseline);
    const { code, stdout } = await cli("audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.read", "--seed", "2", "--runs", "30", "--baseline", baseline);
    expect(stdout).toContain("regressions (passed there, failed or skipped here): none");
    expect(stdout).toContain("escaped, which fails the run whatever the baseline: containment.read\n");
    expect(code).toBe(1);
  }, 60_000);
});
