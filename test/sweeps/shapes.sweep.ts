// Every planted bug of fixtures/shapes (a path in a list's items, a patch's headers, a file:// URI, a
// chmod no operation fits, a server's resources) dies at the audit's default budget at every seed from
// 1 to 20, in process and over MCP (resources: over MCP only): each of these tools is one of several
// that play its operation, so a seed meets it only through the calls that pick it. The correct twin
// passes at seeds 1 to 5, both ways, by each property that kills a fork: where it was ever failed
// falsely (containment.other over MCP at seeds 1 to 5, commit 1dd4de3); a twin's pass at a few seeds
// beside every fork's death at twenty is what issue 50 asks, and twenty seeds of passing runs took
// most of the sweeps' time.
import { describe, expect, it } from "vitest";
import { SHAPES_MAPPING, SHAPE_VARIANTS } from "../../fixtures/shapes/catalog.js";
import { loadTarget } from "../../src/kit/operations/target.js";
import { runProperty } from "../../src/kit/audit/runner/run.js";
import { disposeSandboxes } from "../../src/kit/audit/runner/property.js";
import type { AuditTarget } from "../../src/kit/operations/target.js";
import { SEEDS, defaultRuns, missedSeeds, overMcp, property } from "../support/surface.js";

const caught = SHAPE_VARIANTS.flatMap((variant) => variant.caughtBy.map((id) => [variant.module, id] as const));

describe("each planted bug of fixtures/shapes dies at the default budget for every seed 1..20", () => {
  it.each(caught.filter(([module]) => SHAPE_VARIANTS.find((variant) => variant.module === module)?.mcpOnly !== true))("%s is killed by %s in process", async (module, id) => {
    expect(await missedSeeds(await loadTarget(`fixtures/shapes/${module}.ts`), id, SEEDS), `seeds where ${id} missed ${module}`).toEqual([]);
  });

  it.each(caught)("%s is killed by %s over MCP", async (module, id) => {
    const { answer: missed, serverFailure } = await overMcp(`fixtures/shapes/${module}.ts`, (target) => missedSeeds(target, id, SEEDS), SHAPES_MAPPING);
    expect(missed, `seeds where ${id} missed ${module} over MCP`).toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});

// The seeds where the twin was ever failed falsely (over MCP, containment.other, 1dd4de3), and so more than the few a pass needs.
const TWIN_SEEDS = [1, 2, 3, 4, 5];

/** The seeds at which `id` did not pass the target: a correct twin must pass every one. Sandboxes and servers are kept from seed to seed, as missedSeeds keeps them. */
async function failedSeeds(target: AuditTarget, id: string): Promise<number[]> {
  const failed: number[] = [];
  try {
    for (const seed of TWIN_SEEDS) if ((await runProperty(property(id), target, { seed, runs: defaultRuns(id), keepSandboxes: true })).status !== "passed") failed.push(seed);
  } finally {
    await disposeSandboxes();
  }
  return failed;
}

describe("the correct twin (fixtures/shapes/shapes.ts) passes at seeds 1..5, where it was once failed falsely", () => {
  const attacking = [...new Set(SHAPE_VARIANTS.flatMap((variant) => variant.caughtBy))];
  it.each(attacking)("%s in process and over MCP", async (id) => {
    expect(await failedSeeds(await loadTarget("fixtures/shapes/shapes.ts"), id), "in process").toEqual([]);
    const { answer: failed, serverFailure } = await overMcp("fixtures/shapes/shapes.ts", (target) => failedSeeds(target, id), SHAPES_MAPPING);
    expect(failed, "over MCP").toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});
