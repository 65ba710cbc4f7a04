/**
 * `sequences.swapInCall`: a directory on a call's path swapped for a link out while the call runs, at
 * the moment a racer wins against a tool that waits between its check and its use. The swap is placed
 * by the event loop, not by the clock (runner/turn-trap.ts): after the call's path check (the first
 * `realpath` of the contested directory, or below it, whose answer is inside the workspace), at the
 * first moment the call yields with none of the file-system calls it started since still under way.
 * A tool that uses the path in the same turn as its check (the chapter's: the open is dispatched, and
 * answered, first) holds; one that awaits anything in between (a `stat`, an immediate) opens the link.
 * The moment depends on the order of events in this process alone, so load never moves it: a failure
 * replays from its seed and path on any machine, and a correct tool (one that opens by descriptor and
 * checks what it opened) passes whatever the moment.
 *
 * Each plan is one call through a directory of its own: a read of a file there, an overwrite of one, a
 * new file, a new file below a new directory. What the plans leave out, on purpose: a write that makes
 * missing parents waits on its `mkdir` before it opens, the chapter's as well, so a swap for a link
 * whose end already holds the directory being made (`m/dir/new.txt`, `m` -> outside) carries the
 * chapter's write outside too; that is its known TOCTOU limit (docs/limits.md), and the plans' new
 * directory (`sub`) exists nowhere outside, so that every tool is held to what the chapter keeps. A call whose check the trap never saw (a check made by
 * descriptor, or through the callback API), or that never yielded after it, is not attacked: nothing is
 * claimed of it. A server over MCP makes its file-system calls in its own process, where no trap
 * reaches: there the property is not applicable (the MCP adapter says so), and `toctou --mcp` races the server.
 */
import fc from "fast-check";
import { renameSync, symlinkSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { allOfItems } from "../arbitraries/index.js";
import { type AuditProperty, execute, inSandbox, toolsOf, violation } from "../runner/property.js";
import { withTurnTrap } from "../runner/turn-trap.js";
import { CANARY_DIR, CANARY_FILE, SECRET, type Sandbox } from "../../sandbox/sandbox.js";
import { BOX_NAME, type Tree, materialize } from "../../sandbox/tree.js";
import { shellWord } from "../../shell-word.js";
import { isInside } from "../../../gates/is-inside.js";

/** One call through a directory of its own, which is swapped for a link to outside/dir while the call runs. */
export interface InCallPlan {
  tool: "read" | "write";
  /** From the root; its first name is the contested directory. */
  path: string;
  /** Whether the path's file is laid out before the call (a decoy named as the canary). */
  exists: boolean;
}

export const IN_CALL_PLANS: readonly InCallPlan[] = [
  { tool: "read", path: `r/${CANARY_FILE}`, exists: true },
  { tool: "write", path: `w/${CANARY_FILE}`, exists: true },
  { tool: "write", path: "n/new.txt", exists: false },
  { tool: "write", path: "m/sub/new.txt", exists: false },
];

export interface InCallCase {
  plans: readonly InCallPlan[];
  link: "absolute" | "relative";
}

const contestedOf = (plan: InCallPlan) => plan.path.split("/")[0] as string;

function treeOf(plans: readonly InCallPlan[]): Tree {
  return plans.flatMap((plan) => [{ kind: "dir" as const, at: [contestedOf(plan)] }, ...(plan.exists ? [{ kind: "file" as const, at: plan.path.split("/") }] : [])]);
}

/** The schedule of one plan's swap, as shell words with `$BOX` for the sandbox's directory. */
function describeSwap(plan: InCallPlan, index: number, link: "absolute" | "relative"): string {
  const directory = `ws/${contestedOf(plan)}`;
  const target = link === "absolute" ? `"${BOX_NAME}"/outside/${CANARY_DIR}` : shellWord(`../outside/${CANARY_DIR}`);
  return `while ${plan.tool} ${plan.path} runs, after its check of ${directory} and at the first moment it waits with no file-system call of its own under way: mv ${directory} "${BOX_NAME}"/scratch/in-call-${index}; ln -s ${target} ${directory}`;
}

export const sequencesSwapInCall: AuditProperty<InCallCase> = {
  id: "sequences.swapInCall",
  gate: "workspacePath",
  kind: "guarantee",
  title: "a directory swapped for a link out while a call waits between its check and its use does not carry the call outside",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  threat: () => "a concurrent process",
  weaknesses: ["CWE-367"],
  // Every run makes every plan: a few runs draw the rest (the link's spelling).
  maxRuns: 4,
  arbitrary: fc.record({ plans: allOfItems(IN_CALL_PLANS), link: fc.constantFrom("absolute" as const, "relative" as const) }),
  render: ({ plans, link }) => ({
    workspace: { name: "ws", spelling: "canonical", tree: treeOf(plans) },
    setup: plans.map((plan, index) => describeSwap(plan, index, link)),
  }),
  async check(target, { plans, link }) {
    await inSandbox(async (box) => {
      await materialize(treeOf(plans), box);
      const tools = toolsOf(target, box.root);
      for (const [index, plan] of plans.entries()) {
        const contested = join(box.root, contestedOf(plan));
        const outside = join(box.outside, CANARY_DIR);
        const { answer } = await withTurnTrap(
          {
            springsOn: (path, real) => isInside(contested, path) && isInside(box.root, real),
            move: () => swapOut(box, contested, index, link === "absolute" ? outside : relative(dirname(contested), outside)),
          },
          () => (plan.tool === "read" ? execute(tools.read, { path: plan.path }) : execute(tools.write, { path: plan.path, content: `written while ws/${contestedOf(plan)} was swapped\n` })),
        );
        const shown = `ws/${contestedOf(plan)} -> outside/${CANARY_DIR}`;
        if (String(answer.content).includes(SECRET)) violation(`${plan.tool} ${plan.path} (call ${index + 1}) returned the canary: ${shown} replaced the directory after its check, while it waited`, "secretInAnswer", index);
        const changes = await box.canaryChanges();
        if (changes.length > 0) violation(`${plan.tool} ${plan.path} (call ${index + 1}) changed outside: ${shown} replaced the directory after its check, while it waited:\n  ${changes.join("\n  ")}`, "outsideChanged", index);
      }
    });
  },
};

/** The attacker's move: the directory parked in scratch (no canary), a link out in its place. */
function swapOut(box: Sandbox, contested: string, index: number, linkText: string): void {
  renameSync(contested, join(box.scratch, `in-call-${index}`));
  symlinkSync(linkText, contested);
}
