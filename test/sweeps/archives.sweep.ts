// Every planted bug of fixtures/archives (names joined unchecked, an entry written through a link the
// archive made, Python's tarfile.extractall with no filter) dies at the audit's default budget at
// every seed from 1 to 20, in process and over MCP (the Python server: over MCP alone); the correct
// twins (fixtures/archives/archives.ts, and the Python server with the data filter) pass at every one.
import { describe, expect, it } from "vitest";
import { ARCHIVE_VARIANTS, PYTHON_TWIN } from "../../fixtures/archives/catalog.js";
import { loadTarget } from "../../src/kit/operations/target.js";
import { SEEDS, failedSeeds, missedSeeds, overMcp, overServer } from "../support/surface.js";

const TWIN = "fixtures/archives/archives.ts";

const caught = ARCHIVE_VARIANTS.flatMap((variant) => variant.caughtBy.map((id) => [variant.target, id] as const));
const named = (target: (typeof caught)[number][0]) => ("module" in target ? target.module : target.server.join(" "));

describe("each planted bug of fixtures/archives dies at the default budget for every seed 1..20", () => {
  it.each(caught.filter(([target]) => "module" in target).map(([target, id]) => [named(target), id, target] as const))("%s is killed by %s in process", async (_name, id, target) => {
    if (!("module" in target)) throw new Error("a server is audited over MCP alone");
    expect(await missedSeeds(await loadTarget(`fixtures/archives/${target.module}.ts`), id, SEEDS)).toEqual([]);
  });

  it.each(caught.map(([target, id]) => [named(target), id, target] as const))("%s is killed by %s over MCP", async (_name, id, target) => {
    const { answer: missed, serverFailure } = "module" in target ? await overMcp(`fixtures/archives/${target.module}.ts`, (served) => missedSeeds(served, id, SEEDS)) : await overServer(target.server, (served) => missedSeeds(served, id, SEEDS));
    expect(missed, `seeds where ${id} missed it over MCP`).toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});

describe("the correct twins pass at every seed 1..20", () => {
  const attacking = [...new Set(ARCHIVE_VARIANTS.flatMap((variant) => variant.caughtBy))];
  it.each(attacking)("%s: fixtures/archives/archives.ts in process", async (id) => {
    expect(await failedSeeds(await loadTarget(TWIN), id, SEEDS)).toEqual([]);
  });

  it.each(attacking)("%s: fixtures/archives/archives.ts over MCP", async (id) => {
    const { answer, serverFailure } = await overMcp(TWIN, (target) => failedSeeds(target, id, SEEDS));
    expect(answer).toEqual([]);
    expect(serverFailure).toBeUndefined();
  });

  it.each(attacking)("%s: the Python server with the data filter, over MCP", async (id) => {
    const { answer, serverFailure } = await overServer(PYTHON_TWIN, (target) => failedSeeds(target, id, SEEDS));
    expect(answer).toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});
