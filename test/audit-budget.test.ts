// The verdict at a seed depends on the target and the seed, never on the machine's load (issue 49):
// a run cut short is unjudged, never failed; counts never go negative; the floor of runs is always
// run, and "too slow to judge" is for a target whose own calls are slow. Each case injects the slow
// part (a case that waits, a clock that jumps) rather than relying on real load.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type AuditProperty, violation } from "../src/kit/audit/runner/property.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { foldCases, recordCall } from "../src/kit/operations/surface.js";

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
    const result = await runProperty(
      example(() => sleep(200)),
      target,
      { seed: 1, runs: 5, interruptAfterMs: 20 },
    );
    expect(result.status).toBe("passed");
    expect(result).toMatchObject({ cutShort: true });
    expect(result.counterexample).toBeUndefined();
    // The case that started ran to its end: none is abandoned to go on beside the next property.
    expect(result.runs).toBe(1);
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
