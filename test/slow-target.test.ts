// A slow target gets a verdict within its budget (issue 46): the audit measures its pace, cuts a
// property whose floor of runs cannot fit its share, and ends without a green verdict, saying how
// slow the target is and what budget would do; a slow target with an escape still fails. The target
// is the test MCP server with every call delayed, one at a time (fixtures/mcp/tools-server.ts
// `--delay`), as a server doing slow work before each answer is.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JsonReport } from "../src/kit/audit/report.js";
import { cli, useScratch } from "./support/cli.js";

const scratch = useScratch("workspace-gates-slow-test-");
const DELAY_MS = 150;
const slowly = (module: string) => ["--mcp", "--mapping", "fixtures/mcp/tools-server.json", "--", "node", "--import", "tsx", "fixtures/mcp/tools-server.ts", module, "{root}", "--delay", String(DELAY_MS)];

describe("a target too slow for its budget", () => {
  it("ends without a verdict (exit 2), naming its pace, what ran short and the budget that would run every floor", { timeout: 180_000 }, async () => {
    const json = join(scratch.path, "slow.json");
    const { code, stdout, stderr } = await cli(["audit", "--only", "containment.read,containment.write", "--time", "4", "--seed", "1", "--json", json, ...slowly("reference")]);
    expect(code, stdout + stderr).toBe(2);
    const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
    expect(report.time?.latencyMs).toBeGreaterThanOrEqual(DELAY_MS);
    expect(report.time?.serverStarts?.count).toBeGreaterThan(0);
    const short = report.results.filter((result) => result.shortOfFloor !== undefined).map((result) => result.id);
    expect(short).toEqual(["containment.read", "containment.write"]);
    expect(stderr).toMatch(new RegExp(`^audit: the target is too slow to judge at this budget: its calls take a median ${report.time?.latencyMs} ms, and 2 properties ran short of the runs every verdict needs \\(containment\\.read, containment\\.write\\); (about|more than) --time \\d+ would run`, "m"));
    expect(stdout).toMatch(/^workspacePath\s+containment\.read\s+too slow to judge\s/m);
    expect(stdout).toMatch(/^time: [\d.]+ s in all: [\d.]+ s in the properties, [\d.]+ s starting \d+ servers? \(some at once\); one call took a median [\d.]+ ms$/m);
    // A tool its property never reached in time is out of time, not unattacked: no finding stands on it.
    expect(report.coverage.filter((row) => row.verdict === "not attacked")).toEqual([]);
  });

  it("still fails on what it found before its share ran out (exit 1)", { timeout: 180_000 }, async () => {
    const { code, stdout } = await cli(["audit", "--only", "containment.read", "--time", "15", "--seed", "1", ...slowly("fixtures/vulnerable/decoded-after-check.ts")]);
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/^workspacePath\s+containment\.read\s+FAILED\s/m);
  });
});
