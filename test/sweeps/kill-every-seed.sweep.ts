// The enumerated classes of issue 16, the variants only containment.write catches, the forks issue
// 46 found dying only at some seeds, the deny lists of issue 51 (audited with their --protect) and its `~` expanded after the check, die at the audit's default budget for every seed from 1 to 20, not
// only at the kill matrix's seed: each catalogue row marked `everySeed` is run against each of its
// catching properties, seeds 1..20, with the runs `workspace-gates audit` gives it by default.
import { describe, expect, it } from "vitest";
import { VULNERABLE_VARIANTS } from "../../fixtures/vulnerable/catalog.js";
import { variantTarget } from "../support/variant-target.js";
import { DEFAULT_RUNS } from "../../src/kit/audit/command/budget.js";
import { PROPERTIES } from "../../src/kit/audit/properties/index.js";
import { runProperty } from "../../src/kit/audit/runner/run.js";

const SEEDS = Array.from({ length: 20 }, (_, index) => index + 1);

const property = (id: string) => {
  const found = PROPERTIES.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`catalogue names unknown property ${id}`);
  return found;
};

describe("each enumerated class dies at the default budget for every seed 1..20", () => {
  const rows = VULNERABLE_VARIANTS.filter((variant) => variant.everySeed === true);

  it("covers the classes issue 16 names, the variants only containment.write catches, the official server's twin, and the forks issue 46 found dying only at lucky seeds", () => {
    const issue16 = ["array-input", "bash-no-max-buffer", "bash-no-output-cut", "bash-no-timeout", "case-insensitive", "coerced-field", "lossy-name", "root-as-given", "root-swapped"];
    const onlyWrite = VULNERABLE_VARIANTS.filter((variant) => variant.caughtBy.join() === "containment.write").map((variant) => variant.module);
    expect(onlyWrite).toEqual(["truncate-before-check", "mkdir-before-check", "refused-after-writing"]);
    const lucky = ["bash-in-root-as-given", "decoded-after-check"];
    const denyLists = ["protect-root-only", "protect-case-sensitive", "protect-not-through-links", "protect-decoded-after-check"];
    expect(rows.map((row) => row.module).sort()).toEqual([...issue16, ...onlyWrite, "quote-trimmed", ...lucky, ...denyLists, "home-expanded", "folded-after-check", "loop-lexical-rest"].sort());
  });

  it.each(rows.flatMap((row) => row.caughtBy.map((id) => [row.module, id, row] as const)))(
    "%s is killed by %s",
    async (module, id, row) => {
      const target = await variantTarget(row);
      const caught = property(id);
      const runs = Math.max(1, Math.round(DEFAULT_RUNS * (caught.budgetScale ?? 1)));
      // A case that waits out a timeout costs seconds and no CPU: those seeds run side by side.
      const together = caught.maxRuns !== undefined;
      const verdict = async (seed: number) => [seed, (await runProperty(caught, target, { seed, runs, stopAtFirstFailure: true })).status] as const;
      const verdicts = together ? await Promise.all(SEEDS.map(verdict)) : await SEEDS.reduce(async (done, seed) => [...(await done), await verdict(seed)], Promise.resolve([] as (readonly [number, string])[]));
      expect(verdicts.filter(([, status]) => status !== "failed").map(([seed]) => seed), `seeds where ${id} missed ${module} in ${runs} runs`).toEqual([]);
    },
    120_000,
  );
});
