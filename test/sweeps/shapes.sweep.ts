// Every planted bug of fixtures/shapes (a path in a list's items, a patch's headers, a file:// URI) dies
// at the audit's default budget at every seed from 1 to 20, in process and over MCP: each of these
// tools is one of several that play its operation, so a seed meets it only through the calls that
// pick it.
import { describe, expect, it } from "vitest";
import { SHAPE_VARIANTS } from "../../fixtures/shapes/catalog.js";
import { loadTarget } from "../../src/kit/operations/target.js";
import { SEEDS, missedSeeds, overMcp } from "../support/surface.js";

const caught = SHAPE_VARIANTS.flatMap((variant) => variant.caughtBy.map((id) => [variant.module, id] as const));

describe("each planted bug of fixtures/shapes dies at the default budget for every seed 1..20", () => {
  it.each(caught.filter(([module]) => SHAPE_VARIANTS.find((variant) => variant.module === module)?.mcpOnly !== true))("%s is killed by %s in process", async (module, id) => {
    expect(await missedSeeds(await loadTarget(`fixtures/shapes/${module}.ts`), id, SEEDS), `seeds where ${id} missed ${module}`).toEqual([]);
  });

  it.each(caught)("%s is killed by %s over MCP", async (module, id) => {
    const { answer: missed, serverFailure } = await overMcp(`fixtures/shapes/${module}.ts`, (target) => missedSeeds(target, id, SEEDS));
    expect(missed, `seeds where ${id} missed ${module} over MCP`).toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});
