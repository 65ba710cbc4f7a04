// Time (issue 50): a directory inside the workspace swapped for a link out between two calls of the
// same path. The chapter's tools check every call as the tree is then, and pass; each planted mistake
// of fixtures/race dies at the default budget at seed 1, in process and over MCP (seeds 1 to 20:
// test/sweeps/race.sweep.ts), with a counterexample that names the swap and replays.
import { execFileSync } from "node:child_process";
import { dirname } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RACE_VARIANTS } from "../fixtures/race/catalog.js";
import { disposeSandboxes } from "../src/kit/audit/runner/property.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { loadTarget, referenceTarget } from "../src/kit/operations/target.js";
import { SECRET, createSandbox } from "../src/kit/sandbox/sandbox.js";
import { defaultRuns, missedSeeds, overMcp, property } from "./support/surface.js";
import { useScratch } from "./support/cli.js";

afterAll(() => disposeSandboxes());

const scratch = useScratch("workspace-gates-race-test-");
const caught = RACE_VARIANTS.flatMap((variant) => variant.caughtBy.map((id) => [variant.module, id] as const));
const attacking = [...new Set(RACE_VARIANTS.flatMap((variant) => variant.caughtBy))];

describe("the correct twin passes, each planted mistake dies at seed 1", () => {
  it.each(attacking)("the chapter's tools pass %s in process and over MCP", { timeout: 120_000 }, async (id) => {
    const inProcess = await runProperty(property(id), await referenceTarget(), { seed: 1, runs: defaultRuns(id) });
    expect(inProcess.status, `${inProcess.reason}\n${inProcess.counterexample}`).toBe("passed");
    const { answer: served, serverFailure } = await overMcp("reference", (target) => runProperty(property(id), target, { seed: 1, runs: defaultRuns(id) }));
    expect(served.status, `${served.reason}\n${served.counterexample}`).toBe("passed");
    expect(serverFailure).toBeUndefined();
  });

  it.each(caught)("%s is killed by %s in process and over MCP", { timeout: 120_000 }, async (module, id) => {
    expect(await missedSeeds(await loadTarget(`fixtures/race/${module}.ts`), id, [1]), "in process").toEqual([]);
    const { answer: missed, serverFailure } = await overMcp(`fixtures/race/${module}.ts`, (target) => missedSeeds(target, id, [1]));
    expect(missed, "over MCP").toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});

describe("a swap between calls, as the counterexample prints it", () => {
  it("names the swapped directory, the link and the calls around it, and its shell words make the escape again", { timeout: 120_000 }, async () => {
    const result = await runProperty(property("sequences.innerSwap"), await loadTarget("fixtures/race/cached-realpath.ts"), { seed: 1, runs: defaultRuns("sequences.innerSwap") });
    expect(result.status).toBe("failed");
    const swap = /after (\w+) ([\w/.]+): (mv .*); then \1 \2 again/.exec(result.counterexample ?? "");
    expect(swap, result.counterexample).not.toBeNull();
    const [, call, path, shell] = swap as unknown as [string, "read" | "write", string, string];
    // By hand, as a reader would: the call, the swap in the printed words, the same call again.
    const box = await createSandbox("workspace-gates-race-replay-", { parent: scratch.path });
    try {
      const sh = (words: string) => execFileSync("sh", ["-c", words], { cwd: dirname(box.outside), env: { ...process.env, BOX: dirname(box.outside) } });
      sh(`mkdir -p ws/${dirname(path)} && printf 'decoy\\n' > ws/${path}`);
      const { createWorkspaceTools } = (await import("../fixtures/race/cached-realpath.js")) as { createWorkspaceTools: (root: string) => { spec: { name: string }; execute: (input: unknown) => Promise<{ content: string }> }[] };
      const tool = createWorkspaceTools(box.root).find((candidate) => candidate.spec.name === call);
      const input = call === "read" ? { path } : { path, content: "again\n" };
      await tool?.execute(input);
      sh(shell);
      const answer = await tool?.execute(input);
      const escaped = String(answer?.content).includes(SECRET) || (await box.canaryChanges()).length > 0;
      expect(escaped, String(answer?.content)).toBe(true);
    } finally {
      await box.dispose();
    }
  });
});
