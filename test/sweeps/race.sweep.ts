// Every planted mistake of fixtures/race (a path's check reused after the tree changed) dies at the
// audit's default budget at every seed from 1 to 20, in process and over MCP; the chapter's tools, the
// correct twin, pass at every one of those seeds.
import { describe, expect, it } from "vitest";
import { RACE_VARIANTS } from "../../fixtures/race/catalog.js";
import { loadTarget, referenceTarget } from "../../src/kit/operations/target.js";
import { SEEDS, failedSeeds, missedSeeds, overMcp } from "../support/surface.js";

const caught = RACE_VARIANTS.flatMap((variant) => variant.caughtBy.map((id) => [variant.module, id] as const));

describe("each planted mistake of fixtures/race dies at the default budget for every seed 1..20", () => {
  it.each(caught)("%s is killed by %s in process", async (module, id) => {
    expect(await missedSeeds(await loadTarget(`fixtures/race/${module}.ts`), id, SEEDS), `seeds where ${id} missed ${module}`).toEqual([]);
  });

  it.each(caught)("%s is killed by %s over MCP", async (module, id) => {
    const { answer: missed, serverFailure } = await overMcp(`fixtures/race/${module}.ts`, (target) => missedSeeds(target, id, SEEDS));
    expect(missed, `seeds where ${id} missed ${module} over MCP`).toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});

describe("the chapter's tools pass at every seed 1..20", () => {
  const attacking = [...new Set(RACE_VARIANTS.flatMap((variant) => variant.caughtBy))];
  it.each(attacking)("%s in process and over MCP", async (id) => {
    expect(await failedSeeds(await referenceTarget(), id), "in process").toEqual([]);
    const { answer: failed, serverFailure } = await overMcp("reference", (target) => failedSeeds(target, id));
    expect(failed, "over MCP").toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});
