// Every finding is small (issue 49): at the default budget, a planted fork's counterexample holds only
// the calls and tree lines its failure needs, however many openings every tree lays out. The openings
// are left out wholesale first (droppable.ts, `allOf`), and leaving one out keeps the drawn probes as
// they were (`stableChain`): before, a one-path `startsWith` bug kept a tree of some ninety lines, and a
// create-before-check fork 76 lines and 96 calls after two minutes of shrinking.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { cli, useScratch } from "./support/cli.js";

const scratch = useScratch("workspace-gates-small-counterexamples-test-");

/** The most calls and tree lines a planted fork's counterexample may hold at the default budget. */
const MOST_CALLS = 3;
const MOST_TREE_LINES = 6;

const FORKS: readonly [module: string, properties: string][] = [
  ["fixtures/vulnerable/similar-prefix.ts", "containment.read,containment.write"],
  ["fixtures/vulnerable/mkdir-before-check.ts", "containment.write"],
  ["fixtures/vulnerable/parent-only.ts", "containment.read,containment.write"],
  ["fixtures/vulnerable/refused-after-writing.ts", "containment.write"],
];

describe("a planted fork's counterexample at the default budget", () => {
  it.each(FORKS)(`%s (%s): at most ${MOST_CALLS} calls and ${MOST_TREE_LINES} tree lines, shrunk to its end`, async (module, properties) => {
    const json = join(scratch.path, `${module.replaceAll("/", "-")}.json`);
    const { code, stdout } = await cli(["audit", module, "--only", properties, "--seed", "1", "--json", json]);
    expect(code, stdout).toBe(1);
    const failed = (JSON.parse(await readFile(json, "utf8")) as JsonReport).results.filter((result) => result.status === "failed");
    expect(failed.map((result) => result.id).sort()).toEqual(properties.split(",").sort());
    for (const result of failed) {
      expect(result.shrinkStopped, `${result.id}\n${result.counterexample}`).toBeUndefined();
      expect(result.case?.calls.length, `${result.id}\n${result.counterexample}`).toBeLessThanOrEqual(MOST_CALLS);
      expect(result.case?.workspace?.tree.length ?? 0, `${result.id}\n${result.counterexample}`).toBeLessThanOrEqual(MOST_TREE_LINES);
    }
  }, 120_000);
});
