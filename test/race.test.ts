// Time (issue 50): a directory inside the workspace swapped for a link out between two calls of the
// same path (sequences.innerSwap), and during one call while it waits between its check and its use
// (sequences.swapInCall). The correct twins pass; each planted mistake of fixtures/race dies at the
// default budget at seed 1, in process and over MCP where the property applies there (seeds 1 to 20:
// test/sweeps/race.sweep.ts), with a counterexample that names the swap and replays; and a busy machine
// changes no verdict nor counterexample of the swap during a call.
import { execFileSync } from "node:child_process";
import { promises as fsPromises, realpathSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { disposeSandboxes } from "../src/kit/audit/runner/property.js";
import { withTurnTrap } from "../src/kit/audit/runner/turn-trap.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { loadTarget } from "../src/kit/operations/target.js";
import { SECRET, createSandbox } from "../src/kit/sandbox/sandbox.js";
import { defaultRuns, missedSeeds, overMcp, property } from "./support/surface.js";
import { RACE_CLAIMS, RACE_TWIN_CLAIMS, twinTarget } from "./support/race.js";
import { startBusyLoops } from "./support/busy-loops.js";
import { cli, useScratch } from "./support/cli.js";

afterAll(() => disposeSandboxes());

const scratch = useScratch("workspace-gates-race-test-");
const atSeed1 = (id: string) => ({ seed: 1, runs: defaultRuns(id) });

describe("the correct twins pass, each planted mistake dies at seed 1", () => {
  it.each(RACE_TWIN_CLAIMS.map(({ twin, id }) => [twin, id] as const))("%s passes %s in process, and over MCP where it applies", { timeout: 120_000 }, async (twin, id) => {
    const inProcess = await runProperty(property(id), await twinTarget(twin), atSeed1(id));
    expect(inProcess.status, `${inProcess.reason}\n${inProcess.counterexample}`).toBe("passed");
    const { answer: served, serverFailure } = await overMcp(twin, (target) => runProperty(property(id), target, atSeed1(id)));
    // The swap during a call is placed by a trap in this process, which a server's calls never meet.
    expect(served.status, `${served.reason}\n${served.counterexample}`).toBe(id === "sequences.swapInCall" ? "not-applicable" : "passed");
    expect(serverFailure).toBeUndefined();
  });

  it.each(RACE_CLAIMS.map(({ module, id, overMcp: both }) => [module, id, both] as const))("%s is killed by %s in process (and over MCP: %s)", { timeout: 120_000 }, async (module, id, both) => {
    expect(await missedSeeds(await loadTarget(module), id, [1]), "in process").toEqual([]);
    if (!both) return;
    const { answer: missed, serverFailure } = await overMcp(module, (target) => missedSeeds(target, id, [1]));
    expect(missed, "over MCP").toEqual([]);
    expect(serverFailure).toBeUndefined();
  });
});

describe("a swap between calls, as the counterexample prints it", () => {
  it("names the swapped directory, the link and the calls around it, and its shell words make the escape again", { timeout: 120_000 }, async () => {
    const result = await runProperty(property("sequences.innerSwap"), await loadTarget("fixtures/race/cached-realpath.ts"), atSeed1("sequences.innerSwap"));
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

describe("a swap during a call, as the report prints it", () => {
  it("names the call and the swap's schedule, and its printed replay line fails again with the same counterexample", { timeout: 120_000 }, async () => {
    const first = await cli(["audit", "fixtures/race/await-before-write.ts", "--only", "sequences.swapInCall", "--seed", "1"]);
    expect(first.code, first.stdout + first.stderr).toBe(1);
    expect(first.stdout).toMatch(/while write \S+ runs, after its check of ws\/\w+ and at the first moment it waits with no file-system call of its own under way: mv ws\/\w+ "\$BOX"\/scratch\/in-call-\d+; ln -s /);
    const replay = /replay: .*? (audit .*)$/m.exec(first.stdout)?.[1]?.split(" ") ?? [];
    expect(replay).toContain("--path");
    const again = await cli(replay);
    expect(again.code, again.stdout + again.stderr).toBe(1);
    const counterexample = (stdout: string) => stdout.slice(stdout.indexOf("while write"), stdout.indexOf("replay:"));
    expect(counterexample(again.stdout)).toBe(counterexample(first.stdout));
  });
});

describe("a swap during a call, on a busy machine", () => {
  let loops: ReturnType<typeof startBusyLoops> | undefined;
  afterEach(() => {
    loops?.stop();
    loops = undefined;
  });

  it("gives every target the verdict and the counterexample it gets on a quiet one", { timeout: 240_000 }, async () => {
    const id = "sequences.swapInCall";
    const targets = [...RACE_TWIN_CLAIMS.filter((claim) => claim.id === id).map((claim) => claim.twin), ...RACE_CLAIMS.filter((claim) => claim.id === id).map((claim) => claim.module)];
    const verdicts = async () => {
      const seen: string[] = [];
      for (const name of targets) {
        const result = await runProperty(property(id), await twinTarget(name), atSeed1(id));
        seen.push(`${name}: ${result.status}\n${result.reason ?? ""}\n${result.counterexample ?? ""}`);
      }
      return seen;
    };
    const quiet = await verdicts();
    // The kill claims above hold quiet; here the load must change nothing of them.
    expect(quiet.filter((verdict) => verdict.includes(": failed")).length).toBe(RACE_CLAIMS.filter((claim) => claim.id === id).length);
    loops = startBusyLoops();
    expect(await verdicts()).toEqual(quiet);
  });
});

describe("the turn trap", () => {
  it("moves once the call waits with nothing of its own under way, before the caller resumes, and puts every function back", async () => {
    const [stat, native] = [fsPromises.stat, realpathSync.native];
    const events: string[] = [];
    const trap = { springsOn: (path: string) => path === scratch.path, move: () => events.push("moved") };
    const seen = await withTurnTrap(trap, async () => {
      realpathSync.native(scratch.path);
      // Dispatched in the check's turn, as the chapter's open is: the move waits for its answer.
      await fsPromises.stat(scratch.path).then(() => events.push("stat answered"));
      events.push("resumed");
    });
    expect(seen).toMatchObject({ checked: true, moved: true });
    expect(events).toEqual(["moved", "stat answered", "resumed"]);
    expect([fsPromises.stat, realpathSync.native]).toEqual([stat, native]);
  });

  it("moves nothing for a call that never waited after its check, nor after it settled, and refuses a second trap", async () => {
    const events: string[] = [];
    const trap = { springsOn: (path: string) => path === scratch.path, move: () => events.push("moved") };
    const seen = await withTurnTrap(trap, async () => {
      realpathSync.native(scratch.path);
      await expect(withTurnTrap(trap, async () => undefined)).rejects.toThrow(/already set/);
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toMatchObject({ checked: true, moved: false });
    expect(events).toEqual([]);
  });
});
