import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { MUTATION_SECTION, type Mutant, type MutationReport, formatScore, judge, readResults, renderMarkdown, score, tally } from "../scripts/mutation-score.js";
import { readSection, wrapSection } from "../scripts/readme-section.js";

const STATIC = 'Static mutant (and "ignoreStatic" was enabled)';

/** A mutant by its status; "Equivalent" is one disabled by a comment that gives a reason, "Static" one a run skipped. */
function mutant(status: string): Mutant {
  if (status === "Equivalent") return { status: "Ignored", statusReason: "cannot change the result because …" };
  if (status === "Static") return { status: "Ignored", statusReason: STATIC };
  if (status === "Unexplained") return { status: "Ignored", statusReason: "Ignored using a comment", location: { start: { line: 7 } } };
  return { status };
}

function report(files: Record<string, string[]>): MutationReport {
  return { files: Object.fromEntries(Object.entries(files).map(([file, statuses]) => [file, { mutants: statuses.map(mutant) }])) };
}

describe("tally and score: Stryker's mutation score", () => {
  it("counts killed and timed-out mutants as detected, survivors and uncovered ones against, the rest not at all", () => {
    const counted = tally(["Killed", "Timeout", "Survived", "NoCoverage", "Equivalent", "Static", "CompileError", "RuntimeError"].map(mutant));
    expect(counted).toEqual({ detected: 2, undetected: 2, equivalent: 1, notRun: 1, invalid: 2 });
    expect(score(counted)).toBe(50);
  });

  it("has no score for a file whose mutants are all equivalent, not run or invalid", () => {
    expect(score(tally(["Equivalent", "Static", "CompileError"].map(mutant)))).toBeUndefined();
    expect(formatScore(undefined)).toBe("n/a");
  });

  it("rounds down, so 99.999 % never shows as 100", () => {
    expect(formatScore(99.999)).toBe("99.99 %");
  });
});

describe("judge: the bars of this repository", () => {
  const gates = ["src/gate.ts"];

  it.each([
    ["a gate at 100 % beside equivalents and invalid mutants", { "src/gate.ts": ["Killed", "Equivalent", "CompileError"] }, []],
    ["a gate with nothing to score", { "src/gate.ts": ["CompileError"] }, []],
    ["a gate with one survivor", { "src/gate.ts": ["Killed", "Killed", "Killed", "Survived"] }, ["src/gate.ts: 75.00 % (gate code must score 100 %)"]],
    ["a gate with an uncovered mutant", { "src/gate.ts": ["Killed", "NoCoverage"] }, ["src/gate.ts: 50.00 % (gate code must score 100 %)"]],
    ["a gate whose static mutants were skipped", { "src/gate.ts": ["Killed", "Static"] }, ["src/gate.ts: 1 static mutants not run (gate code is tested with its static mutants)"]],
    ["a gate missing from the results", { "src/other.ts": ["Killed"] }, ["src/gate.ts: not in the results, so not mutated"]],
    ["an equivalent without a reason", { "src/gate.ts": ["Killed"], "src/a.ts": ["Killed", "Unexplained"] }, ["src/a.ts:7: an equivalent mutant without a reason (write it after the Stryker disable comment)"]],
    ["the rest exactly at its bar, summed over files", { "src/gate.ts": ["Killed"], "src/a.ts": ["Killed", "Survived"], "src/b.ts": ["Killed", "Killed"] }, []],
    ["the rest at its bar only because static mutants do not count", { "src/gate.ts": ["Killed"], "src/a.ts": ["Killed", "Killed", "Killed", "Survived", "Static", "Static"] }, []],
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

describe("the committed results of the last mutation run", () => {
  it("meet the bars, and README shows exactly their scores", async () => {
    const verdict = judge(await readResults());
    expect(verdict.failures).toEqual([]);
    expect(readSection(await readFile("README.md", "utf8"), MUTATION_SECTION)).toBe(wrapSection(MUTATION_SECTION, renderMarkdown(verdict)));
  });
});
