// A slow target gets a verdict within its budget (issue 46): the audit measures its pace, cuts a
// property whose floor of runs cannot fit its share, and ends without a green verdict, saying how
// slow the target is and what budget would do; a slow target with an escape still fails. The target
// is the test MCP server with every call delayed, one at a time (fixtures/mcp/tools-server.ts
// `--delay`), as a server doing slow work before each answer is.
import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_RUNS } from "../src/kit/audit/command/budget.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { cli, useScratch } from "./support/cli.js";
import { served } from "./support/tools-server.js";

const scratch = useScratch("workspace-gates-slow-test-");
/**
 * Each call this much slower, and a budget of `BUDGET` seconds: a run of containment.read makes about
 * 200 calls (150 of containment.write), so a floor of 10 runs needs some 40 s of the target's answers
 * against the 4 s (`SLOW_FACTOR` fair shares) this budget allows. Ten times short on a quiet machine,
 * and a busy one only adds to each answer's time; the first run, which nothing cuts, stays short.
 */
const DELAY_MS = 20;
const BUDGET = "2";
const slowly = (module: string) => ["--mcp", "--mapping", "fixtures/mcp/tools-server.json", "--", ...served(module, "--delay", String(DELAY_MS))];

/**
 * The reference with every call 20 ms slower, and its first call on a real name (after the pace is
 * measured) `COLD_MS` slower still, as a server that warms a cache or compiles a code path on first
 * use: a cold first run, priced at ten times itself, outlasts the slow shares; the runs after it fit.
 */
const COLD_MS = 4_000;
const COLD_START = `
import { createWorkspaceTools as reference } from ${JSON.stringify(resolve("src/index.ts"))};
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
let cold = true;
export const createWorkspaceTools = (root) =>
  reference(root).map((tool) => ({
    spec: tool.spec,
    async execute(input, signal) {
      if (cold && !String(input?.path).startsWith("no-such-file-measures")) {
        cold = false;
        await sleep(${COLD_MS});
      }
      await sleep(20);
      return tool.execute(input, signal);
    },
  }));
`;

describe("a target whose first run is cold", () => {
  // Regression: one cold run priced the floor at its own cost times the floor's runs, so a lesson's fix,
  // installed, ended "too slow to judge" (exit 2) while its runs took a fifth of a second each; and a
  // floor whose every run had been judged was still called short of itself.
  it("is priced by the runs its share ran, and runs the rest of its floor to a verdict (exit 0)", { timeout: 60_000 }, async () => {
    await writeFile(join(scratch.path, "cold-start.mjs"), COLD_START);
    const json = join(scratch.path, "cold.json");
    const { code, stdout, stderr } = await cli(["audit", join(scratch.path, "cold-start.mjs"), "--only", "containment.read", "--time", "6", "--seed", "1", "--json", json]);
    expect(code, stdout + stderr).toBe(0);
    const [read] = (JSON.parse(await readFile(json, "utf8")) as JsonReport).results;
    const floor = Math.round(DEFAULT_RUNS * (PROPERTIES.find((property) => property.id === "containment.read")?.budgetScale ?? 1));
    expect(read).toMatchObject({ id: "containment.read", status: "passed" });
    expect(read?.runs).toBeGreaterThanOrEqual(floor);
  });
});

describe("a target too slow for its budget", () => {
  it("ends without a verdict (exit 2), naming its pace, what ran short and the budget that would run every floor", { timeout: 180_000 }, async () => {
    const json = join(scratch.path, "slow.json");
    const { code, stdout, stderr } = await cli(["audit", "--only", "containment.read,containment.write", "--time", BUDGET, "--seed", "1", "--json", json, ...slowly("reference")]);
    expect(code, stdout + stderr).toBe(2);
    const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
    expect(report.time?.latencyMs).toBeGreaterThanOrEqual(DELAY_MS);
    expect(report.time?.serverStarts?.count).toBeGreaterThan(0);
    const short = report.results.filter((result) => result.shortOfFloor !== undefined).map((result) => result.id);
    expect(short).toEqual(["containment.read", "containment.write"]);
    expect(stderr).toMatch(new RegExp(`^audit: the target is too slow to judge at this budget: its calls take a median ${report.time?.latencyMs} ms, and 2 properties \\(containment\\.read, containment\\.write\\) ran short of the runs every verdict needs, their calls alone needing more than the budget gives; about --time \\d+ would run them all$`, "m"));
    for (const result of report.results.filter((each) => each.id !== "coverage.tools")) expect(result.shortOfFloor).toMatchObject({ callMs: report.time?.latencyMs, floorRuns: expect.any(Number) });
    expect(stdout).toMatch(/^workspacePath\s+containment\.read\s+too slow to judge\s/m);
    expect(stdout).toMatch(/^time: [\d.]+ s in all: [\d.]+ s in the properties, [\d.]+ s starting \d+ servers? \(some at once\); one call took a median [\d.]+ ms$/m);
    // A tool its property never reached in time is out of time, not unattacked: no finding stands on it.
    expect(report.coverage.filter((row) => row.verdict === "not attacked")).toEqual([]);
  });

  it("still fails on what it found before its share ran out (exit 1)", { timeout: 180_000 }, async () => {
    const { code, stdout } = await cli(["audit", "--only", "containment.read", "--time", BUDGET, "--seed", "1", ...slowly("fixtures/vulnerable/decoded-after-check.ts")]);
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/^workspacePath\s+containment\.read\s+FAILED\s/m);
  });
});
