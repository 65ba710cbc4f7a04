import { afterEach, beforeEach, expect, it } from "vitest";
import { SWAP_SCENARIOS, type SwapScenario } from "../fixtures/swap-scenarios.js";
import { SECRET, type Sandbox, createSandbox } from "../src/audit/sandbox.js";
import type { Tool } from "../src/tool.js";
import { createVerifiedWorkspaceTools } from "../src/verified/verified-tools.js";
import type { WorkspaceToolsOptions } from "../src/workspace-tools.js";
import { createWorkspaceTools } from "../src/workspace-tools.js";
import { swapAfterCheck } from "./support/check-hooks.js";
import { LINUX_PROCFS, describeNeeding } from "./support/platform.js";
import { raceTools } from "./support/race.js";

let box: Sandbox;
beforeEach(async () => {
  box = await createSandbox();
});
afterEach(async () => {
  expect(await box.canaryChanges()).toEqual([]);
  await box.dispose();
});

const RACE_PHASE_MS = 500;

type ToolSet = (root: string, options: WorkspaceToolsOptions) => Tool[];

/** Prepares the scenario in `sandbox`, runs its tool with the swap injected right after the check. */
async function runWithSwap(sandbox: Sandbox, makeTools: ToolSet, scenario: SwapScenario) {
  await scenario.prepare(sandbox);
  const hook = swapAfterCheck(() => scenario.swap(sandbox));
  const [read, write] = makeTools(sandbox.root, { fsApi: hook }) as [Tool, Tool];
  const result =
    scenario.tool === "read" ? await read.execute({ path: scenario.path }) : await write.execute({ path: scenario.path, content: "pwned" });
  return { result, swapped: hook.swapped() };
}

describeNeeding(LINUX_PROCFS, "a swap injected right after the path check", () => {
  // The control proves the harness can see an escape: the same swap beats the chapter's tools every
  // time. It runs in a sandbox of its own, since escaping is what it shows; the shared one stays clean.
  it.each(SWAP_SCENARIOS)("control: the chapter's tools escape: $label", async (scenario) => {
    const control = await createSandbox();
    try {
      const { result, swapped } = await runWithSwap(control, createWorkspaceTools, scenario);
      expect(swapped).toBe(true);
      if (scenario.tool === "read") expect(result.content).toContain(SECRET);
      else expect(await control.canaryChanges()).not.toEqual([]);
    } finally {
      await control.dispose();
    }
  });

  it.each(SWAP_SCENARIOS)("the verified tools refuse and leave nothing outside: $label", async (scenario) => {
    const { result, swapped } = await runWithSwap(box, createVerifiedWorkspaceTools, scenario);
    expect(swapped).toBe(true);
    expect(result).toEqual({ content: `${scenario.tool}: path escapes workspace`, isError: true });
    // the afterEach canary check proves no file, empty file or directory appeared outside
  });
});

describeNeeding(LINUX_PROCFS, "a real race against a racer thread flipping a directory and a symlink to outside", () => {
  it("lets no content out and leaves nothing outside", async () => {
    const [read, write] = createVerifiedWorkspaceTools(box.root) as [Tool, Tool];
    const reading = await raceTools(box, { read }, RACE_PHASE_MS);
    const writing = await raceTools(box, { write }, RACE_PHASE_MS);
    expect(reading.reads.escapes).toBe(0);
    expect(writing.writes.escapes).toBe(0);
    // The race really ran: the racer flipped, some calls met the symlink and were refused, some
    // met the directory and succeeded.
    expect(Math.min(reading.flips, writing.flips)).toBeGreaterThan(0);
    expect(reading.reads.refusedAsEscape + writing.writes.refusedAsEscape).toBeGreaterThan(0);
    expect(reading.reads.done + writing.writes.done).toBeGreaterThan(0);
    // the afterEach canary check proves no write landed outside, not even an empty file or a directory
  });
});
