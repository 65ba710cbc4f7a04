/**
 * The calling layer's forks die at the audit's default budget, not only at the kill budget the kill
 * matrix grants: for every seed from 1 to 20, each property the catalogue names finds its fork within
 * the runs a plain `workspace-gates audit` gives it. A module without `runAgent` is not judged by
 * these properties at all, and a failure comes with a shrunk transcript and a replay line.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOOP_VARIANTS } from "../fixtures/vulnerable/catalog.js";
import { loopFork } from "../fixtures/vulnerable/loop-fork.js";
import { DEFAULT_RUNS } from "../src/kit/audit/command/budget.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { COVERAGE_ID } from "../src/kit/audit/coverage.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { loadTarget, targetFromModule } from "../src/kit/operations/target.js";
import { main } from "../src/kit/cli.js";

const SEEDS = Array.from({ length: 20 }, (_, index) => index + 1);
const CALLING_LAYER = PROPERTIES.filter((property) => property.gate === "approval" || property.gate === "agent loop");

async function cli(...argv: string[]) {
  let stdout = "";
  const code = await main(argv, { stdout: (text) => (stdout += text), stderr: (text) => (stdout += text) });
  return { code, stdout };
}

describe("the calling layer's forks", () => {
  it("are judged by every calling-layer property, and by nothing else", () => {
    expect(CALLING_LAYER.map((property) => property.id).sort()).toEqual(
      ["agent.abort", "agent.protocol", "approval.bashDefault", "approval.input", "approval.ordering", "approval.refused"],
    );
    for (const variant of LOOP_VARIANTS) expect(variant.caughtBy.every((id) => CALLING_LAYER.some((property) => property.id === id)), variant.module).toBe(true);
  });

  it.each(LOOP_VARIANTS.flatMap(({ module, caughtBy }) => caughtBy.map((id) => ({ module, id }))))(
    "$module dies by $id at the default budget for seeds 1 to 20",
    async ({ module, id }) => {
      const property = CALLING_LAYER.find((candidate) => candidate.id === id);
      if (property === undefined) throw new Error(`no property ${id}`);
      const target = await loadTarget(`fixtures/vulnerable/${module}.ts`);
      const runs = Math.max(1, Math.round(DEFAULT_RUNS * (property.budgetScale ?? 1)));
      const survived: number[] = [];
      for (const seed of SEEDS) {
        const result = await runProperty(property, target, { seed, runs, stopAtFirstFailure: true });
        if (result.status !== "failed") survived.push(seed);
      }
      expect(survived, `${id} let ${module} pass with these seeds`).toEqual([]);
    },
    120_000,
  );

  it("and a loop that takes one turn too many fails agent.protocol", async () => {
    const template = loopFork();
    const offByOne = targetFromModule("maxTurns off by one", { runAgent: (prompt: string, options: { maxTurns?: number }) => template(prompt, { ...options, maxTurns: (options.maxTurns ?? 20) + 1 } as never) });
    const protocol = CALLING_LAYER.find((property) => property.id === "agent.protocol");
    const result = await runProperty(protocol!, offByOne, { seed: 1, runs: DEFAULT_RUNS, stopAtFirstFailure: true });
    expect(result.reason).toMatch(/the loop asked the model again instead of ending with max_turns/);
  });
});

describe("workspace-gates audit on the calling layer", () => {
  const only = CALLING_LAYER.map((property) => property.id).join(",");

  it("passes the package's own loop", async () => {
    const { code, stdout } = await cli("audit", "--only", only, "--runs", "10", "--seed", "3");
    expect(code, stdout).toBe(0);
    expect(stdout).toMatch(/^audit: 7 passed, 0 failed, 0 skipped$/m);
    expect(stdout).toMatch(/^coverage\s+coverage\.tools\s+passed\s/m);
  });

  it("does not pass a module without runAgent: its properties are not applicable to it", async () => {
    const scratch = await mkdtemp(join(tmpdir(), "workspace-gates-agent-audit-"));
    try {
      const module = join(scratch, "tools-only.mjs");
      await writeFile(module, `export { createWorkspaceTools } from "${join(process.cwd(), "src/tools/workspace-tools.ts")}";\n`);
      const json = join(scratch, "report.json");
      const { code } = await cli("audit", module, "--only", only, "--runs", "2", "--seed", "1", "--json", json);
      const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
      const properties = report.results.filter((result) => result.id !== COVERAGE_ID);
      expect(properties).toHaveLength(6);
      for (const result of properties) expect(result.status, result.id).toBe("not-applicable");
      expect(code, "nothing was checked").toBe(2);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it("fails a fork with a shrunk transcript and a replay line that reproduces it", async () => {
    const module = "fixtures/vulnerable/normalized-dispatch.ts";
    const first = await cli("audit", module, "--only", "approval.bashDefault", "--seed", "1");
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/reached the bash tool although no hook was given/);
    // shrunk: one turn, one call, to a spelling of bash that is not "bash"
    expect(first.stdout).toMatch(/counterexample:\n\s+turn 1:\n\s+"[^"]+" id "call-0" input \{"command":"touch call-0\.ran"\}\n\s+replay: /);
    const replay = /replay: npx workspace-gates audit (.+)$/m.exec(first.stdout)?.[1];
    expect(replay).toMatch(/--path \S+$/);
    const again = await cli("audit", ...(replay as string).split(" "));
    expect(again.code).toBe(1);
    expect(again.stdout).toContain(/counterexample:\n[^]*?replay: /.exec(first.stdout)?.[0]);
  });
});
