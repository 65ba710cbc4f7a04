/**
 * A disposable workspace with canaries beside it, for tests and properties that must prove nothing
 * escaped.
 *
 * Layout, all under one fresh temp directory (its real path, so symlinked /tmp cannot confuse a
 * comparison):
 *   ws/                 the workspace root handed to the tools
 *   outside/            a canary directory with a secret file and a subdirectory
 *   ws-other/, ws2/, …  similar-prefix siblings of the root, each holding a secret file
 *
 * Promises: `canaryChanges()` lists every difference (added, removed, changed file content, symlink
 * target or type) under each canary since creation, and `SECRET` marks every canary file so a read that
 * returns it is detectable; `dispose()` removes the whole tree, links included, without following them.
 * Does not promise: to notice writes anywhere else on the machine (the canaries sit where a path
 * mistake lands: the parent's other children).
 */
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const SECRET = "CANARY-SECRET-7f3a";

/** Suffixes that turn the root's name into a sibling whose path starts with the root's path. */
export const SIMILAR_PREFIX_SUFFIXES = ["-other", "2", "_bak", " ", "'", ".d", "..", "-"] as const;

export interface Sandbox {
  readonly base: string;
  readonly root: string;
  readonly outside: string;
  readonly siblings: readonly string[];
  canaryChanges(): Promise<string[]>;
  dispose(): Promise<void>;
}

export async function createSandbox(prefix = "workspace-gates-"): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  const root = join(base, "ws");
  const outside = join(base, "outside");
  const siblings = SIMILAR_PREFIX_SUFFIXES.map((suffix) => `${root}${suffix}`);
  await mkdir(root);
  await mkdir(join(outside, "dir"), { recursive: true });
  await writeFile(join(outside, "secret.txt"), `${SECRET} outside\n`);
  await writeFile(join(outside, "dir", "secret.txt"), `${SECRET} outside/dir\n`);
  for (const sibling of siblings) {
    await mkdir(sibling);
    await writeFile(join(sibling, "secret.txt"), `${SECRET} ${sibling}\n`);
  }
  const canaries = [outside, ...siblings];
  const before = await snapshotAll(canaries);
  return {
    base,
    root,
    outside,
    siblings,
    async canaryChanges() {
      return diffSnapshots(before, await snapshotAll(canaries));
    },
    async dispose() {
      await rm(base, { recursive: true, force: true });
    },
  };
}

type Snapshot = Map<string, string>;

async function snapshotAll(dirs: readonly string[]): Promise<Snapshot> {
  const entries: Snapshot = new Map();
  for (const dir of dirs) await snapshotInto(dir, entries);
  return entries;
}

async function snapshotInto(path: string, entries: Snapshot): Promise<void> {
  let stats;
  try {
    stats = await lstat(path);
  } catch {
    entries.set(path, "missing");
    return;
  }
  if (stats.isSymbolicLink()) entries.set(path, `link -> ${await readlink(path)}`);
  else if (stats.isFile()) entries.set(path, `file ${await readFile(path, "latin1")}`);
  else if (stats.isDirectory()) {
    entries.set(path, "dir");
    for (const name of (await readdir(path)).sort()) await snapshotInto(join(path, name), entries);
  } else entries.set(path, `special mode ${stats.mode}`);
}

function diffSnapshots(before: Snapshot, after: Snapshot): string[] {
  const changes: string[] = [];
  for (const [path, was] of before) {
    const now = after.get(path);
    if (now === undefined) changes.push(`removed ${path}`);
    else if (now !== was) changes.push(`changed ${path}`);
  }
  for (const path of after.keys()) if (!before.has(path)) changes.push(`added ${path}`);
  return changes;
}
