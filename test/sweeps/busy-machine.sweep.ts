// A soak: correct targets audited on a busy machine give the verdicts of a quiet run at the same seed
// (issue 49). A careful server audited beside four busy loops read "FAILED, counterexample: (none)",
// and a correct module "too slow to judge" (exit 2): the machine's load decided. Here each target is
// audited quietly, then again with busy loops (child processes spinning) on every core, and the two
// reports must agree property by property, with no failure and no property short of its floor.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { JsonReport } from "../../src/kit/audit/reports/report.js";
import { isConvention } from "../../src/kit/findings/findings.js";
import { cli, useScratch } from "../support/cli.js";
import { startBusyLoops } from "../support/busy-loops.js";
import { MAPPING_FILE, served } from "../support/surface.js";

const scratch = useScratch("workspace-gates-busy-sweep-");
const SEED = "1";
// The floor of runs, which the verdict needs, runs whatever the budget; the budget sets how long the
// target's own answers to one property's floor may take, and how long the runs past it go on.
const TIME = "20";
// What each target is judged by, kept to a few minutes a sweep: the tree-based properties, the
// costliest calls (bash spawns a shell a call) and the agent loop. The 10 s wait of the bash timeout
// case says nothing about load.
const SELECTED = [
  "fields.tools",
  "containment.workspacePath",
  "containment.read",
  "containment.write",
  "faults.tools",
  "sequences.bash",
  "sequences.rootSwap",
  "bashLimits.output",
  "approval.ordering",
  "agent.protocol",
].join(",");

let loops: ReturnType<typeof startBusyLoops> | undefined;

afterEach(() => {
  loops?.stop();
  loops = undefined;
});

/** Each property's verdict, as a table row gives it: what must not change with the load. */
function verdicts(report: JsonReport): Record<string, string> {
  return Object.fromEntries(report.results.map((result) => [result.id, `${result.status}${result.consequence === undefined ? "" : ` (${result.consequence})`}${result.shortOfFloor === undefined ? "" : " short of its floor"}`]));
}

async function audit(name: string, target: readonly string[]): Promise<{ code: number; report: JsonReport; output: string }> {
  const json = join(scratch.path, `${name}.json`);
  // The flags first: after --mcp's `--`, every word is the server's command.
  const { code, stdout, stderr } = await cli(["audit", "--seed", SEED, "--time", TIME, "--json", json, "--only", SELECTED, ...target]);
  const written = await readFile(json, "utf8").catch(() => undefined);
  if (written === undefined) throw new Error(`the audit of ${name} wrote no report (exit ${code}):\n${stdout}${stderr}`);
  return { code, report: JSON.parse(written) as JsonReport, output: stdout + stderr };
}

describe.each([
  ["the reference", "reference", []],
  ["a correct module written otherwise", "own-wording", ["fixtures/secure/own-wording.mjs"]],
  ["the reference served over MCP", "reference-mcp", ["--mcp", "--mapping", MAPPING_FILE, "--", ...served("reference")]],
] as const)("%s, audited beside busy loops", (_title, name, target) => {
  it("gets the verdicts of a quiet run at the same seed: no false failure, no property short of its floor", async () => {
    const quiet = await audit(`${name}-quiet`, target);
    loops = startBusyLoops();
    const busy = await audit(`${name}-busy`, target);
    expect(quiet.code, quiet.output).toBe(0);
    expect(busy.code, busy.output).toBe(0);
    expect(verdicts(busy.report)).toEqual(verdicts(quiet.report));
    // A departure from the chapter's conventions (own-wording's texts) is a warning, and no false failure.
    expect(busy.report.results.filter((result) => result.status === "failed" && result.kind === "guarantee" && !isConvention(result.consequence))).toEqual([]);
    expect(busy.report.results.filter((result) => result.shortOfFloor !== undefined)).toEqual([]);
  });
});
