/**
 * A disposable workspace with canaries beside it, for tests and properties that must prove nothing
 * escaped.
 *
 * Layout, under one fresh temp directory `base` (its real path, so a symlinked /tmp cannot confuse a
 * comparison), with the workspace's parent `GUARD_DEPTH` directories further down:
 *   base/g/g/g/g/ws/                the workspace root handed to the tools (`rootName`, default `ws`)
 *   base/g/g/g/g/outside/           a canary directory with a secret file and a subdirectory
 *   base/g/g/g/g/ws-other/, WS/, …  the root's twins (root-twins.ts: similar prefixes, letter case,
 *                                   normalization, a lossily decoded byte), each holding a secret file
 *   base/g/g/g/g/scratch/           the caller's own moving parts (a TOCTOU attacker parks here); not
 *                                   a canary, so nothing is ever expected to land in it by accident
 * The guard directories exist so that a path with at most `GUARD_DEPTH` parent steps beyond the
 * workspace's parent, even opened raw by a broken implementation under audit, still lands inside
 * `base`, where the canary check sees it.
 *
 * Promises: `outsideChanges()` lists every difference (added, removed, changed file content, symlink
 * target or type) anywhere under `base` except inside the workspace and `scratch`, since creation,
 * each with what stands at that path now; names are compared as bytes, so a twin whose name no JS
 * string spells is watched too. `canaryChanges()` is the same list as one line per change
 * (`added PATH`, `removed PATH`, `changed PATH`); `SECRET` marks
 * every canary file so a read that returns it is detectable; `dispose()` removes the whole tree, links
 * included, without following them. `reset()` makes the sandbox as new again when it can prove it
 * is (canaries unchanged, root still a real directory): it empties the workspace and `scratch`, and
 * answers false, touching nothing, when it cannot, so the caller disposes the sandbox instead.
 * Does not promise: to notice writes outside `base`. Generators keep every path and link target they
 * produce within `GUARD_DEPTH` parent steps (see audit/arbitraries/), which is what keeps them inside.
 */
import { accessSync, constants } from "node:fs";
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { type RootTwin, rootTwins } from "./root-twins.js";

export { SIMILAR_PREFIX_SUFFIXES } from "./root-twins.js";

export const SECRET = "CANARY-SECRET-7f3a";

/** The file every canary directory holds, and the subdirectory of the outside canary. */
export const CANARY_FILE = "secret.txt";
export const CANARY_DIR = "dir";

/** Parent steps above the workspace's parent that still land inside the sandbox. */
export const GUARD_DEPTH = 4;

/**
 * Where the audit's sandboxes go: `$TMPDIR` when the user set it, else /dev/shm when it is a writable
 * tmpfs (every case creates and removes a tree; in memory that costs a fraction of a disk's
 * metadata writes), else the OS temp directory.
 */
export function auditTempDir(): string {
  if (process.env.TMPDIR === undefined && process.platform === "linux") {
    try {
      accessSync(SHARED_MEMORY, constants.W_OK);
      return SHARED_MEMORY;
    } catch {
      // No tmpfs here: the OS temp directory below.
    }
  }
  return tmpdir();
}

const SHARED_MEMORY = "/dev/shm";

export interface SandboxOptions {
  /** The workspace's own name, whose twins become canaries beside it (default `ws`). */
  rootName?: string;
  /** Where `base` is created (default the OS temp directory). */
  parent?: string;
}

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
  /** The root's twins that a string can name, in `rootTwins` order: `sibling0`, `sibling1`, … */
  readonly siblings: readonly string[];
  /** Absolute paths of the twins whose names no JS string spells (the lossy byte). */
  readonly rawSiblings: readonly Buffer[];
  readonly scratch: string;
  outsideChanges(): Promise<OutsideChange[]>;
  canaryChanges(): Promise<string[]>;
  /** `canariesChecked`: the caller has just found `canaryChanges()` empty, so reset need not walk them again. */
  reset(options?: { canariesChecked?: boolean }): Promise<boolean>;
  dispose(): Promise<void>;
}

export async function createSandbox(prefix = "workspace-gates-", options: SandboxOptions = {}): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(join(options.parent ?? tmpdir(), prefix)));
  const parent = join(base, ...Array<string>(GUARD_DEPTH).fill("g"));
  const root = join(parent, options.rootName ?? "ws");
  const outside = join(parent, "outside");
  const scratch = join(parent, "scratch");
  const twins = rootTwins(options.rootName ?? "ws");
  const twinPath = ({ name }: RootTwin): string | Buffer => (typeof name === "string" ? join(parent, name) : Buffer.concat([Buffer.from(`${parent}/`), name]));
  const siblings = twins.map(twinPath).filter((path): path is string => typeof path === "string");
  const rawSiblings = twins.map(twinPath).filter((path): path is Buffer => typeof path !== "string");
  await mkdir(root, { recursive: true });
  await mkdir(scratch);
  await mkdir(join(outside, CANARY_DIR), { recursive: true });
  await writeFile(join(outside, CANARY_FILE), `${SECRET} outside\n`);
  await writeFile(join(outside, CANARY_DIR, CANARY_FILE), `${SECRET} outside/${CANARY_DIR}\n`);
  for (const sibling of [...siblings, ...rawSiblings]) {
    await mkdir(sibling);
    const file = typeof sibling === "string" ? join(sibling, CANARY_FILE) : Buffer.concat([sibling, Buffer.from(`/${CANARY_FILE}`)]);
    await writeFile(file, `${SECRET} ${sibling.toString()}\n`);
  }
  const unwatched = new Set([root, scratch].map(byteKey));
  const before = await snapshotOutside(base, unwatched);
  const outsideChanges = async () => diffSnapshots(before, await snapshotOutside(base, unwatched));
  const canaryChanges = async () => (await outsideChanges()).map(({ change, path }) => `${change} ${path}`);
  return {
    base,
    root,
    outside,
    siblings,
    rawSiblings,
    scratch,
    outsideChanges,
    canaryChanges,
    async reset({ canariesChecked = false } = {}) {
      try {
        if (!canariesChecked && (await canaryChanges()).length > 0) return false;
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

/** Each path's state, and a fingerprint that changes with the content, target or type, by path bytes. */
type Snapshot = Map<string, { path: string; state: EntryState; fingerprint: string }>;

/** A path's bytes as a map key: two names that decode to the same string stay apart. */
function byteKey(path: string | Buffer): string {
  return (typeof path === "string" ? Buffer.from(path) : path).toString("latin1");
}

/** A path for a reader: UTF-8 where it decodes, `\xFF` for each byte that does not. */
export function displayBytes(path: Buffer): string {
  const text = path.toString("utf8");
  if (Buffer.from(text).equals(path)) return text;
  let shown = "";
  for (let at = 0; at < path.length; ) {
    const rest = path.subarray(at);
    const length = [4, 3, 2, 1].find((size) => size <= rest.length && Buffer.from(rest.subarray(0, size).toString("utf8")).equals(rest.subarray(0, size)));
    if (length === undefined) {
      shown += `\\x${rest[0]?.toString(16).toUpperCase().padStart(2, "0")}`;
      at++;
    } else {
      shown += rest.subarray(0, length).toString("utf8");
      at += length;
    }
  }
  return shown;
}

async function snapshotOutside(base: string, unwatched: ReadonlySet<string>): Promise<Snapshot> {
  const entries: Snapshot = new Map();
  await snapshotInto(Buffer.from(base), unwatched, entries);
  return entries;
}

async function snapshotInto(path: Buffer, unwatched: ReadonlySet<string>, entries: Snapshot): Promise<void> {
  const key = byteKey(path);
  if (unwatched.has(key)) return;
  const shown = displayBytes(path);
  let stats;
  try {
    stats = await lstat(path);
  } catch {
    entries.set(key, { path: shown, state: { kind: "missing" }, fingerprint: "missing" });
    return;
  }
  if (stats.isSymbolicLink()) {
    const target = displayBytes(await readlink(path, { encoding: "buffer" }));
    entries.set(key, { path: shown, state: { kind: "symlink", target }, fingerprint: `link -> ${target}` });
  } else if (stats.isFile()) {
    const content = (await readFile(path)).toString("latin1");
    entries.set(key, { path: shown, state: { kind: "file", bytes: content.length }, fingerprint: `file ${content}` });
  } else if (stats.isDirectory()) {
    entries.set(key, { path: shown, state: { kind: "directory" }, fingerprint: "dir" });
    const names = (await readdir(path, { encoding: "buffer" })).sort(Buffer.compare);
    for (const name of names) await snapshotInto(Buffer.concat([path, Buffer.from("/"), name]), unwatched, entries);
  } else entries.set(key, { path: shown, state: { kind: "special", mode: stats.mode }, fingerprint: `special mode ${stats.mode}` });
}

function diffSnapshots(before: Snapshot, after: Snapshot): OutsideChange[] {
  const changes: OutsideChange[] = [];
  for (const [key, was] of before) {
    const now = after.get(key);
    if (now === undefined) changes.push({ change: "removed", path: was.path, now: { kind: "missing" } });
    else if (now.fingerprint !== was.fingerprint) changes.push({ change: "changed", path: was.path, now: now.state });
  }
  for (const [key, now] of after) if (!before.has(key)) changes.push({ change: "added", path: now.path, now: now.state });
  return changes;
}

/** A path in a sandbox, shown beside the workspace (`ws/docs/secret.txt`, `outside/dir`). */
export function displayPath(box: Sandbox, path: string): string {
  // Relative to the workspace's parent, where ws/, outside/ and the siblings sit side by side.
  const shown = relative(dirname(box.root), path);
  return shown === "" || shown.startsWith("..") ? path : shown;
}
