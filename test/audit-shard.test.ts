// The budget: `--time` shares its seconds among the properties that run, each taking an equal part of
// what the ones before it left; `--shard K/N` runs disjoint blocks of each property's cases that add up
// to the unsharded run (the same cases, none twice, none lost), and `merge` turns the shards' reports
// into that run's verdict and case count.
import fc from "fast-check";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, useScratch } from "./support/cli.js";
import { junitSchemaErrors, multitoolErrors, parseJUnit, sarifValidator } from "./support/ci-reports.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import type { AuditProperty } from "../src/kit/audit/runner/property.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { failsRun } from "../src/kit/audit/reports/verdict.js";
import { mergeReports } from "../src/kit/audit/reports/merge.js";
import { ESCAPES } from "../src/kit/findings/findings.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { parseShard, shardBlock } from "../src/kit/audit/runner/shard.js";
import { referenceTarget } from "../src/kit/operations/target.js";
import { timeShares } from "../src/kit/audit/command/budget.js";

const scratch = useScratch("workspace-gates-shard-test-");

describe("the time budget's shares", () => {
  it("gives each property an equal part of what the ones before it left, never less than nothing", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.array(fc.integer({ min: 0, max: 60_000 }), { minLength: 1, maxLength: 40 }), (totalMs, spentMs) => {
        const shares = timeShares(totalMs, spentMs.length);
        let left = totalMs;
        spentMs.forEach((spent, index) => {
          const share = shares.next();
          expect(share).toBeCloseTo(left / (spentMs.length - index), 6);
          expect(share).toBeGreaterThanOrEqual(0);
          shares.spent(spent);
          left = Math.max(0, left - spent);
        });
      }),
    );
  });

  it("hands the time a fast property left to the next, and takes a slow one's overrun from it", () => {
    const shares = timeShares(40_000, 4);
    expect(shares.next()).toBe(10_000);
    shares.spent(1_000);
    expect(shares.next()).toBe(13_000);
    shares.spent(25_000);
    expect(shares.next()).toBe(7_000);
  });
});

describe("shard blocks", () => {
  it("cover every case of the budget exactly once, for any budget and shard count", () => {
    fc.assert(
      fc.property(fc.nat({ max: 5_000 }), fc.integer({ min: 1, max: 64 }), (runs, count) => {
        const cases = Array.from({ length: count }, (_, index) => shardBlock(runs, { index: index + 1, count })).flatMap(({ firstRun, runs: taken }) =>
          Array.from({ length: taken }, (_, offset) => firstRun + offset),
        );
        expect(cases).toEqual(Array.from({ length: runs }, (_, index) => index));
      }),
    );
  });

  it.each([["0/4"], ["5/4"], ["1/0"], ["a/b"], ["1"], ["-1/2"]])("refuses %s", (text) => {
    expect(parseShard(text)).toBeUndefined();
  });
});

describe("a sharded run draws the unsharded run's cases", () => {
  const recording = (property: AuditProperty<unknown>, seen: string[]): AuditProperty<unknown> => ({
    ...property,
    check: async (_target, value) => {
      seen.push(fc.stringify(value));
    },
  });

  it.each(["containment.read", "fields.tools", "isInside.win32"])("%s: four shards, the same cases in the same order", async (id) => {
    const property = PROPERTIES.find((candidate) => candidate.id === id)!;
    const target = await referenceTarget();
    const whole: string[] = [];
    await runProperty(recording(property, whole), target, { seed: 11, runs: 60 });
    const sharded: string[] = [];
    for (let index = 1; index <= 4; index++) await runProperty(recording(property, sharded), target, { seed: 11, ...shardBlock(60, { index, count: 4 }) });
    expect(whole).toHaveLength(60);
    expect(sharded).toEqual(whole);
  });
});

describe("workspace-gates audit --shard and merge", () => {
  const only = ["--only", "isInside.posix,containment.read,fields.nulBytes"];

  async function shards(module: string[], count: number): Promise<string[]> {
    const files: string[] = [];
    for (let index = 1; index <= count; index++) {
      const file = join(scratch.path, `${module.join("-").replaceAll("/", "_")}-${index}.json`);
      // Each shard writes its SARIF too: a shard uploaded alone must be as acceptable as the merge.
      await cli(["audit", ...module, ...only, "--runs", "30", "--seed", "5", "--shard", `${index}/${count}`, "--json", file, "--sarif", file.replace(/\.json$/, ".sarif")]);
      files.push(file);
    }
    return files;
  }

  it("four shards merged give the unsharded run's verdict and case count", { timeout: 120_000 }, async () => {
    const wholeFile = join(scratch.path, "whole.json");
    const whole = await cli(["audit", ...only, "--runs", "30", "--seed", "5", "--json", wholeFile]);
    const mergedFile = join(scratch.path, "merged.json");
    const merged = await cli(["merge", ...(await shards([], 4)), "--json", mergedFile]);
    expect(merged.code, merged.stdout + merged.stderr).toBe(whole.code);
    expect(whole.code).toBe(0);
    const counted = async (file: string) => (JSON.parse(await readFile(file, "utf8")) as JsonReport).results.map(({ id, status, runs, cases }) => ({ id, status, runs, cases }));
    const expected = await counted(wholeFile);
    expect(await counted(mergedFile)).toEqual(expected);
    // containment.read takes a fifth of the runs, and its trees carry several probes, each a case.
    expect(expected.map(({ id, runs }) => [id, runs])).toEqual([["fields.nulBytes", 30], ["isInside.posix", 30], ["containment.read", 6], ["coverage.tools", 0]]);
    expect(expected.find(({ id }) => id === "containment.read")?.cases).toBeGreaterThan(6 * 5);
    const cases = expected.reduce((sum, result) => sum + result.cases, 0);
    expect(merged.stdout).toMatch(new RegExp(`^merge: 4 passed, 0 failed, 0 skipped, ${cases} cases$`, "m"));
    expect(whole.stdout).toMatch(new RegExp(`^judged: ${cases} cases in 66 runs$`, "m"));
    // Every shard attacked read; no shard's write was selected: the merged coverage says both.
    const coverage = (file: string) => readFile(file, "utf8").then((text) => (JSON.parse(text) as JsonReport).coverage.map(({ tool, verdict }) => [tool, verdict]));
    expect(await coverage(mergedFile)).toEqual(await coverage(wholeFile));
  });

  it("a fork that one shard catches fails the merged verdict, in JUnit and SARIF as the unsharded run reports it", { timeout: 120_000 }, async () => {
    const module = ["fixtures/vulnerable/similar-prefix.ts"];
    const reports = (name: string) => ({ junit: join(scratch.path, `${name}.xml`), sarif: join(scratch.path, `${name}.sarif`) });
    const [wholeFiles, mergedFiles] = [reports("whole"), reports("merged")];
    const whole = await cli(["audit", ...module, ...only, "--runs", "30", "--seed", "5", "--junit", wholeFiles.junit, "--sarif", wholeFiles.sarif]);
    const shardFiles = await shards(module, 4);
    const merged = await cli(["merge", ...shardFiles, "--junit", mergedFiles.junit, "--sarif", mergedFiles.sarif]);
    expect(whole.code).toBe(1);
    expect(merged.code, merged.stdout).toBe(1);
    expect(merged.stdout).toMatch(/^isInside\.posix\s+FAILED/m);
    // The merge's text says what the failure costs and what it needs, as the unsharded run's does.
    const costs = (stdout: string) => /isInside\.posix\s+FAILED[^]*?\n\s+consequence: (.*)\n\s+threat: (.*)\n/.exec(stdout)?.slice(1);
    expect(costs(merged.stdout)).toEqual(["hardening broken", "the model's input alone"]);
    expect(costs(merged.stdout)).toEqual(costs(whole.stdout));
    const failing = async (file: string) =>
      [...parseJUnit(await readFile(file, "utf8")).cases.values()].filter((testcase) => testcase.failure !== undefined).map((testcase) => testcase.name);
    expect(await failing(mergedFiles.junit)).toEqual(await failing(wholeFiles.junit));
    expect(await failing(mergedFiles.junit)).toContain("isInside.posix");
    const { validate, errors } = await sarifValidator();
    const sarif = JSON.parse(await readFile(mergedFiles.sarif, "utf8")) as {
      runs: [{ results: { ruleId: string; partialFingerprints: Record<string, string>; locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }[] }];
    };
    expect(validate(sarif), JSON.stringify(errors())).toBe(true);
    const wholeSarif = JSON.parse(await readFile(wholeFiles.sarif, "utf8")) as typeof sarif;
    expect(sarif.runs[0].results.map((result) => result.ruleId)).toEqual(wholeSarif.runs[0].results.map((result) => result.ruleId));
    expect(sarif.runs[0].results[0]?.locations[0]?.physicalLocation.artifactLocation.uri).toBe(module[0]);
    // The merge is the same finding as the unsharded run's: code scanning keeps one alert for both.
    const fingerprints = (log: typeof sarif) => log.runs[0].results.map((result) => result.partialFingerprints);
    expect(fingerprints(sarif)).toEqual(fingerprints(wholeSarif));
    expect(await multitoolErrors([wholeFiles.sarif, mergedFiles.sarif, ...shardFiles.map((file) => file.replace(/\.json$/, ".sarif"))])).toEqual([]);
    for (const file of [wholeFiles.junit, mergedFiles.junit]) expect(await junitSchemaErrors(await readFile(file, "utf8"))).toEqual([]);
  });

  it("hides no escape a later shard saw behind an earlier shard's lesser failure of the same property", async () => {
    const files = await shards([], 2);
    // As if --fail-on left hardening out, shard 1 broke a hardening rule and shard 2 changed the outside.
    const failing = { status: "failed", threat: "the model's input alone", reason: "r", counterexample: "c" } as const;
    const [first, second] = await Promise.all(
      files.map(async (file, index) => {
        const report = JSON.parse(await readFile(file, "utf8")) as JsonReport;
        const [result, ...rest] = report.results as [JsonReport["results"][number], ...JsonReport["results"]];
        const consequence = index === 0 ? "hardening broken" : "outside changed";
        return { ...report, failOn: ESCAPES, results: [{ ...result, ...failing, consequence }, ...rest] } as JsonReport;
      }),
    );
    const [merged] = mergeReports([first!, second!]).results;
    expect(merged).toMatchObject({ consequence: "hardening broken", alsoSeen: ["outside changed"] });
    expect(failsRun(merged!, { conformance: false, failOn: ESCAPES })).toBe(true);
  });

  it("exits 2 when a merged report cannot be written", async () => {
    const result = await cli(["merge", ...(await shards([], 2)), "--junit", join(scratch.path, "no-such-dir", "merged.xml")]);
    expect(result).toMatchObject({ code: 2, stderr: expect.stringMatching(/^merge: cannot write .*merged\.xml: ENOENT/m) });
  });

  it("refuses shards that do not make up one run: one missing, one twice, another seed", async () => {
    const files = await shards([], 3);
    const missing = await cli(["merge", files[0]!, files[2]!]);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining("missing shard 2/3") });
    const twice = await cli(["merge", files[0]!, files[1]!, files[1]!, files[2]!]);
    expect(twice).toMatchObject({ code: 2, stderr: expect.stringContaining("shard 2/3 is given twice") });
    const other = join(scratch.path, "other-seed.json");
    await cli(["audit", ...only, "--runs", "30", "--seed", "6", "--shard", "2/3", "--json", other]);
    const mixed = await cli(["merge", files[0]!, other, files[2]!]);
    expect(mixed).toMatchObject({ code: 2, stderr: expect.stringContaining("another seed") });
    // A shard from another release may draw and count other cases from the same seed.
    const older = join(scratch.path, "older.json");
    const report = JSON.parse(await readFile(files[1]!, "utf8")) as JsonReport;
    await writeFile(older, JSON.stringify({ ...report, tool: { ...report.tool, version: "0.0.1" } }));
    const versions = await cli(["merge", files[0]!, older, files[2]!]);
    expect(versions).toMatchObject({ code: 2, stderr: expect.stringMatching(/shard 2\/3 was written by workspace-gates 0\.0\.1, shard 1\/3 by \d/) });
  });

  it.each([
    [["audit", "--shard", "3/2", "--seed", "1"], /--shard must be K\/N/],
    [["audit", "--shard", "1/2"], /--shard needs --seed/],
    [["audit", "--runs", "5", "--time", "5"], /--runs and --time are two budgets/],
    [["merge"], /give the shards' JSON reports/],
  ])("%j is a usage error", async (argv, message) => {
    const { code, stderr } = await cli([...argv]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
