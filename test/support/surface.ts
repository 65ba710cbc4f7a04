// What the surface's tests and sweeps share: each property at its default budget, the seeds at which it
// missed a target, and the test MCP server serving a module of fixtures/surface.
import { DEFAULT_RUNS } from "../../src/kit/audit/command/budget.js";
import { PROPERTIES } from "../../src/kit/audit/properties/index.js";
import { disposeSandboxes } from "../../src/kit/audit/runner/property.js";
import { runProperty } from "../../src/kit/audit/runner/run.js";
import { parseMapping, readMapping } from "../../src/kit/mcp/mapping.js";
import { type McpAuditTarget, mcpTarget } from "../../src/kit/mcp/target.js";
import type { AuditTarget } from "../../src/kit/operations/target.js";
import { served } from "./tools-server.js";

export const SEEDS = Array.from({ length: 20 }, (_, index) => index + 1);
export const SECURE = "fixtures/surface/surface.ts";
export const MAPPING_FILE = "fixtures/mcp/tools-server.json";

/** The command that serves `module`'s tools over MCP (fixtures/mcp/tools-server.ts, compiled). */
export { served };

export const property = (id: string) => {
  const found = PROPERTIES.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`a catalogue names unknown property ${id}`);
  return found;
};

/** The runs `workspace-gates audit` gives a property at its default budget. */
export const defaultRuns = (id: string) => Math.max(1, Math.round(DEFAULT_RUNS * (property(id).budgetScale ?? 1)));

/** The seeds at which `id`, at its default budget, did not fail the target; sandboxes and servers are kept from seed to seed. */
export async function missedSeeds(target: AuditTarget, id: string, seeds: readonly number[]): Promise<number[]> {
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

/**
 * The seeds at which `id`, at its default budget, did not pass the target: a correct twin must pass
 * every one. Sandboxes, and the servers started on them, are kept from seed to seed, as `missedSeeds` does.
 */
export async function failedSeeds(target: AuditTarget, id: string, seeds: readonly number[] = SEEDS): Promise<number[]> {
  const failed: number[] = [];
  try {
    for (const seed of seeds) if ((await runProperty(property(id), target, { seed, runs: defaultRuns(id), keepSandboxes: true })).status !== "passed") failed.push(seed);
  } finally {
    await disposeSandboxes();
  }
  return failed;
}

/** `body` with a target serving `module` over MCP with the mapping in `mappingFile`, disposed after; answers the body's answer and whether a server failed. */
export async function overMcp<R>(module: string, body: (target: McpAuditTarget) => Promise<R>, mappingFile = MAPPING_FILE): Promise<{ answer: R; serverFailure: string | undefined }> {
  return overServer(served(module), body, await readMapping(mappingFile));
}

/** `body` with the MCP server `command` starts (`{root}` its root; a Python one, say) as the target, under `mapping` (default: the default mapping), disposed after. */
export async function overServer<R>(
  command: readonly string[],
  body: (target: McpAuditTarget) => Promise<R>,
  mapping = parseMapping("{}", "the default mapping"),
): Promise<{ answer: R; serverFailure: string | undefined }> {
  const target = mcpTarget([...command], mapping);
  try {
    await target.prepare();
    return { answer: await body(target), serverFailure: target.serverFailure };
  } finally {
    await target.dispose();
  }
}
