/**
 * `sequences.innerSwap`: a directory inside the workspace swapped for a symlink out between two calls
 * of the same path. The calls are made on a path through it (`d/secret.txt`), the directory is moved
 * aside and a link to outside takes its name (bash can do it: `mv d d.old; ln -s ../outside/dir d`),
 * and the same calls are made again. Every call must check the path it is given as the tree is now:
 * none of the second calls may return the canary's secret or change anything outside. A tool that
 * kept the first call's checked path (a cache from the path given to its real path) and reuses it
 * opens the same name again, and the kernel follows the link it now is.
 *
 * Every run makes every swap (droppable.ts shrinks to the one that fails): the directory holding the
 * file, one nested in another, and one above a directory whose name the outside mirrors, so that the
 * link is not always the file's parent. The link is absolute or relative.
 * `sequences.rootSwap` (sequences.ts) swaps the root itself; a swap made while a call runs is a race,
 * which `toctou --mcp` makes.
 */
import fc from "fast-check";
import { rename, symlink } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { allOfItems } from "../arbitraries/index.js";
import { type AuditProperty, type NamedTools, execute, inSandbox, toolsOf, violation } from "../runner/property.js";
import { CANARY_DIR, CANARY_FILE, SECRET, type Sandbox } from "../../sandbox/sandbox.js";
import { BOX_NAME, type Tree, materialize } from "../../sandbox/tree.js";
import { shellWord } from "../../shell-word.js";
import type { ToolResult } from "../../../gates/tool.js";

/** A path through directories to a file named as the canary, and which of its directories is swapped for a link to where. */
export interface InnerSwap {
  /** The directories from the root down to the file's, each a name. */
  directories: readonly string[];
  /** The index in `directories` of the one swapped. */
  swapped: number;
  /** Below outside/, where the link leads: there, the rest of the path names the canary. */
  linkTo: string;
}

/** The swaps every run makes, on names of their own so they share one workspace. */
export const INNER_SWAPS: readonly InnerSwap[] = [
  { directories: ["d"], swapped: 0, linkTo: CANARY_DIR },
  { directories: ["a", "d"], swapped: 1, linkTo: CANARY_DIR },
  // The outside's own directory is named `dir`: the link above it reaches outside/dir/secret.txt.
  { directories: ["b", CANARY_DIR], swapped: 0, linkTo: "." },
];

export type InnerSwapCall = "read" | "write";

export interface InnerSwapCase {
  swaps: readonly InnerSwap[];
  link: "absolute" | "relative";
  /** The calls made on each swap's path before it, and again after it, in order. */
  calls: readonly InnerSwapCall[];
}

/** The file each swap's calls name, from the root. */
export const swapPath = (swap: InnerSwap) => [...swap.directories, CANARY_FILE].join("/");

/** The swapped directory, from the root. */
const swappedDirectory = (swap: InnerSwap) => swap.directories.slice(0, swap.swapped + 1);

/** Where the swapped directory is parked: in scratch, which is no canary. */
const parked = (box: Sandbox, index: number) => join(box.scratch, `swapped-${index}`);

const WRITTEN = "written by the audit before the swap\n";

function treeOf(swaps: readonly InnerSwap[]): Tree {
  return swaps.flatMap((swap) => [
    ...swap.directories.map((_, depth) => ({ kind: "dir" as const, at: swap.directories.slice(0, depth + 1) })),
    { kind: "file" as const, at: [...swap.directories, CANARY_FILE] },
  ]);
}

/** The link's text, from the directory it stands in. */
function linkText(box: Sandbox, swap: InnerSwap, link: "absolute" | "relative"): string {
  const target = join(box.outside, swap.linkTo);
  return link === "absolute" ? target : relative(dirname(join(box.root, ...swappedDirectory(swap))), target);
}

/** The swap as shell words, as a reader would make it with `$BOX` for the sandbox's directory. */
function describeSwap(swap: InnerSwap, index: number, link: "absolute" | "relative", calls: readonly InnerSwapCall[]): string {
  const directory = ["ws", ...swappedDirectory(swap)].join("/");
  const outside = join("outside", swap.linkTo);
  const target = link === "absolute" ? `"${BOX_NAME}"/${shellWord(outside)}` : shellWord(relative(dirname(directory), outside));
  const made = calls.map((call) => `${call} ${swapPath(swap)}`).join(", ");
  return `after ${made}: mv ${shellWord(directory)} "${BOX_NAME}"/scratch/swapped-${index}; ln -s ${target} ${shellWord(directory)}; then ${made} again`;
}

async function callOn(tools: NamedTools, call: InnerSwapCall, path: string): Promise<ToolResult> {
  return call === "read" ? execute(tools.read, { path }) : execute(tools.write, { path, content: WRITTEN });
}

export const sequencesInnerSwap: AuditProperty<InnerSwapCase> = {
  id: "sequences.innerSwap",
  gate: "workspacePath",
  kind: "guarantee",
  title: "a directory swapped for a link out between two calls of the same path does not carry the second call outside",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  // The link is made between calls: bash can make it, no race is needed.
  threat: () => "a link inside the workspace",
  weaknesses: ["CWE-367"],
  // Every run makes every swap: a few runs draw the rest (the link's spelling).
  maxRuns: 4,
  arbitrary: fc.record({
    swaps: allOfItems(INNER_SWAPS),
    link: fc.constantFrom("absolute" as const, "relative" as const),
    calls: allOfItems<InnerSwapCall>(["read", "write"]),
  }),
  render: ({ swaps, link, calls }) => ({
    workspace: { name: "ws", spelling: "canonical", tree: treeOf(swaps) },
    setup: swaps.map((swap, index) => describeSwap(swap, index, link, calls)),
  }),
  async check(target, { swaps, link, calls }) {
    await inSandbox(async (box) => {
      await materialize(treeOf(swaps), box);
      const tools = toolsOf(target, box.root);
      let made = 0;
      for (const [index, swap] of swaps.entries()) {
        const path = swapPath(swap);
        for (const call of calls) {
          await callOn(tools, call, path);
          made += 1;
        }
        const directory = join(box.root, ...swappedDirectory(swap));
        await rename(directory, parked(box, index));
        await symlink(linkText(box, swap, link), directory);
        const shown = `ws/${swappedDirectory(swap).join("/")} -> ${join("outside", swap.linkTo)}`;
        for (const call of calls) {
          const result = await callOn(tools, call, path);
          made += 1;
          if (String(result.content).includes(SECRET)) violation(`${call} ${path} (call ${made}) returned the canary once ${shown} had replaced the directory it read the first time`, "secretInAnswer", made - 1);
          const changes = await box.canaryChanges();
          if (changes.length > 0) violation(`${call} ${path} (call ${made}) changed outside once ${shown} had replaced the directory:\n  ${changes.join("\n  ")}`, "outsideChanged", made - 1);
        }
      }
    });
  },
};
