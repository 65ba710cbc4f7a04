// The boundary's holes of issue 51, served over MCP (fixtures/mcp/tools-server.ts), die at the audit's
// default budget for every seed from 1 to 20, as they do in process (kill-every-seed.sweep.ts): a
// server that expands `~` after its check reaches the home the audit gave it, each deny list's hole is
// found with the mapping's `protect`, and a server folding fullwidth forms after its check or keeping
// the rest of a path as text after a link loop is read and written through (containment.workspacePath
// judges an export, which a server has not). The test server's own mkdir protects nothing: excluded.
import { describe, expect, it } from "vitest";
import { VULNERABLE_VARIANTS } from "../../fixtures/vulnerable/catalog.js";
import { readMapping } from "../../src/kit/mcp/mapping.js";
import { mcpTarget } from "../../src/kit/mcp/target.js";
import { parseProtectPatterns } from "../../src/kit/operations/protected-paths.js";
import { MAPPING_FILE, SEEDS, missedSeeds, served } from "../support/surface.js";

const OVER_MCP = ["home-expanded", "folded-after-check", "loop-lexical-rest"];
const ROWS = VULNERABLE_VARIANTS.filter((variant) => OVER_MCP.includes(variant.module) || variant.protect !== undefined).map((variant) => ({
  ...variant,
  caughtBy: variant.caughtBy.filter((id) => id !== "containment.workspacePath"),
}));

describe("the boundary's holes over MCP die at every seed 1..20", () => {
  it.each(ROWS.flatMap((row) => row.caughtBy.map((id) => [row.module, id, row] as const)))("%s is killed by %s", async (module, id, row) => {
    const mapping = await readMapping(MAPPING_FILE);
    const target = mcpTarget(
      served(`fixtures/vulnerable/${module}.ts`),
      row.protect === undefined ? mapping : { ...mapping, protect: parseProtectPatterns(row.protect, "protect") },
      new Map([["mkdir", "the test server's own, which protects nothing"]]),
    );
    try {
      await target.prepare();
      expect(await missedSeeds(target, id, SEEDS), `seeds where ${id} missed ${module} over MCP`).toEqual([]);
      expect(target.serverFailure).toBeUndefined();
    } finally {
      await target.dispose();
    }
  });
});
