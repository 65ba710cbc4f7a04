// The kill matrix: every vulnerable fork in fixtures/vulnerable/ is failed by the properties its
// catalogue entry names, the unmodified template passes, and docs/lessons/ shows the committed matrix.
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { VULNERABLE_VARIANTS, type VulnerableVariant } from "../fixtures/vulnerable/catalog.js";
import { variantTarget } from "./support/variant-target.js";
import { fork } from "../fixtures/vulnerable/fork.js";
import { loopFork } from "../fixtures/vulnerable/loop-fork.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { notTheChapters } from "./support/chapter-surface.js";
import { startCli } from "./support/child-cli.js";
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

/**
 * A fork that reads the process's home is audited by a child, on its main thread, as a user runs it:
 * in a worker thread (Stryker's test pool) the HOME a case sets is the thread's copy of the
 * environment, which os.homedir() never reads, so the fork would read the real home and pass.
 */
const readsHome = (module: string) => /homedir\(|\bHOME\b/.test(readFileSync(`fixtures/vulnerable/${module}.ts`, "utf8"));

/** The property's verdict on the variant from `workspace-gates audit` in a child, with the runs the in-process row gives it. */
async function verdictInChild(variant: VulnerableVariant, id: string): Promise<{ status: string | undefined; output: string }> {
  // The command scales --runs by the property's budgetScale; this gives the property KILL_BUDGET runs.
  const runs = Math.ceil(KILL_BUDGET / (property(id).budgetScale ?? 1));
  expect(Math.round(runs * (property(id).budgetScale ?? 1))).toBe(KILL_BUDGET);
  const tmp = await mkdtemp(join(tmpdir(), "workspace-gates-kill-"));
  try {
    const report = join(tmp, "report.json");
    const protect = variant.protect === undefined ? [] : ["--protect", variant.protect.join(",")];
    const argv = ["audit", `fixtures/vulnerable/${variant.module}.ts`, "--only", id, "--runs", String(runs), "--seed", String(seed), "--json", report, ...protect];
    const { stdout, stderr } = await startCli(argv, tmp).ended;
    const results = (JSON.parse(await readFile(report, "utf8")) as { results: { id: string; status: string }[] }).results;
    return { status: results.find((result) => result.id === id)?.status, output: `${stdout}${stderr}` };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

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

  // A row in a child takes a process start and a shrink besides its runs: minutes on a loaded machine.
  it.each(VULNERABLE_VARIANTS)("variant $module ($bugClass) is failed by $caughtBy", { timeout: 180_000 }, async (variant) => {
    const { module, caughtBy } = variant;
    expect(caughtBy.length, "a variant no property catches needs a new property").toBeGreaterThan(0);
    if (readsHome(module)) {
      for (const id of caughtBy) {
        const { status, output } = await verdictInChild(variant, id);
        expect(status, `${id} did not catch ${module} in ${KILL_BUDGET} runs (seed ${seed}), audited in a child:\n${output}`).toBe("failed");
      }
      return;
    }
    const target = await variantTarget(variant);
    for (const id of caughtBy) {
      const result = await runProperty(property(id), target, { seed, runs: KILL_BUDGET, stopAtFirstFailure: true });
      expect(result.status, `${id} did not catch ${module} in ${KILL_BUDGET} runs (seed ${seed})`).toBe("failed");
    }
  });

  it("audits in a child exactly the forks that read the process's home", () => {
    // home-expanded is the one today: a rewrite the pattern no longer sees would run it in a thread again.
    expect(VULNERABLE_VARIANTS.filter((variant) => readsHome(variant.module)).map((variant) => variant.module)).toEqual(["home-expanded"]);
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
