/**
 * The reference resolver, the precision oracle: what the reference's `workspacePath` (this package's
 * own, as the chapter writes it) must answer, predicted without calling it, without `realpath` and
 * without `node:path`.
 *
 * It reads the sandbox once into an in-memory snapshot (every entry's type and every link's text, by
 * `lstat` and `readlink`), then resolves paths component by component as the Linux kernel does:
 * symlinks followed (at most 40 times), `..` taken physically after a link, a file in the middle
 * failing with ENOTDIR. On top of that it replays the reference's decision: lexical resolution of the
 * candidate, `lstat` of the leaf when creating and, on ENOENT only, the nearest existing ancestor, then
 * the canonical comparison against the root.
 *
 * Promises: `accept` carries the exact path the implementation must return; `refuse` means an escape
 * or an error (the two are not told apart: both keep the tool from touching anything).
 * Does not promise: a prediction for paths outside the sandbox (answered `unknown`) or for names the
 * kernel would reject for length or NUL bytes (callers keep those out of precision runs).
 */
import { lstat, readdir, readlink } from "node:fs/promises";

type SnapshotNode = { type: "dir" } | { type: "file" } | { type: "symlink"; target: string } | { type: "other" };

export interface TreeSnapshot {
  /** Entries by absolute path, for everything under `base`. */
  readonly nodes: ReadonlyMap<string, SnapshotNode>;
  readonly base: string;
}

export type Prediction = { kind: "accept"; path: string } | { kind: "refuse"; reason: string } | { kind: "unknown" };

type Walk = { ok: string } | { error: string } | { unknown: true };

const MAX_SYMLINK_HOPS = 40;

export async function snapshotTree(base: string): Promise<TreeSnapshot> {
  const nodes = new Map<string, SnapshotNode>();
  const visit = async (path: string): Promise<void> => {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) nodes.set(path, { type: "symlink", target: await readlink(path) });
    else if (stats.isFile()) nodes.set(path, { type: "file" });
    else if (stats.isDirectory()) {
      nodes.set(path, { type: "dir" });
      for (const name of await readdir(path)) await visit(`${path}/${name}`);
    } else nodes.set(path, { type: "other" });
  };
  await visit(base);
  return { nodes, base };
}

/** The reference's verdict for `candidate` against the real root `rootReal`. */
export function predictWorkspacePath(snapshot: TreeSnapshot, rootReal: string, candidate: string, creating: boolean): Prediction {
  const requested = lexicalResolve(rootReal, candidate);
  let checked = requested;
  if (creating) {
    const leaf = walk(snapshot, requested, false);
    if ("unknown" in leaf) return { kind: "unknown" };
    if ("error" in leaf) {
      if (leaf.error !== "ENOENT") return { kind: "refuse", reason: `lstat: ${leaf.error}` };
      const ancestor = nearestExisting(snapshot, parentOf(requested));
      if (typeof ancestor !== "string") return ancestor;
      checked = ancestor;
    }
  }
  const real = walk(snapshot, checked, true);
  if ("unknown" in real) return { kind: "unknown" };
  if ("error" in real) return { kind: "refuse", reason: `realpath: ${real.error}` };
  const inside = real.ok === rootReal || real.ok.startsWith(`${rootReal}/`);
  return inside ? { kind: "accept", path: requested } : { kind: "refuse", reason: `escape to ${real.ok}` };
}

function nearestExisting(snapshot: TreeSnapshot, start: string): string | Prediction {
  for (let current = start; ; current = parentOf(current)) {
    const found = walk(snapshot, current, false);
    if ("unknown" in found) return { kind: "unknown" };
    if (!("error" in found)) return current;
    if (found.error !== "ENOENT") return { kind: "refuse", reason: `lstat: ${found.error}` };
    if (current === "/") return { kind: "refuse", reason: "no existing ancestor" };
  }
}

/** `resolve(root, candidate)` for POSIX, written out: absolute restarts, `.` and empty vanish, `..` pops. */
export function lexicalResolve(root: string, candidate: string): string {
  const parts = candidate.startsWith("/") ? [] : components(root);
  for (const part of components(candidate)) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return `/${parts.join("/")}`;
}

function components(path: string): string[] {
  return path.split("/").filter((part) => part !== "");
}

function parentOf(path: string): string {
  const parts = components(path);
  parts.pop();
  return `/${parts.join("/")}`;
}

/**
 * Resolves an absolute path against the snapshot as the kernel would. With `followLast` false the final
 * component is looked up but not followed (lstat); otherwise every link is followed (realpath).
 */
function walk(snapshot: TreeSnapshot, path: string, followLast: boolean): Walk {
  let done: string[] = [];
  let todo = components(path);
  let hops = 0;
  while (todo.length > 0) {
    const name = todo.shift() as string;
    if (name === ".") continue;
    if (name === "..") {
      done.pop();
      continue;
    }
    const next = `/${[...done, name].join("/")}`;
    const node = lookup(snapshot, next);
    if (node === "unknown") return { unknown: true };
    if (node === undefined) return { error: "ENOENT" };
    if (node.type === "symlink" && (todo.length > 0 || followLast)) {
      if (++hops > MAX_SYMLINK_HOPS) return { error: "ELOOP" };
      if (node.target.startsWith("/")) done = [];
      todo = [...components(node.target), ...todo];
      continue;
    }
    if (node.type !== "dir" && todo.length > 0) return { error: "ENOTDIR" };
    done.push(name);
  }
  return { ok: `/${done.join("/")}` };
}

/** Above `base` only the chain of directories leading to it is known; anything beside it is unknown. */
function lookup(snapshot: TreeSnapshot, path: string): SnapshotNode | undefined | "unknown" {
  if (path === snapshot.base || path.startsWith(`${snapshot.base}/`)) return snapshot.nodes.get(path);
  return snapshot.base.startsWith(`${path}/`) ? { type: "dir" } : "unknown";
}
