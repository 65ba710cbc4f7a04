// The verdict at a seed depends on the target and the seed, never on the machine's load (issue 49):
// a run cut short is unjudged, never failed; counts never go negative; the floor of runs is always
// run, and "too slow to judge" is for a target whose own calls are slow. Each case injects the slow
// part (a case that waits, a clock that jumps) rather than relying on real load.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type AuditProperty, violation } from "../src/kit/audit/runner/property.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { SLOW_FACTOR, type Share, budgetShares, targetAllowanceMs, runWithinTime, runsTimeMs, shortOfFloor } from "../src/kit/audit/command/budget.js";
import { verdict } from "../src/kit/audit/reports/verdict.js";
import { parseAuditArgs } from "../src/kit/audit/command/flags.js";
import { cli, useScratch } from "./support/cli.js";
import { awaitingTarget, foldCases, recordCall } from "../src/kit/operations/surface.js";
import { targetFromModule } from "../src/kit/operations/target.js";
import { containmentRead } from "../src/kit/audit/properties/operations.js";

const target = { label: "m.mjs", isInside: () => true };
const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** A property over numbers whose check `check` is; every value it saw is pushed on `seen`. */
function example(check: (value: number) => Promise<void> | void, more: Partial<AuditProperty<number>> = {}): AuditProperty<number> {
  return {
    id: "example.budget",
    gate: "isInside",
    kind: "guarantee",
    title: "an example of the time budget",
    needs: ["isInside"],
    consequence: "hardening broken",
    threat: () => "the model's input alone",
    arbitrary: fc.nat({ max: 1_000 }),
    render: String,
    check: async (_target, value) => check(value),
    ...more,
  };
}

describe("a run cut short by its deadline", () => {
  // fast-check 4.11 reports a check interrupted by interruptAfterTimeLimit before any run succeeded as
  // failed, with no counterexample: on a busy machine a correct server's properties read "FAILED,
  // hardening broken, counterexample: (none)", reason "null".
  it("is not failed when its first case outlasts the deadline: a failure always carries a counterexample", async () => {
    let started = 0;
    let ended = 0;
    const result = await runProperty(
      example(async () => {
        started += 1;
        await sleep(200);
        ended += 1;
      }),
      target,
      { seed: 1, runs: 5, interruptAfterMs: 20 },
    );
    expect(result.status).toBe("passed");
    expect(result).toMatchObject({ cutShort: true });
    expect(result.counterexample).toBeUndefined();
    // The case that started ran to its end: none is abandoned to go on beside the next property. (On
    // a loaded machine the first case may start past the 20 ms, and then none does.)
    expect(started).toBeLessThanOrEqual(1);
    expect(ended).toBe(started);
    expect(result.runs).toBe(started);
  });

  it("still fails, with its counterexample, when a run it judged broke the rule", async () => {
    const result = await runProperty(
      example(async (value) => {
        await sleep(30);
        violation(`broke at ${value}`);
      }),
      target,
      { seed: 1, runs: 5, interruptAfterMs: 10 },
    );
    expect(result.status).toBe("failed");
    expect(result.counterexample).not.toBe("(none)");
    expect(result.reason).toMatch(/^broke at \d+$/);
  });
});

describe("the cases a run counts", () => {
  // An MCP audit row read "judged -18 cases in 1 of the 10 runs … about -35 s": a case that folded
  // some of its probes onto others and was then cut at its deadline took its folded cases off twice.
  it("are never negative when a case that folded some is cut at its deadline", async () => {
    const result = await runProperty(
      example(
        () => {
          foldCases(3);
          recordCall("read_file");
        },
        { casesIn: () => 10 },
      ),
      target,
      { seed: 1, runs: 1, caseDeadlineMs: -1 },
    );
    expect(result.cases).toBeGreaterThanOrEqual(0);
    expect(result).toMatchObject({ status: "passed", cutShort: true, cases: 0, unjudged: 7 });
  });
});

/** A share of `ms` each, the target's calls priced at `callMs`. */
const share = (ms: number, callMs: number, more: Partial<Share> = {}): Share => ({ runsMs: ms, fairMs: ms, totalMs: ms, shrinkMs: ms, callMs, ...more });

describe("the floor of runs", () => {
  // At load ~10 a correct module got exit 2, "too slow to judge … about --time 80", and a server whose
  // calls took a median 0.4 ms "the target is too slow": the share's wall time was spent by the machine.
  it("is always run when the machine is slow and the target's calls are fast: load stretches the wall time, never the verdict", async () => {
    const result = await runWithinTime(
      example(async () => {
        // The audit's own work is slow (a busy machine); the target answers at once.
        await sleep(5);
        await awaitingTarget(Promise.resolve(recordCall("read_file")));
      }),
      target,
      { seed: 1, runs: 10 },
      share(1, 0.01),
    );
    expect(result).toMatchObject({ status: "passed", runs: 10 });
    expect(result.shortOfFloor).toBeUndefined();
    expect(result.cutShort).toBeUndefined();
  });

  it("is cut for a target whose own calls are slow, which the verdict names with their measured time", async () => {
    // Each run waits 30 ms on the target's answers against a budget of 10 ms, all one share: its
    // allowance, SLOW_FACTOR shares (40 ms), is spent within two runs, and no run starts after them.
    const result = await runWithinTime(
      example(() => {
        recordCall("read_file");
        return awaitingTarget(sleep(30));
      }),
      target,
      { seed: 1, runs: 10 },
      share(10, 30),
    );
    expect(result.status).toBe("passed");
    expect(result.runs).toBeGreaterThanOrEqual(1);
    expect(result.runs).toBeLessThanOrEqual(2);
    expect(targetAllowanceMs(share(10, 30))).toBe(SLOW_FACTOR * 10);
    expect(result.targetMs).toBeGreaterThanOrEqual(SLOW_FACTOR * 10);
    expect(result.shortOfFloor).toMatchObject({ floorRuns: 10, callMs: 30 });
    expect(result.shortOfFloor?.neededMs).toBeGreaterThanOrEqual(30 * 10);
    const why = shortOfFloor([result]);
    expect(why).toMatch(/^the target is too slow to judge at this budget: its calls take a median 30 ms, and 1 property \(example\.budget\) ran short/);
    expect(verdict(result, { conformance: false, failOn: [] })).toBe("too slow to judge");
  });

  it("lets a property's floor keep the target busy for the whole budget, or four fair shares when that is more", () => {
    // A property whose calls are costly by nature (sequences.bash spawns a shell a call) read "too
    // slow to judge" at a fair share, on a quiet machine.
    expect(targetAllowanceMs({ totalMs: 40_000, fairMs: 40_000 / 30 })).toBe(40_000);
    expect(targetAllowanceMs({ totalMs: 6_000, fairMs: 6_000 })).toBe(24_000);
  });

  it("is cut by --max-time only, and then the audit is named with the machine's load, not the target", async () => {
    const result = await runWithinTime(
      example(() => recordCall("read_file")),
      target,
      { seed: 1, runs: 10 },
      share(1_000, 0.01, { maxTime: { at: performance.now() - 1, seconds: 7 } }),
    );
    expect(result).toMatchObject({ status: "passed", runs: 0, shortOfFloor: { floorRuns: 10, maxTimeSeconds: 7 } });
    expect(result.shortOfFloor?.callMs).toBeUndefined();
    expect(shortOfFloor([result])).toMatch(/^the audit reached --max-time 7 before 1 property \(example\.budget\) ran the runs every verdict needs; the target's calls were fast enough for this budget, and the machine's load was [\d.]+ on \d+ cores/);
    expect(verdict(result, { conformance: false, failOn: [] })).toBe("cut at --max-time");
  });

  // A slow server (150 ms a call) read "too slow to judge" only after a minute at --time 4: the first
  // run of a tree-based property, 100-odd calls, went to its end whatever the target's time was.
  it("is cut inside the run under way once the target's own time is spent: its calls so far judged, the rest unjudged, never a pass", async () => {
    const reference = await import("../src/index.js");
    const slowTools = (root: string) =>
      reference.createWorkspaceTools(root).map((tool) => ({ spec: tool.spec, execute: async (input: unknown, signal?: AbortSignal) => (await sleep(10), tool.execute(input as never, signal)) }));
    const slow = targetFromModule("slow reference", { createWorkspaceTools: slowTools });
    const whole = await runProperty(containmentRead, slow, { seed: 1, runs: 1 });
    const cut = await runWithinTime(containmentRead, slow, { seed: 1, runs: 5 }, share(25, 10));
    expect(cut.runs).toBe(1);
    expect(cut.calls.read).toBeGreaterThan(0);
    expect(cut.calls.read).toBeLessThan(whole.calls.read ?? 0);
    expect(cut).toMatchObject({ status: "passed", cutShort: true, outOfTargetTime: true, shortOfFloor: { floorRuns: 5, callMs: 10 } });
    expect(cut.unjudged).toBeGreaterThan(0);
    expect(cut.cases + (cut.unjudged ?? 0)).toBe(whole.cases);
    expect(verdict(cut, { conformance: false, failOn: [] })).toBe("too slow to judge");
  });

  it("keeps a failure found before the cut, with its counterexample", async () => {
    const result = await runWithinTime(
      example(async (value) => {
        await awaitingTarget(sleep(30));
        if (value > 10) violation(`broke at ${value}`);
      }),
      target,
      { seed: 1, runs: 10 },
      share(10, 30),
    );
    expect(result.status).toBe("failed");
    expect(result.shortOfFloor).toBeUndefined();
    expect(result.counterexample).toBe("11");
  });
});

describe("the shrink's share", () => {
  // --time 10 on a small Python server: shrinking each failure took 18-30 s, and the properties after
  // them read "too slow to judge" for a target whose calls took 0.4 ms.
  it("comes from a pool of its own: a long shrink leaves the later properties' shares as they were", () => {
    const shares = budgetShares(40_000, 4, 0.5, undefined);
    expect(shares.next()).toMatchObject({ runsMs: 10_000, shrinkMs: 10_000, fairMs: 10_000 });
    shares.spent({ timeMs: 31_000, shrinkMs: 30_000 });
    expect(shares.next()).toMatchObject({ runsMs: 13_000, shrinkMs: 10_000 / 3 });
  });

  it("takes what it took from the shrink pool, not the runs' share", async () => {
    const result = await runProperty(
      example(async (value) => {
        await sleep(1);
        if (value > 10) violation(`broke at ${value}`);
      }),
      target,
      { seed: 1, runs: 10, shrinkDeadlineMs: 10_000 },
    );
    expect(result).toMatchObject({ status: "failed", counterexample: "11" });
    expect(result.shrinkMs).toBeGreaterThan(0);
    expect(runsTimeMs(result)).toBe(result.timeMs - (result.shrinkMs ?? 0));
  });
});

describe("--max-time", () => {
  it("caps a time budget, and is refused where it would cut every audit or has no budget to cap", () => {
    expect(parseAuditArgs(["--time", "10", "--max-time", "60"])).toMatchObject({ time: 10, maxTime: 60 });
    expect(parseAuditArgs([]).maxTime).toBeUndefined();
    expect(() => parseAuditArgs(["--time", "10", "--max-time", "5"])).toThrow(/^--max-time must be at least --time \(10\), got 5/);
    expect(() => parseAuditArgs(["--runs", "5", "--max-time", "60"])).toThrow(/^--max-time caps a time budget: give it without --runs or --path$/);
    expect(() => parseAuditArgs(["--max-time", "soon"])).toThrow(/^--max-time must be an integer/);
  });
});

describe("an audit that reaches --max-time", () => {
  const scratch = useScratch("workspace-gates-max-time-");
  // Three floors of fifty trees each, a hundred-odd cases a tree, cannot all run in one second: the cap
  // cuts them, and the exit says so, blaming neither the target nor the verdict.
  it("exits 2 naming the cap and the machine's load, and marks what it cut, in the closing line, the JSON and JUnit too", { timeout: 120_000 }, async () => {
    const [json, junit] = [join(scratch.path, "cut.json"), join(scratch.path, "cut.xml")];
    const { code, stdout, stderr } = await cli(["audit", "--only", "containment.workspacePath,precision.workspacePath,faults.workspacePath", "--time", "1", "--max-time", "1", "--seed", "1", "--json", json, "--junit", junit]);
    expect(code, stdout + stderr).toBe(2);
    expect(stderr).toMatch(/^audit: the audit reached --max-time 1 before \d propert(y|ies) \([a-zA-Z.,\s]+\) ran the runs every verdict needs; the target's calls were fast enough for this budget, and the machine's load was [\d.]+ on \d+ cores/m);
    expect(stdout).toMatch(/^workspacePath\s+\S+\s+cut at --max-time\s/m);
    expect(stdout).toMatch(/: the audit reached --max-time 1 first, though the target's calls were fast enough$/m);
    expect(stdout).not.toMatch(/FAILED/);
    // A run cut short is never counted as passed (a review found the closing line, the JSON summary and
    // JUnit all calling the cut properties passed while the exit was 2).
    const cut = (stdout.match(/^\S+\s+\S+\s+cut at --max-time\s/gm) ?? []).length;
    expect(cut).toBeGreaterThan(0);
    expect(stderr + stdout).toMatch(new RegExp(`^audit: \\d+ passed, 0 failed, 0 skipped, ${cut} cut at --max-time`, "m"));
    const report = JSON.parse(await readFile(json, "utf8")) as { summary: { passed: number; unjudged: number; total: number } };
    expect(report.summary.unjudged).toBe(cut);
    expect(report.summary.passed + report.summary.unjudged).toBeLessThanOrEqual(report.summary.total);
    const xml = await readFile(junit, "utf8");
    expect((xml.match(/<error message="cut at --max-time: /g) ?? []).length).toBe(cut);
    expect(xml).toContain(`errors="${cut}"`);
  });
});
