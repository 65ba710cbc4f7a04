// Every planted bug of fixtures/surface dies at the audit's default budget at every seed from 1 to 20
// in process; over MCP at seed 1, and at every seed for a bug that kills its server (only a server
// can die of it) or that only an opening of every tree meets (audit/arbitraries/openings.ts: optional
// arguments, name twins, special files, long chains and paths), since over MCP each of its calls is a
// round trip of its own.
import { describe, expect, it } from "vitest";
import { SURFACE_VARIANTS } from "../../fixtures/surface/catalog.js";
import { loadTarget } from "../../src/kit/operations/target.js";
import { SEEDS, missedSeeds, overMcp } from "../support/surface.js";

const caught = (variants: typeof SURFACE_VARIANTS) => variants.flatMap((variant) => variant.caughtBy.map((id) => [variant.module, id] as const));

describe("each planted bug dies at the default budget for every seed 1..20, in process", () => {
  it.each(caught(SURFACE_VARIANTS.filter((variant) => variant.mcpOnly !== true)))("%s is killed by %s", async (module, id) => {
    expect(await missedSeeds(await loadTarget(`fixtures/surface/${module}.ts`), id, SEEDS), `seeds where ${id} missed ${module}`).toEqual([]);
  });
});

describe("over MCP, each planted bug dies at seed 1, and each an opening meets or that kills its server at every seed 1..20", () => {
  const everySeed = (variant: (typeof SURFACE_VARIANTS)[number]) => variant.mcpOnly === true || variant.opening !== undefined;
  it.each(SURFACE_VARIANTS.flatMap((variant) => variant.caughtBy.map((id) => [variant.module, id, everySeed(variant) ? SEEDS : [1]] as const)))(
    "%s is killed by %s at seeds %j",
    // A crash: a case that kills the server is done again on a fresh one before it counts.
    async (module, id, seeds) => {
      const { answer: missed, serverFailure } = await overMcp(`fixtures/surface/${module}.ts`, (target) => missedSeeds(target, id, seeds));
      expect(missed, `seeds where ${id} missed ${module} over MCP`).toEqual([]);
      expect(serverFailure).toBeUndefined();
    },
  );
});
