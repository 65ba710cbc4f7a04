/**
 * Containment, judged without trusting the code under test: after the tool has run, look at the disk.
 *
 * - `containment.workspacePath`: an accepted path names something inside the real root (realpath of
 *   the path, or of its nearest existing ancestor when it does not exist yet, compared by prefix).
 * - `containment.read`: a read never returns canary content and changes nothing outside.
 * - `containment.write`: a write changes nothing outside, and a write that reports success left its
 *   content in a file inside the workspace.
 */
import { lstat, readFile, readdir, readlink, realpath } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { type Candidate, candidate, candidateText, treeWithCandidate } from "../arbitraries.js";
import { type AuditProperty, execute, inSandbox, isUnder, settle, toolsOf, violation } from "../property.js";
import { SECRET } from "../../sandbox/sandbox.js";
import { type Tree, materialize, renderTree } from "../../sandbox/tree.js";

export interface ContainmentCase {
  tree: Tree;
  candidate: Candidate;
  creating: boolean;
}

const containmentCase = treeWithCandidate(candidate);

export function renderCase({ tree, candidate: target, creating }: ContainmentCase, call?: string): string {
  const text = target.form === "text" ? JSON.stringify(target.text) : `$${target.area}/${target.rest}`;
  return `tree:\n${renderTree(tree)}\ncandidate: ${text}${call === undefined ? ` (creating: ${creating})` : `\ncall: ${call}`}`;
}

export const containmentWorkspacePath: AuditProperty<ContainmentCase> = {
  id: "containment.workspacePath",
  gate: "workspacePath",
  kind: "guarantee",
  title: "an accepted path names something inside the real root",
  needs: ["workspacePath"],
  arbitrary: containmentCase,
  render: (value) => renderCase(value),
  async check(target, { tree, candidate: spec, creating }) {
    await inSandbox(async (box) => {
      await materialize(tree, box);
      const answer = await settle(target.workspacePath!(box.root, candidateText(box, spec), creating));
      if (!answer.ok) return;
      if (typeof answer.value !== "string") violation(`workspacePath answered ${typeof answer.value}, not a path`);
      const real = await canonicalExisting(answer.value);
      // A path through a file or a loop names nothing a tool could open: refused by the kernel.
      if (real !== undefined && !isUnder(box.root, real)) violation(`accepted ${answer.value}, which resolves to ${real}, outside ${box.root}`);
    });
  },
};

export const containmentRead: AuditProperty<ContainmentCase> = {
  id: "containment.read",
  gate: "workspacePath",
  kind: "guarantee",
  title: "read never returns content from outside the workspace",
  needs: ["createWorkspaceTools"],
  arbitrary: containmentCase,
  render: (value) => renderCase(value, "read"),
  async check(target, { tree, candidate: spec }) {
    await inSandbox(async (box) => {
      await materialize(tree, box);
      const result = await execute(toolsOf(target, box.root).read, { path: candidateText(box, spec) });
      if (String(result.content).includes(SECRET)) violation(`read returned canary content: ${String(result.content).slice(0, 200)}`);
    });
  },
};

export const containmentWrite: AuditProperty<ContainmentCase> = {
  id: "containment.write",
  gate: "workspacePath",
  kind: "guarantee",
  title: "write never changes anything outside the workspace",
  needs: ["createWorkspaceTools"],
  arbitrary: containmentCase,
  render: (value) => renderCase(value, "write"),
  async check(target, { tree, candidate: spec }) {
    await inSandbox(async (box) => {
      await materialize(tree, box);
      const marker = `written by the audit ${Math.random()}`;
      const result = await execute(toolsOf(target, box.root).write, { path: candidateText(box, spec), content: marker });
      if (result.isError !== true && !(await containsFileWith(box.root, marker)))
        violation(`write reported success (${result.content}) but no file inside the workspace holds the content`);
    });
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
