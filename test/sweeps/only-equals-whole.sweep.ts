// What lets the sweeps run a planted bug's catching properties alone (missedSeeds in
// test/support/surface.ts): a property's outcome at a seed is the same whether the audit runs it
// with every other property or alone with --only. The audit gives each property the audit's seed
// (command.ts), not a draw from a stream the properties before it advanced. Here a fork caught by
// three properties is audited whole and with --only its catchers, in process, at the default floor
// of runs (`--runs` without a number's 50), at two seeds: each catcher's result must be the same in
// both. Over MCP it is not shown: servers kept from property to property changed one verdict once
// (commit fda5c27), so the sweeps give each property over MCP servers of its own.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { VULNERABLE_VARIANTS } from "../../fixtures/vulnerable/catalog.js";
import { DEFAULT_RUNS } from "../../src/kit/audit/command/budget.js";
import type { JsonReport } from "../../src/kit/audit/reports/report.js";
import { cli, useScratch } from "../support/cli.js";

const scratch = useScratch("workspace-gates-only-sweep-");
const FORK = VULNERABLE_VARIANTS.find((variant) => variant.module === "decoded-after-check");

/** What a property's result says, its timing left out: the verdict, how far it ran, and the case it shows. */
async function outcomes(name: string, args: readonly string[]): Promise<Record<string, unknown>> {
  const json = join(scratch.path, `${name}.json`);
  const { code, stdout, stderr } = await cli(["audit", `fixtures/vulnerable/${FORK?.module}.ts`, "--runs", String(DEFAULT_RUNS), "--json", json, ...args]);
  expect(code, stdout + stderr).toBe(1);
  const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
  return Object.fromEntries(
    report.results
      .filter((result) => FORK?.caughtBy.includes(result.id))
      .map((result) => [result.id, { status: result.status, runs: result.runs, cases: result.cases, consequence: result.consequence, counterexample: result.counterexample, replay: result.replay }]),
  );
}

describe("a property's outcome at a seed does not depend on the properties run beside it", () => {
  it.each([1, 2])("the catchers of decoded-after-check give the same results alone as in the whole audit, at seed %i", async (seed) => {
    expect(FORK?.caughtBy.length).toBeGreaterThan(1);
    const whole = await outcomes(`whole-${seed}`, ["--seed", String(seed)]);
    const alone = await outcomes(`alone-${seed}`, ["--seed", String(seed), "--only", (FORK?.caughtBy ?? []).join(",")]);
    expect(Object.keys(whole).sort()).toEqual([...(FORK?.caughtBy ?? [])].sort());
    expect(Object.values(whole).map((outcome) => (outcome as { status: string }).status)).toEqual(FORK?.caughtBy.map(() => "failed"));
    expect(alone).toEqual(whole);
  });
});
