/**
 * A disposable workspace with canaries beside it, for tests and properties that must prove nothing
 * escaped.
 *
 * Layout, under one fresh temp directory `base` (its real path, so a symlinked /tmp cannot confuse a
 * comparison), with the workspace's parent `GUARD_DEPTH` directories further down:
 *   base/g/g/g/g/ws/                the workspace root handed to the tools
 *   base/g/g/g/g/outside/           a canary directory with a secret file and a subdirectory
 *   base/g/g/g/g/ws-other/, ws2/, … similar-prefix siblings of the root, each holding a secret file
 *   base/g/g/g/g/scratch/           the caller's own moving parts (a TOCTOU attacker parks here); not
 *                                   a canary, so nothing is ever expected to land in it by accident
 * The guard directories exist so that a path with at most `GUARD_DEPTH` parent steps beyond the
 * workspace's parent, even opened raw by a broken implementation under audit, still lands inside
 * `base`, where the canary check sees it.
 *
 * Promises: `outsideChanges()` lists every difference (added, removed, changed file content, symlink
 * target or type) anywhere under `base` except inside the workspace and `scratch`, since creation,
 * each with what stands at that path now; `canaryChanges()` is the same list as one line per change
 * (`added PATH`, `removed PATH`, `changed PATH`); `SECRET` marks
 * every canary file so a read that returns it is detectable; `dispose()` removes the whole tree, links
 * included, without following them. `reset()` makes the sandbox as new again when it can prove it
 * is (canaries unchanged, root still a real directory): it empties the workspace and `scratch`, and
 * answers false, touching nothing, when it cannot, so the caller disposes the sandbox instead.
 * Does not promise: to notice writes outside `base`. Generators keep every path and link target they
 * produce within `GUARD_DEPTH` parent steps (see arbitraries.ts), which is what keeps them inside.
 */
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";

export const SECRET = "CANARY-SECRET-7f3a";

/** Suffixes that turn the root's name into a sibling whose path starts with the root's path. */
export const SIMILAR_PREFIX_SUFFIXES = ["-other", "2", "_bak", " ", "'", ".d", "..", "-"] as const;

/** Parent steps above the workspace's parent that still land inside the sandbox. */
export const GUARD_DEPTH = 4;

/** What a path outside the workspace holds: the state a change is judged by. */
export type EntryState =
  | { kind: "missing" }
  | { kind: "directory" }
  | { kind: "file"; bytes: number }
  | { kind: "symlink"; target: string }
  | { kind: "special"; mode: number };

export interface OutsideChange {
  change: "added" | "removed" | "changed";
  path: string;
  /** What is at `path` now (`missing` once removed). */
  now: EntryState;
}

export interface Sandbox {
  readonly base: string;
  readonly root: string;
  readonly outside: string;
  readonly siblings: readonly string[];
  readonly scratch: string;
  outsideChanges(): Promise<OutsideChange[]>;
  canaryChanges(): Promise<string[]>;
  reset(): Promise<boolean>;
  dispose(): Promise<void>;
}

export async function createSandbox(prefix = "workspace-gates-"): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  const parent = join(base, ...Array<string>(GUARD_DEPTH).fill("g"));
  const root = join(parent, "ws");
  const outside = join(parent, "outside");
  const scratch = join(parent, "scratch");
  const siblings = SIMILAR_PREFIX_SUFFIXES.map((suffix) => `${root}${suffix}`);
  await mkdir(root, { recursive: true });
  await mkdir(scratch);
  await mkdir(join(outside, "dir"), { recursive: true });
  await writeFile(join(outside, "secret.txt"), `${SECRET} outside\n`);
  await writeFile(join(outside, "dir", "secret.txt"), `${SECRET} outside/dir\n`);
  await Promise.all(
    siblings.map(async (sibling) => {
      await mkdir(sibling);
      await writeFile(join(sibling, "secret.txt"), `${SECRET} ${sibling}\n`);
    }),
  );
  const unwatched = new Set([root, scratch]);
  const before = await snapshotOutside(base, unwatched);
  const outsideChanges = async () => diffSnapshots(before, await snapshotOutside(base, unwatched));
  const canaryChanges = async () => (await outsideChanges()).map(({ change, path }) => `${change} ${path}`);
  return {
    base,
    root,
    outside,
    siblings,
    scratch,
    outsideChanges,
    canaryChanges,
    async reset() {
      try {
        if ((await canaryChanges()).length > 0) return false;
        for (const dir of [root, scratch]) {
          const stats = await lstat(dir);
          if (!stats.isDirectory() || stats.isSymbolicLink()) return false;
          // rm does not follow links, so emptying cannot reach through one.
          await Promise.all((await readdir(dir)).map((name) => rm(join(dir, name), { recursive: true, force: true })));
        }
        return true;
      } catch {
        return false;
      }
    },
    async dispose() {
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** Each path's state, and a fingerprint that changes with the content, target or type. */
type Snapshot = Map<string, { state: EntryState; fingerprint: string }>;

async function snapshotOutside(base: string, unwatched: ReadonlySet<string>): Promise<Snapshot> {
  const entries: Snapshot = new Map();
  await snapshotInto(base, unwatched, entries);
  return entries;
}

async function snapshotInto(path: string, unwatched: ReadonlySet<string>, entries: Snapshot): Promise<void> {
  if (unwatched.has(path)) return;
  let stats;
  try {
    stats = await lstat(path);
  } catch {
    entries.set(path, { state: { kind: "missing" }, fingerprint: "missing" });
    return;
  }
  if (stats.isSymbolicLink()) {
    const target = await readlink(path);
    entries.set(path, { state: { kind: "symlink", target }, fingerprint: `link -> ${target}` });
  } else if (stats.isFile()) {
    const content = await readFile(path, "latin1");
    entries.set(path, { state: { kind: "file", bytes: content.length }, fingerprint: `file ${content}` });
  } else if (stats.isDirectory()) {
    entries.set(path, { state: { kind: "directory" }, fingerprint: "dir" });
    for (const name of (await readdir(path)).sort()) await snapshotInto(join(path, name), unwatched, entries);
  } else entries.set(path, { state: { kind: "special", mode: stats.mode }, fingerprint: `special mode ${stats.mode}` });
}

function diffSnapshots(before: Snapshot, after: Snapshot): OutsideChange[] {
  const changes: OutsideChange[] = [];
  for (const [path, was] of before) {
    const now = after.get(path);
    if (now === undefined) changes.push({ change: "removed", path, now: { kind: "missing" } });
    else if (now.fingerprint !== was.fingerprint) changes.push({ change: "changed", path, now: now.state });
  }
  for (const [path, now] of after) if (!before.has(path)) changes.push({ change: "added", path, now: now.state });
  return changes;
}

/** A path in a sandbox, shown beside the workspace (`ws/docs/secret.txt`, `outside/dir`). */
export function displayPath(box: Sandbox, path: string): string {
  // Relative to the workspace's parent, where ws/, outside/ and the siblings sit side by side.
  const shown = relative(dirname(box.root), path);
  return shown === "" || shown.startsWith("..") ? path : shown;
}
