// The verified tools against the TOCTOU swap: injected right after the check, and raced by a thread;
// no content escapes and nothing appears outside.
import { beforeEach, expect, it } from "vitest";
import { LINUX_PROCFS, describeNeeding } from "./support/platform.js";
import { SWAP_SCENARIOS, type SwapScenario } from "../fixtures/swap-scenarios.js";
import { SECRET, type Sandbox, createSandbox } from "../src/kit/sandbox/sandbox.js";
import { useSandbox } from "./support/sandbox.js";
import type { Tool } from "../src/gates/tool.js";
import { prepareArena, swapInLink } from "../src/kit/toctou/arena.js";
import { runRace } from "../src/kit/toctou/race.js";
import { withRealpathTrap } from "../src/kit/toctou/fs-trap.js";
import { NO_SIDE_EFFECTS } from "../src/kit/toctou/side-effects.js";
import { TOOL_SETS, attackedTools } from "../src/kit/sandbox/tool-sets.js";
import { moduleSurface } from "../src/kit/operations/surface.js";
import { createVerifiedWorkspaceTools } from "../src/verified/verified-tools.js";
import { createWorkspaceTools } from "../src/tools/workspace-tools.js";

let box: Sandbox;
const sandbox = useSandbox();
beforeEach(async () => {
  box = sandbox.current;
});

const RACE_SECONDS = 1;

/**
 * Prepares the scenario's arena in `sandbox`, runs its tool with the swap placed right after the check:
 * the first realpath the call makes, since both tool sets resolve their root when they are made. (The
 * first call, not one matched by path: in the dangling-leaf scenario the checked path is the root itself.)
 */
async function runWithSwap(sandbox: Sandbox, makeTools: (root: string) => Tool[], scenario: SwapScenario) {
  const arena = await prepareArena(sandbox, scenario.contested, { occupant: scenario.occupant, linkTo: scenario.linkTo(sandbox) });
  const { read, write } = attackedTools(makeTools(sandbox.root));
  let swapped = false;
  const move = () => {
    swapInLink(arena);
    swapped = true;
  };
  const result = await withRealpathTrap({ springsOn: () => true, move }, () =>
    scenario.tool === "read" ? read.execute({ path: scenario.path }) : write.execute({ path: scenario.path, content: "pwned" }),
  );
  return { result, swapped };
}

describeNeeding(LINUX_PROCFS, "a swap injected right after the path check", () => {
  // The control proves the harness can see an escape: the same swap beats the chapter's tools every
  // time. It runs in a sandbox of its own, since escaping is what it shows; the shared one stays clean.
  it.each(SWAP_SCENARIOS)("control: the chapter's tools escape (unless chapterHolds): $label", async (scenario) => {
    const control = await createSandbox();
    try {
      const { result, swapped } = await runWithSwap(control, createWorkspaceTools, scenario);
      expect(swapped).toBe(true);
      if (scenario.chapterHolds !== undefined) {
        expect(result).toEqual({ content: `wrote 5 bytes to ${scenario.path}` });
        expect(await control.canaryChanges()).toEqual([]);
      } else if (scenario.tool === "read") expect(result.content).toContain(SECRET);
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
    const report = await runRace({
      box,
      toolsName: "verified",
      surface: moduleSurface(TOOL_SETS.get("verified")?.create(box.root) ?? []),
      budget: { attempts: 1_000_000, seconds: RACE_SECONDS },
      narrate: () => {},
      signal: new AbortController().signal,
    });
    for (const tally of Object.values(report.perOperation)) expect(tally.escapes).toBe(0);
    expect(report.sideEffects).toEqual(NO_SIDE_EFFECTS);
    // The race really ran: the racer flipped, some calls met the symlink and were refused, some
    // met the directory and succeeded.
    expect(report.racer.failure).toBeNull();
    expect(report.racer.swaps).toBeGreaterThan(0);
    expect(report.total.refused).toBeGreaterThan(0);
    expect(report.total.succeeded).toBeGreaterThan(0);
    // the afterEach canary check proves no write landed outside, not even an empty file or a directory
  });
});
