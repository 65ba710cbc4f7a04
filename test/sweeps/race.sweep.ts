// Every planted mistake of fixtures/race (a path's check no longer holding when it is used: reused
// after the tree changed between calls, or used after a wait during a call) dies at the audit's default
// budget at every seed from 1 to 20, in process, and over MCP where its property applies there; the
// correct twins pass at every one of those seeds.
import { describe, expect, it } from "vitest";
import { loadTarget } from "../../src/kit/operations/target.js";
import { SEEDS, failedSeeds, missedSeeds, overMcp } from "../support/surface.js";
import { RACE_CLAIMS, RACE_TWIN_CLAIMS, twinTarget } from "../support/race.js";

describe("each planted mistake of fixtures/race dies at the default budget for every seed 1..20", () => {
  it.each(RACE_CLAIMS.map(({ module, id }) => [module, id] as const))("%s is killed by %s in process", async (module, id) => {
    expect(await missedSeeds(await loadTarget(module), id, SEEDS), `seeds where ${id} missed ${module}`).toEqual([]);
  });

  it.each(RACE_CLAIMS.filter((claim) => claim.overMcp).map(({ module, id }) => [module, id] as const))("%s is killed by %s over MCP", async (module, id) => {
    const { answer: missed, serverFailure } = await overMcp(module, (target) => missedSeeds(target, id, SEEDS));
    expect(missed, `seeds where ${id} missed ${module} over MCP`).toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});

describe("the correct twins pass at every seed 1..20", () => {
  it.each(RACE_TWIN_CLAIMS.map(({ twin, id }) => [twin, id] as const))("%s passes %s in process, and over MCP where it applies", async (twin, id) => {
    expect(await failedSeeds(await twinTarget(twin), id), "in process").toEqual([]);
    if (id === "sequences.swapInCall") return;
    const { answer: failed, serverFailure } = await overMcp(twin, (target) => failedSeeds(target, id));
    expect(failed, "over MCP").toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});
