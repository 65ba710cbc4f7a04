import { describe, expect, it } from "vitest";
import { type MutationReport, formatScore, judge, score, tally } from "../scripts/mutation-score.js";

function report(files: Record<string, string[]>): MutationReport {
  return { files: Object.fromEntries(Object.entries(files).map(([file, statuses]) => [file, { mutants: statuses.map((status) => ({ status })) }])) };
}

describe("tally and score: Stryker's mutation score", () => {
  it("counts killed and timed-out mutants as detected, survivors and uncovered ones against, the rest not at all", () => {
    const counted = tally(["Killed", "Timeout", "Survived", "NoCoverage", "Ignored", "CompileError", "RuntimeError"]);
    expect(counted).toEqual({ detected: 2, undetected: 2, equivalent: 1, invalid: 2 });
    expect(score(counted)).toBe(50);
  });

  it("has no score for a file whose mutants are all equivalent or invalid", () => {
    expect(score(tally(["Ignored", "CompileError"]))).toBeUndefined();
    expect(formatScore(undefined)).toBe("n/a");
  });

  it("rounds down, so 99.999 % never shows as 100", () => {
    expect(formatScore(99.999)).toBe("99.99 %");
  });
});

describe("judge: the bars of this repository", () => {
  const gates = ["src/gate.ts"];

  it.each([
    ["a gate at 100 % beside equivalents and invalid mutants", { "src/gate.ts": ["Killed", "Ignored", "CompileError"] }, []],
    ["a gate with nothing to score", { "src/gate.ts": ["CompileError"] }, []],
    ["a gate with one survivor", { "src/gate.ts": ["Killed", "Killed", "Killed", "Survived"] }, ["src/gate.ts: 75.00 % (gate code must score 100 %)"]],
    ["a gate with an uncovered mutant", { "src/gate.ts": ["Killed", "NoCoverage"] }, ["src/gate.ts: 50.00 % (gate code must score 100 %)"]],
    ["a gate missing from the report", { "src/other.ts": ["Killed"] }, ["src/gate.ts: not in the report, so not mutated"]],
    ["the rest exactly at its bar, summed over files", { "src/gate.ts": ["Killed"], "src/a.ts": ["Killed", "Survived"], "src/b.ts": ["Killed", "Killed"] }, []],
    ["the rest below its bar", { "src/gate.ts": ["Killed"], "src/a.ts": ["Killed", "Survived"], "src/b.ts": ["Survived"] }, ["the rest together: 33.33 % (must score at least 75 %)"]],
  ])("%s", (_label, files, failures) => {
    expect(judge(report(files), gates, 75).failures).toEqual(failures);
  });

  it("lists the gate files first", () => {
    const { rows } = judge(report({ "src/a.ts": ["Killed"], "src/gate.ts": ["Killed"], "src/b.ts": ["Killed"] }), gates, 75);
    expect(rows.map((row) => [row.file, row.gate])).toEqual([
      ["src/gate.ts", true],
      ["src/a.ts", false],
      ["src/b.ts", false],
    ]);
  });
});
