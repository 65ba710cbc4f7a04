// The mutation summary: Stryker's score per file, the bars of this repository, staleness against the
// files as they are now, and the committed summary with the page generated from it.
import { readFile, readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { readSectionFromFile, wrapSection } from "./support/generated-section.js";
import {
  MUTATION_SECTION,
  type Mutant,
  type MutationSummary,
  SUMMARY_FILE,
  formatScore,
  gateFiles,
  judge,
  mergeRun,
  readSummary,
  mutatedFiles,
  renderMarkdown,
  repositoryBars,
  restFiles,
  score,
  sha256,
  summarizeRun,
  tally,
} from "./support/mutation-summary.js";
import { CHEAPEST_FIRST } from "../vitest.stryker.config.js";

const STATIC = 'Static mutant (and "ignoreStatic" was enabled)';

/** A mutant by its status; "Equivalent" is one disabled by a comment that gives a reason, "Static" one a run skipped. */
function mutant(status: string): Mutant {
  if (status === "Equivalent") return { status: "Ignored", statusReason: "cannot change the result because …" };
  if (status === "Static") return { status: "Ignored", statusReason: STATIC };
  if (status === "Unexplained") return { status: "Ignored", statusReason: "Ignored using a comment", location: { start: { line: 7 } } };
  return { status };
}

/** A summary whose gate run holds the gate files and whose rest run holds the others; each file's "source" is its name. */
function summary(files: Record<string, string[]>, gates: readonly string[]): MutationSummary {
  const run = (gate: boolean) =>
    summarizeRun({ files: Object.fromEntries(Object.entries(files).filter(([file]) => gates.includes(file) === gate).map(([file, statuses]) => [file, { source: file, mutants: statuses.map(mutant) }])) });
  return { gates: run(true), rest: run(false) };
}

const unchanged = (file: string) => sha256(file);

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
  const bars = { gates, gateBar: 100, restBar: 75 };

  it.each([
    ["a gate at 100 % beside equivalents and invalid mutants", { "src/gate.ts": ["Killed", "Equivalent", "CompileError"] }, []],
    ["a gate with nothing to score", { "src/gate.ts": ["CompileError"] }, []],
    ["a gate with one survivor", { "src/gate.ts": ["Killed", "Killed", "Killed", "Survived"] }, ["src/gate.ts: 75.00 % (gate code must score 100 %)"]],
    ["a gate with an uncovered mutant", { "src/gate.ts": ["Killed", "NoCoverage"] }, ["src/gate.ts: 50.00 % (gate code must score 100 %)"]],
    ["a gate whose static mutants were skipped", { "src/gate.ts": ["Killed", "Static"] }, ["src/gate.ts: 1 static mutants not run (gate code is tested with its static mutants)"]],
    ["a gate missing from the results", { "src/other.ts": ["Killed"] }, ["src/gate.ts: not mutated by the gate run (run npm run mutate:gates)"]],
    ["an equivalent without a reason", { "src/gate.ts": ["Killed"], "src/a.ts": ["Killed", "Unexplained"] }, ["src/a.ts:7: an equivalent mutant without a reason (write it after the Stryker disable comment)"]],
    ["the rest exactly at its bar, summed over files", { "src/gate.ts": ["Killed"], "src/a.ts": ["Killed", "Survived"], "src/b.ts": ["Killed", "Killed"] }, []],
    ["the rest at its bar only because static mutants do not count", { "src/gate.ts": ["Killed"], "src/a.ts": ["Killed", "Killed", "Killed", "Survived", "Static", "Static"] }, []],
    ["the rest below its bar", { "src/gate.ts": ["Killed"], "src/a.ts": ["Killed", "Survived"], "src/b.ts": ["Survived"] }, ["the rest together: 33.33 % (must score at least 75 %)"]],
  ])("%s", (_label, files, failures) => {
    expect(judge(summary(files, gates), unchanged, bars).failures).toEqual(failures);
  });

  it("fails a gate file that changed since the gate run measured it, and names the command that refreshes it", () => {
    const changed = (file: string) => (file === "src/gate.ts" ? sha256("edited") : sha256(file));
    expect(judge(summary({ "src/gate.ts": ["Killed"] }, gates), changed, bars).failures).toEqual(["src/gate.ts: changed since the gate run measured it (run npm run mutate:gates)"]);
    expect(judge(summary({ "src/gate.ts": ["Killed"] }, gates), () => undefined, bars).failures).toEqual(["src/gate.ts: changed since the gate run measured it (run npm run mutate:gates)"]);
  });

  it("lists a file of the rest that changed since, without failing on it", () => {
    const verdict = judge(summary({ "src/gate.ts": ["Killed"], "src/a.ts": ["Killed"] }, gates), (file) => (file === "src/a.ts" ? sha256("edited") : sha256(file)), bars);
    expect(verdict.failures).toEqual([]);
    expect(verdict.staleRest).toEqual(["src/a.ts"]);
  });

  it("keeps each equivalent mutant's reason, and no source text", () => {
    const entry = summary({ "src/gate.ts": ["Killed", "Equivalent"] }, gates).gates["src/gate.ts"];
    expect(entry?.equivalents).toEqual([{ line: 0, mutator: "?", replacement: "", reason: "cannot change the result because …" }]);
    expect(JSON.stringify(entry)).not.toContain("src/gate.ts");
  });

  it("leaves out the files of a pattern after !, as the rest run leaves out the gate code", async () => {
    const rest = await mutatedFiles(["src/kit/toctou/*.ts", "!src/kit/toctou/race.ts", "src/gates/fields.ts"]);
    expect(rest).toContain("src/kit/toctou/racer.ts");
    expect(rest).toContain("src/gates/fields.ts");
    expect(rest).not.toContain("src/kit/toctou/race.ts");
    expect(await restFiles()).not.toContain("src/gates/fields.ts");
  });

  it("reads the gate files from paths and globs as Stryker does", async () => {
    expect(await gateFiles(["src/gates/fields.ts", "src/kit/toctou/*.ts", "src/**/approval.ts"])).toEqual([
      "src/agent/approval.ts",
      "src/gates/fields.ts",
      ...(await readdir("src/kit/toctou")).filter((name) => name.endsWith(".ts")).map((name) => `src/kit/toctou/${name}`).sort(),
    ].sort());
  });

  it("lists the gate files first", () => {
    const { rows } = judge(summary({ "src/a.ts": ["Killed"], "src/gate.ts": ["Killed"], "src/b.ts": ["Killed"] }, gates), unchanged, bars);
    expect(rows.map((row) => [row.file, row.gate])).toEqual([
      ["src/gate.ts", true],
      ["src/a.ts", false],
      ["src/b.ts", false],
    ]);
  });
});

describe("mergeRun: a run's entry after a run over some of its files", () => {
  const results = (files: Record<string, string[]>) => ({ files: Object.fromEntries(Object.entries(files).map(([file, statuses]) => [file, { source: file, mutants: statuses.map(mutant) }])) });
  const before = summarizeRun(results({ "src/a.ts": ["Survived"], "src/b.ts": ["Killed"], "src/gone.ts": ["Killed"] }));
  const belongs = (file: string) => file !== "src/gone.ts";

  it("takes a measured file's new figures and keeps every other file that still belongs to the run, with its old hash", () => {
    const merged = mergeRun(before, results({ "src/a.ts": ["Killed", "Killed"] }), belongs);
    expect(Object.keys(merged)).toEqual(["src/a.ts", "src/b.ts"]);
    expect(merged["src/a.ts"]?.tally.detected).toBe(2);
    expect(merged["src/a.ts"]?.tally.undetected).toBe(0);
    expect(merged["src/b.ts"]).toEqual(before["src/b.ts"]);
  });

  it("adds a file the summary did not have, in order", () => {
    expect(Object.keys(mergeRun(before, results({ "src/0.ts": ["Killed"] }), belongs))).toEqual(["src/0.ts", "src/a.ts", "src/b.ts"]);
  });

  it("keeps what still belongs when this machine has no results of the run", () => {
    expect(mergeRun(before, undefined, belongs)).toEqual({ "src/a.ts": before["src/a.ts"], "src/b.ts": before["src/b.ts"] });
  });
});

describe("the committed summary of the last mutation runs", () => {
  // Whether a file changed since its run is npm run mutate:check's verdict in CI, not this test's:
  // npm test must pass without a Stryker run.
  it("docs/mutation.md shows exactly its scores and reasons", async () => {
    expect(await readSectionFromFile(MUTATION_SECTION), "the files of the rest run changed since the page was written: run npm run mutate:summary").toBe(
      wrapSection(MUTATION_SECTION, renderMarkdown(await readSummary(), await restFiles())),
    );
  });

  // The page lists the rest run's files from the summary and the files now; a file the summary keeps
  // must still be one the run would mutate, or the table shows figures of a file that is gone or moved.
  it("keeps figures only of files each run would mutate now", async () => {
    const committed = await readSummary();
    const rest = await restFiles();
    expect(Object.keys(committed.rest).filter((file) => !rest.includes(file))).toEqual([]);
    const gates = await gateFiles();
    expect(Object.keys(committed.gates).filter((file) => !gates.includes(file))).toEqual([]);
  });

  // CI holds the bar with mutate:check exactly when the summary meets it; until then the only misses
  // allowed are gate files below the bar that the page's Status section names.
  it("meets the bars when CI checks them, and otherwise misses only by gate scores that docs/mutation.md's Status names", async () => {
    const committed = await readSummary();
    const asMeasured = (file: string) => committed.gates[file]?.sha256 ?? committed.rest[file]?.sha256;
    const { failures } = judge(committed, asMeasured, { ...(await repositoryBars()), gates: Object.keys(committed.gates) });
    const ciChecks = /^npm run mutate:check$/m.test(await readFile(".ci/run", "utf8"));
    expect(ciChecks).toBe(failures.length === 0);
    const page = await readFile(MUTATION_SECTION.file, "utf8");
    const status = page.slice(page.indexOf("### Status"), page.indexOf("\n#", page.indexOf("### Status") + 1));
    for (const failure of failures) {
      const [, file] = /^(src\/\S+): \d+\.\d+ % \(gate code must score 100 %\)$/.exec(failure) ?? [];
      expect(file === undefined ? failure : status.includes(`\`${file}\``), failure).toBe(true);
    }
  });

  it("holds no machine path and no source text", async () => {
    const text = await readFile(SUMMARY_FILE, "utf8");
    expect(text).not.toMatch(/"\/(?:work|home|tmp|root|Users)\//);
    expect(text).not.toContain("import ");
  });
});

it("the order Stryker runs test files in names every test file, so a new one is placed, not guessed", async () => {
  const files = (await readdir("test")).filter((name) => name.endsWith(".test.ts")).map((name) => name.replace(/\.test\.ts$/, ""));
  expect([...CHEAPEST_FIRST].sort()).toEqual(files.sort());
});
