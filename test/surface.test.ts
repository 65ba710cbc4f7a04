// The whole surface (issue 31): the secure layer of fixtures/surface has a tool for every operation of
// the catalogue and passes every containment property, in process and served over MCP, with every tool
// attacked; each planted bug dies at the audit's default budget for seeds 1 to 20 (in process, and over
// MCP for the bug that kills its server), and over MCP at seed 1.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SURFACE_VARIANTS } from "../fixtures/surface/catalog.js";
import { DEFAULT_RUNS } from "../src/kit/audit/command.js";
import { OPERATION_PROPERTIES } from "../src/kit/audit/properties/operations.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { disposeSandboxes } from "../src/kit/audit/property.js";
import type { JsonReport } from "../src/kit/audit/report.js";
import { type PropertyResult, runProperty } from "../src/kit/audit/run.js";
import { OPERATIONS, containmentId } from "../src/kit/operations/catalog.js";
import { type AuditTarget, loadTarget, offeredTools } from "../src/kit/operations/target.js";
import { readMapping } from "../src/kit/mcp/mapping.js";
import { mcpTarget } from "../src/kit/mcp/target.js";
import { cli, useScratch } from "./support/cli.js";

const SEEDS = Array.from({ length: 20 }, (_, index) => index + 1);
const SECURE = "fixtures/surface/surface.ts";
const MAPPING_FILE = "fixtures/mcp/tools-server.json";
const served = (module: string) => ["node", "--import", "tsx", "fixtures/mcp/tools-server.ts", module, "{root}"];
const scratch = useScratch("workspace-gates-surface-test-");

const property = (id: string) => {
  const found = PROPERTIES.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`the surface catalogue names unknown property ${id}`);
  return found;
};
const defaultRuns = (id: string) => Math.max(1, Math.round(DEFAULT_RUNS * (property(id).budgetScale ?? 1)));

/** The seeds at which `id`, at its default budget, did not fail the target; sandboxes and servers are kept from seed to seed. */
async function missedSeeds(target: AuditTarget, id: string, seeds: readonly number[]): Promise<number[]> {
  const missed: number[] = [];
  try {
    for (const seed of seeds) {
      const result = await runProperty(property(id), target, { seed, runs: defaultRuns(id), stopAtFirstFailure: true, keepSandboxes: true });
      if (result.status !== "failed") missed.push(seed);
    }
  } finally {
    await disposeSandboxes();
  }
  return missed;
}

afterAll(() => disposeSandboxes());

describe("the secure surface", () => {
  it("offers a tool for every operation of the catalogue, each taken for it by its name", async () => {
    const offered = offeredTools(await loadTarget(SECURE));
    for (const { id } of OPERATIONS) {
      const playing = offered.filter(({ classification }) => classification.kind === "operation" && classification.operation === id);
      expect(playing.map(({ classification }) => classification.kind === "operation" && classification.by), id).toEqual(["name"]);
    }
    expect(offered.find((tool) => tool.name === "bash")?.classification.kind).toBe("no path");
  });

  it.each(OPERATION_PROPERTIES.map((operation) => operation.id))("passes %s at the default budget", { timeout: 60_000 }, async (id) => {
    const secure = await loadTarget(SECURE);
    const result: PropertyResult = await runProperty(property(id), secure, { seed: 1, runs: defaultRuns(id) });
    expect(result.status, `${result.reason}\n${result.counterexample}`).toBe("passed");
    expect(result.cases).toBeGreaterThan(defaultRuns(id));
  });
});

describe("each planted bug dies at the default budget for every seed 1..20, in process", () => {
  it.each(SURFACE_VARIANTS.filter((variant) => variant.mcpOnly !== true).flatMap((variant) => variant.caughtBy.map((id) => [variant.module, id] as const)))(
    "%s is killed by %s",
    { timeout: 120_000 },
    async (module, id) => {
      expect(await missedSeeds(await loadTarget(`fixtures/surface/${module}.ts`), id, SEEDS), `seeds where ${id} missed ${module}`).toEqual([]);
    },
  );
});

describe("over MCP (fixtures/mcp/tools-server.ts serving the surface)", () => {
  it("audits the secure surface green through the audit command, with every tool it lists attacked", { timeout: 180_000 }, async () => {
    const json = join(scratch.path, "surface.json");
    const only = OPERATION_PROPERTIES.map((operation) => operation.id).join(",");
    const { code, stdout, stderr } = await cli(["audit", "--only", only, "--runs", "25", "--seed", "1", "--json", json, "--mcp", "--mapping", MAPPING_FILE, "--", ...served(SECURE)]);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
    for (const { id } of OPERATIONS) expect(report.results.find((result) => result.id === containmentId(id))?.status, id).toBe("passed");
    expect(report.coverage.filter((row) => row.verdict !== "attacked").map((row) => row.tool)).toEqual([]);
    expect(report.coverage.map((row) => row.tool).sort()).toEqual(["copy", "delete", "edit", "find", "grep", "ls", "mkdir", "move", "read", "read_many", "stat", "tree", "write"]);
  });

  it.each(SURFACE_VARIANTS.flatMap((variant) => variant.caughtBy.map((id) => [variant.module, id, variant.mcpOnly === true ? SEEDS : [1]] as const)))(
    "%s is killed by %s at the default budget (seeds %j)",
    // A crash over 20 seeds: every case that kills the server is done again on a fresh one before it counts.
    { timeout: 300_000 },
    async (module, id, seeds) => {
      const target = mcpTarget(served(`fixtures/surface/${module}.ts`), await readMapping(MAPPING_FILE));
      try {
        await target.prepare();
        expect(await missedSeeds(target, id, seeds), `seeds where ${id} missed ${module} over MCP`).toEqual([]);
      } finally {
        await target.dispose();
      }
      expect(target.serverFailure).toBeUndefined();
    },
  );
});
