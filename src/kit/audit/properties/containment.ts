/**
 * Containment, judged without trusting the code under test: after the check, look at the disk.
 *
 * - `containment.workspacePath`: an accepted path names something inside the real root (realpath of
 *   the path, or of its nearest existing ancestor when it does not exist yet, compared by prefix).
 * - `containment.lossyName`: beside a root whose name holds U+FFFD stands its twin with the raw byte
 *   0xFF there, which `realpath` decodes to the root's own name; a link into that twin neither leaks
 *   its file on read nor lets a write land in it.
 * The tools' own containment, one property per operation, is in operations.ts; the cases, the tree
 * and the sandbox they all share are here. Every run draws the root's name and the spelling the tools
 * are handed (workspace-root.ts).
 */
import fc from "fast-check";
import { lstatSync, readFileSync, readdirSync } from "node:fs";
import { lstat, readFile, readlink, realpath, symlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import {
  type Candidate,
  type Probe,
  type ProbeConstraints,
  type WorkspaceRoot,
  candidate,
  type Intent,
  besideTheRoot,
  candidateText,
  longPaths,
  loopThenOut,
  rootSpellings,
  specialFiles,
  spellRoot,
  treeWithProbes,
  twinAttack,
  workspaceRoot,
} from "../arbitraries/index.js";
import { type AuditProperty, execute, inSandbox, isUnder, settle, toolsOf, violation } from "../runner/property.js";
import { CANARY_FILE, SECRET, type Sandbox, childBytes, displayBytes, serverEnvironmentOf } from "../../sandbox/sandbox.js";
import { REPLACEMENT_CHARACTER } from "../../sandbox/root-twins.js";
import { type Tree, type TreeEntry, materialize, showName } from "../../sandbox/tree.js";
import type { Scene } from "../runner/counterexample.js";
import type { AuditTarget } from "../../operations/target.js";
import type { Threat } from "../../findings/findings.js";

export interface ContainmentCase<P = Probe> {
  root: WorkspaceRoot;
  tree: Tree;
  /** Every probe is tried against the one tree laid out for the case; canaries are compared after all. */
  probes: readonly P[];
}

/** Cases of a tree and probes aimed at it, under a root of any name and spelling. */
export function containmentCases(generic: fc.Arbitrary<Candidate>, constraints: ProbeConstraints = {}): fc.Arbitrary<ContainmentCase> {
  return fc.tuple(workspaceRoot(), treeWithProbes(generic, constraints)).map(([root, aimed]) => ({ root, ...aimed }));
}

/** What the path check is asked through the openings: a file that exists, and a new name to create. */
const CHECKED_INTENTS: readonly Intent[] = [{ kind: "existing" }, { kind: "fresh" }];

const isLink = (entry: TreeEntry) => entry.kind === "symlink" || entry.kind === "hardlink";
const isSpecial = (entry: TreeEntry) => entry.kind === "special";

/** What a case on `tree` needs: a link inside the workspace when the tree lays one out, a special file when it lays one out, else only the input. */
export const treeThreat = (tree: Tree): Threat =>
  tree.some(isLink) ? "a link inside the workspace" : tree.some(isSpecial) ? "a special file inside the workspace" : "the model's input alone";

/**
 * The case on its tree with less of what an attacker plants (`AuditProperty.lesserCases`): without
 * its links and special files, then without its links only, then without its special files only;
 * each only where it takes something away, and once.
 */
export function lesserCases<C extends { tree: Tree }>(value: C): C[] {
  const without = (planted: (entry: TreeEntry) => boolean) => ({ ...value, tree: value.tree.filter((entry) => !planted(entry)) });
  const links = value.tree.some(isLink);
  const specials = value.tree.some(isSpecial);
  return [
    ...(links || specials ? [without((entry) => isLink(entry) || isSpecial(entry))] : []),
    ...(links && specials ? [without(isLink), without(isSpecial)] : []),
  ];
}

/** A tree's probes are its cases: the tree is laid out, and its canaries compared, once for them all. */
export const probeCount = (value: { probes: readonly unknown[] }): number => value.probes.length;

/** How a counterexample shows a case on a tree: its root and its tree, then the calls it made (`setup` before them). */
export function caseScene({ root, tree }: ContainmentCase<unknown>, setup?: readonly string[]): Scene {
  return { workspace: { name: root.name, spelling: root.spelling, tree }, ...(setup === undefined ? {} : { setup }) };
}

/**
 * Runs `body` in a sandbox with the case's root name and tree, handing it the root as spelled. A
 * sandbox that proved reusable has every spelling of its root started on the target ahead (an MCP
 * server's start costs more than a tree of calls), so the later cases that draw them find them
 * running; one that a failing case spoiled is not worth it. A target in this process finds its home
 * directory at the outside canary while the case runs (`HOME`), so a tool that expands `~` after its
 * check is seen reaching it (twins.ts); a server was started with a home of the sandbox's, whose
 * canary file is written again for every case (sandbox.ts, `serverEnvironmentOf`).
 */
export async function inCaseSandbox(target: AuditTarget, value: ContainmentCase<unknown>, body: (box: Sandbox, root: string) => Promise<void>): Promise<void> {
  await inSandbox(
    async (box) => {
      await materialize(value.tree, box);
      if (target.start !== undefined) serverEnvironmentOf(box.root);
      await (target.start === undefined ? withHome(box.outside, () => body(box, spellRoot(box, value.root.spelling))) : body(box, spellRoot(box, value.root.spelling)));
    },
    { rootName: value.root.name, onPooled: (box) => target.warm?.(rootSpellings(box)) },
  );
}

/** The homes of the cases in this process now running, in the order they started. */
const runningHomes: string[] = [];
let homeBeforeCases: string | undefined;

/**
 * `body` with `HOME` at `home`. Cases run side by side and `HOME` is one for the process: when a case
 * ends, `HOME` goes to the home of a case still running (whose box is alive), never back to what it was
 * when the case began, which may be the outside of a box already disposed (a `~` then read nothing, and
 * the tool that expands it passed). Put back as it was before the cases once none runs.
 */
export async function withHome(home: string, body: () => Promise<void>): Promise<void> {
  if (runningHomes.length === 0) homeBeforeCases = process.env.HOME;
  runningHomes.push(home);
  process.env.HOME = home;
  try {
    await body();
  } finally {
    runningHomes.splice(runningHomes.lastIndexOf(home), 1);
    const running = runningHomes.at(-1);
    if (running !== undefined) process.env.HOME = running;
    else if (homeBeforeCases === undefined) delete process.env.HOME;
    else process.env.HOME = homeBeforeCases;
  }
}

export const containmentWorkspacePath: AuditProperty<ContainmentCase> = {
  id: "containment.workspacePath",
  gate: "workspacePath",
  kind: "guarantee",
  title: "an accepted path names something inside the real root",
  needs: ["workspacePath"],
  consequence: "hardening broken",
  threat: (value) => treeThreat(value.tree),
  lesserCases,
  weaknesses: ["CWE-22"],
  // The check has no optional arguments to sweep.
  arbitrary: containmentCases(candidate(), {
    openings: [besideTheRoot(CHECKED_INTENTS), twinAttack({ intents: CHECKED_INTENTS, changes: true }), specialFiles(CHECKED_INTENTS), longPaths(CHECKED_INTENTS), loopThenOut(CHECKED_INTENTS)],
  }),
  casesIn: probeCount,
  render: (value) => caseScene(value),
  async check(target, value) {
    await inCaseSandbox(target, value, async (box, root) => {
      for (const probe of value.probes) {
        const answer = await settle(target.workspacePath!(root, candidateText(box, probe.candidate), probe.creating));
        if (!answer.ok) continue;
        if (typeof answer.value !== "string") violation(`workspacePath answered ${typeof answer.value}, not a path`);
        const real = await canonicalExisting(answer.value);
        // A path through a file or a loop names nothing a tool could open: refused by the kernel.
        if (real !== undefined && !isUnder(box.root, real)) violation(`accepted ${answer.value}, which resolves to ${real}, outside ${box.root}`);
      }
    });
  },
};

interface LossyCase {
  operation: "read" | "write";
  link: "relative" | "absolute";
  leaf: string;
}

/** A root name with U+FFFD, whose sandbox gets the raw-byte twin (root-twins.ts). */
const LOSSY_ROOT = `w${REPLACEMENT_CHARACTER}s`;

export const containmentLossyName: AuditProperty<LossyCase> = {
  id: "containment.lossyName",
  gate: "workspacePath",
  kind: "guarantee",
  title: "a link to a name that decodes to the root's own neither leaks nor receives a file",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  threat: () => "a link inside the workspace",
  weaknesses: ["CWE-176"],
  arbitrary: fc.record({
    operation: fc.constantFrom("read" as const, "write" as const),
    link: fc.constantFrom("relative" as const, "absolute" as const),
    leaf: fc.constantFrom(CANARY_FILE, "new.txt", "new/deeper.txt"),
  }),
  // The link's raw name no string spells, so no tree can hold it: the setup says it in words.
  render: ({ link }) => ({
    workspace: { name: LOSSY_ROOT, spelling: "canonical", tree: [] },
    setup: [
      `beside it w\\xFFs, the root's name with the byte 0xFF where it has U+FFFD (realpath decodes both to the root's), holding ${CANARY_FILE}`,
      `${showName(LOSSY_ROOT)}/lnk -> ${link === "relative" ? "../w\\xFFs" : "$BOX/w\\xFFs"}, a link made from raw bytes`,
    ],
  }),
  async check(target, { operation, link, leaf }) {
    await inSandbox(
      async (box) => {
        const [twin] = box.rawSiblings;
        if (twin === undefined) throw new Error(`the sandbox of root ${JSON.stringify(LOSSY_ROOT)} has no raw-byte twin`);
        const twinName = twin.subarray(Buffer.from(`${dirname(box.root)}/`).length);
        await symlink(link === "relative" ? Buffer.concat([Buffer.from("../"), twinName]) : twin, join(box.root, "lnk"));
        const tools = toolsOf(target, box.root);
        const path = `lnk/${leaf}`;
        const result = operation === "read" ? await execute(tools.read, { path }) : await execute(tools.write, { path, content: `through ${basename(box.root)}` });
        if (String(result.content).includes(SECRET)) violation("read returned the file of the twin whose raw name decodes to the root's", "secretInAnswer");
      },
      { rootName: LOSSY_ROOT },
    );
  },
};

/**
 * Where `path` would land: its realpath when it exists; the target of a dangling link (a write creates
 * it there); otherwise the same question for its parent. `undefined` when the kernel would refuse the
 * path itself (ENOTDIR, ELOOP, ENAMETOOLONG). Bounded like the kernel's link following.
 */
export async function canonicalExisting(path: string, hops = 0): Promise<string | undefined> {
  const real = await settle(realpath(path));
  if (real.ok) return real.value;
  if ((real.error as NodeJS.ErrnoException).code !== "ENOENT" || hops > 40) return undefined;
  const stats = await settle(lstat(path));
  if (stats.ok && stats.value.isSymbolicLink()) return canonicalExisting(resolve(dirname(path), await readlink(path)), hops + 1);
  if (dirname(path) === path) return undefined;
  return canonicalExisting(dirname(path), hops);
}

/** Whether `path` is a regular file whose real path is under `root` and holds `content`: the walk below, for the one path a write most likely used. */
export async function holds(root: string, path: string, content: string): Promise<boolean> {
  const [stats, real] = await Promise.all([settle(lstat(path)), settle(realpath(path))]);
  return stats.ok && stats.value.isFile() && real.ok && isUnder(root, real.value) && (await readFile(path, "utf8")) === content;
}

/**
 * Walks the workspace without following links, answering the first regular file whose content
 * `matches` (as `displayBytes` shows its path). Synchronous, as the sandbox's walks are (sandbox.ts
 * says why): every call has settled. Names as bytes: a tool may leave one that no string spells.
 */
export function findFile(dir: string | Buffer, matches: (content: string) => boolean): string | undefined {
  for (const name of readdirSync(dir, { encoding: "buffer" })) {
    const path = childBytes(dir, name);
    const stats = lstatSync(path);
    const found = stats.isDirectory() ? findFile(path, matches) : stats.isFile() && matches(readFileSync(path, "utf8")) ? displayBytes(path) : undefined;
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether a regular file in the workspace (links not followed) holds exactly `content`. */
export function containsFileWith(dir: string, content: string): boolean {
  return findFile(dir, (found) => found === content) !== undefined;
}
