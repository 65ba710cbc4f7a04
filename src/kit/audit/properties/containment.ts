/**
 * Containment, judged without trusting the code under test: after the tool has run, look at the disk.
 *
 * - `containment.workspacePath`: an accepted path names something inside the real root (realpath of
 *   the path, or of its nearest existing ancestor when it does not exist yet, compared by prefix).
 * - `containment.read`: a read never returns canary content and changes nothing outside.
 * - `containment.write`: a write changes nothing outside, and a write that reports success left its
 *   content in a file inside the workspace.
 * - `containment.lossyName`: beside a root whose name holds U+FFFD stands its twin with the raw byte
 *   0xFF there, which `realpath` decodes to the root's own name; a link into that twin neither leaks
 *   its file on read nor lets a write land in it.
 * Every run draws the root's name and the spelling the tools are handed (workspace-root.ts).
 */
import fc from "fast-check";
import { lstat, readFile, readdir, readlink, realpath, symlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import {
  type Candidate,
  type Probe,
  type ProbeConstraints,
  type WorkspaceRoot,
  candidate,
  candidateText,
  renderCandidate,
  renderRoot,
  spellRoot,
  treeWithProbes,
  workspaceRoot,
} from "../arbitraries/index.js";
import { type AuditProperty, execute, inSandbox, isUnder, settle, toolsOf, violation } from "../property.js";
import { CANARY_FILE, SECRET, type Sandbox } from "../../sandbox/sandbox.js";
import { REPLACEMENT_CHARACTER } from "../../sandbox/root-twins.js";
import { type Tree, materialize, renderTree } from "../../sandbox/tree.js";

export interface ContainmentCase<P extends Probe = Probe> {
  root: WorkspaceRoot;
  tree: Tree;
  /** Every probe is tried against the one tree laid out for the case; canaries are compared after all. */
  probes: readonly P[];
}

/** Cases of a tree and probes aimed at it, under a root of any name and spelling. */
export function containmentCases(generic: fc.Arbitrary<Candidate>, constraints: ProbeConstraints = {}): fc.Arbitrary<ContainmentCase> {
  return fc.tuple(workspaceRoot(), treeWithProbes(generic, constraints)).map(([root, aimed]) => ({ root, ...aimed }));
}

const containmentCase = containmentCases(candidate());

/**
 * Runs per block of the tool properties, a fifth of the others: each probe is a tool call (over MCP a
 * round trip), so ten trees of some thirty probes cost about what fifty trees of five did before a tree
 * served that many.
 */
const TOOL_TREE_SCALE = 0.2;

/** A tree's probes are its cases: the tree is laid out, and its canaries compared, once for them all. */
export const probeCount = (value: { probes: readonly unknown[] }): number => value.probes.length;

/** How a counterexample shows the case: the tree, the root, then each probe (and its extra lines). */
export function renderCase<P extends Probe>({ root, tree, probes }: ContainmentCase<P>, call?: string, extra: (probe: P) => string = () => ""): string {
  const lines = probes.map((probe) => `${call ?? (probe.creating ? "creating" : "existing")} ${renderCandidate(probe.candidate)}${extra(probe)}`);
  return `tree:\n${renderTree(tree, root.name)}\n${renderRoot(root)}\n${probes.length === 1 ? "probe" : "probes, in order"}:\n  ${lines.join("\n  ")}`;
}

/** Runs `body` in a sandbox with the case's root name and tree, handing it the root as spelled. */
export async function inCaseSandbox(value: ContainmentCase<Probe>, body: (box: Sandbox, root: string) => Promise<void>): Promise<void> {
  await inSandbox(
    async (box) => {
      await materialize(value.tree, box);
      await body(box, await spellRoot(box, value.root.spelling));
    },
    { rootName: value.root.name },
  );
}

export const containmentWorkspacePath: AuditProperty<ContainmentCase> = {
  id: "containment.workspacePath",
  gate: "workspacePath",
  kind: "guarantee",
  title: "an accepted path names something inside the real root",
  needs: ["workspacePath"],
  arbitrary: containmentCase,
  casesIn: probeCount,
  render: (value) => renderCase(value),
  async check(target, value) {
    await inCaseSandbox(value, async (box, root) => {
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

export const containmentRead: AuditProperty<ContainmentCase> = {
  id: "containment.read",
  gate: "workspacePath",
  kind: "guarantee",
  title: "read never returns content from outside the workspace",
  needs: ["createWorkspaceTools"],
  budgetScale: TOOL_TREE_SCALE,
  arbitrary: containmentCase,
  casesIn: probeCount,
  render: (value) => renderCase(value, "read"),
  async check(target, value) {
    await inCaseSandbox(value, async (box, root) => {
      const { read } = toolsOf(target, root);
      for (const probe of value.probes) {
        const result = await execute(read, { path: candidateText(box, probe.candidate) });
        if (String(result.content).includes(SECRET)) violation(`read returned canary content: ${String(result.content).slice(0, 200)}`);
      }
    });
  },
};

export const containmentWrite: AuditProperty<ContainmentCase> = {
  id: "containment.write",
  gate: "workspacePath",
  kind: "guarantee",
  title: "write never changes anything outside the workspace",
  needs: ["createWorkspaceTools"],
  budgetScale: TOOL_TREE_SCALE,
  arbitrary: containmentCase,
  casesIn: probeCount,
  render: (value) => renderCase(value, "write"),
  async check(target, value) {
    await inCaseSandbox(value, async (box, root) => {
      const { write } = toolsOf(target, root);
      for (const [index, probe] of value.probes.entries()) {
        const marker = `written by the audit, probe ${index} ${Math.random()}`;
        const result = await execute(write, { path: candidateText(box, probe.candidate), content: marker });
        if (result.isError !== true && !(await holds(box.root, resolve(box.root, candidateText(box, probe.candidate)), marker)) && !(await containsFileWith(box.root, marker)))
          violation(`write of probe ${index} reported success (${result.content}) but no file inside the workspace holds the content`);
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
  arbitrary: fc.record({
    operation: fc.constantFrom("read" as const, "write" as const),
    link: fc.constantFrom("relative" as const, "absolute" as const),
    leaf: fc.constantFrom(CANARY_FILE, "new.txt", "new/deeper.txt"),
  }),
  render: ({ operation, link, leaf }) =>
    `root: ${JSON.stringify(LOSSY_ROOT)}, beside it the raw name w\\xFFs holding ${CANARY_FILE}\ntree:\n  ws/lnk -> ${link === "relative" ? "../w\\xFFs" : "$BOX/w\\xFFs"} (raw bytes)\ncall: ${operation} "lnk/${leaf}"`,
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
        if (String(result.content).includes(SECRET)) violation("read returned the file of the twin whose raw name decodes to the root's");
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
async function holds(root: string, path: string, content: string): Promise<boolean> {
  const [stats, real] = await Promise.all([settle(lstat(path)), settle(realpath(path))]);
  return stats.ok && stats.value.isFile() && real.ok && isUnder(root, real.value) && (await readFile(path, "utf8")) === content;
}

/** Walks the workspace without following links, looking for a regular file with `content`. */
export async function containsFileWith(dir: string, content: string): Promise<boolean> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const stats = await lstat(path);
    if (stats.isDirectory() && (await containsFileWith(path, content))) return true;
    if (stats.isFile() && (await readFile(path, "utf8")) === content) return true;
  }
  return false;
}
