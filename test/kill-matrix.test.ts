// The kill matrix: every vulnerable fork in fixtures/vulnerable/ is failed by the properties its
// catalogue entry names, the unmodified template passes, and docs/lessons/ shows the committed matrix.
import fc from "fast-check";
import { readFile, readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { VULNERABLE_VARIANTS } from "../fixtures/vulnerable/catalog.js";
import { variantTarget } from "./support/variant-target.js";
import { fork } from "../fixtures/vulnerable/fork.js";
import { loopFork } from "../fixtures/vulnerable/loop-fork.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { notTheChapters } from "./support/chapter-surface.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { targetFromModule } from "../src/kit/operations/target.js";
import { readSectionFromFile, wrapSection } from "./support/generated-section.js";
import { KILL_BUDGET, KILL_MATRIX_FILE, KILL_MATRIX_SECTION, type KillMatrix, renderKillMatrix } from "./support/kill-matrix-table.js";

// A fixed seed keeps the matrix the same on every run (FC_SEED overrides it to explore). Each variant
// is run until its first failure, without shrinking: a kill needs one counterexample, not the smallest.
const seed = fc.readConfigureGlobal().seed ?? 1;

const property = (id: string) => {
  const found = PROPERTIES.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`catalogue names unknown property ${id}`);
  return found;
};

describe("the kill matrix", () => {
  it("starts from a template that, unmodified, keeps every guarantee", async () => {
    const template = targetFromModule("fork template", { ...fork(), runAgent: loopFork() });
    for (const candidate of PROPERTIES.filter((p) => p.kind === "guarantee")) {
      const result = await runProperty(candidate, template, { seed, runs: 15 });
      // The chapter's tools read and write: the other operations' properties have nothing to attack.
      const expected = notTheChapters(candidate.id) ? "not-applicable" : "passed";
      expect(result.status, `${candidate.id}: ${result.reason}\n${result.counterexample}`).toBe(expected);
    }
    // every guarantee, the calling layer's included, one after the other: minutes on a loaded machine
  }, 300_000);

  it.each(VULNERABLE_VARIANTS)("variant $module ($bugClass) is failed by $caughtBy", async (variant) => {
    const { module, caughtBy } = variant;
    expect(caughtBy.length, "a variant no property catches needs a new property").toBeGreaterThan(0);
    const target = await variantTarget(variant);
    for (const id of caughtBy) {
      const result = await runProperty(property(id), target, { seed, runs: KILL_BUDGET, stopAtFirstFailure: true });
      expect(result.status, `${id} did not catch ${module} in ${KILL_BUDGET} runs (seed ${seed})`).toBe("failed");
    }
  });

  it("lists every module of fixtures/vulnerable/ in the catalogue", async () => {
    const modules = (await readdir("fixtures/vulnerable")).filter((name) => !["fork.ts", "loop-fork.ts", "catalog.ts"].includes(name)).map((name) => name.replace(/\.ts$/, ""));
    expect(modules.sort()).toEqual(VULNERABLE_VARIANTS.map((variant) => variant.module).sort());
  });

  it("shows in docs/lessons exactly the matrix of the committed audit results, which agree with the catalogue", async () => {
    const matrix = JSON.parse(await readFile(KILL_MATRIX_FILE, "utf8")) as KillMatrix;
    expect(matrix.rows.map((row) => row.module).sort()).toEqual(VULNERABLE_VARIANTS.map((variant) => variant.module).sort());
    // Its columns are every guarantee the audit has now (a review found two new ones missing).
    expect(matrix.properties).toEqual(PROPERTIES.filter((property) => property.kind === "guarantee").map((property) => property.id));
    for (const variant of VULNERABLE_VARIANTS) {
      const row = matrix.rows.find((candidate) => candidate.module === variant.module);
      expect(row?.failed, variant.module).toEqual(expect.arrayContaining([...variant.caughtBy]));
    }
    expect(await readSectionFromFile(KILL_MATRIX_SECTION)).toBe(wrapSection(KILL_MATRIX_SECTION, renderKillMatrix(matrix)));
  });
});
